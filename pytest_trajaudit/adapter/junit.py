"""pytest's JUnit XML file, written as it is serialized instead of from one string.

pytest's ``LogXML.pytest_sessionfinish`` builds the whole document, serializes it with
``ET.tostring(..., encoding="unicode")`` into one string and writes that string. At the end of a large audit that
string is the largest thing the process ever holds beside its reports: an audit's test case carries its evidence
in ``<system-out>`` and an N/A its reason twice, about 430 characters per item, and a single character above U+00FF
anywhere makes the string two bytes per character. Serializing the string, keeping it and encoding it for the
file comes to about five times the document (measured: +70 MiB at the end of an audit of 48,800 items, the run's
peak).

:class:`StreamingJunit` (``trajaudit-junit-stream``, registered on the controller when auditing with
``--junitxml``; ``-p no:trajaudit-junit-stream`` turns it off) wraps that one hook call: pytest's own method still
builds every element and opens and writes the file, and its ``ET.tostring`` call serializes the document straight
into that open file (``ElementTree.write`` with the same arguments) and hands pytest an empty string to write.
The file's bytes are the ones pytest writes itself (tested). When pytest's method does not go the way this expects
(another file, another serializer call), nothing changes: the call falls through to the real ``ET.tostring``.
"""

from __future__ import annotations

import builtins
import os
import sys
from typing import Any

import pytest

from . import _compat


class _StreamingET:
    """``xml.etree.ElementTree`` for the duration of the JUnit write: every name is the module's own but
    ``tostring``, which serializes into :attr:`handle` (the JUnit file pytest has open) when it has one."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.handle: Any = None
        self.streamed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def tostring(self, element: Any, encoding: Any = None, method: Any = None, **kw: Any) -> Any:
        handle = self.handle
        if handle is None or self.streamed or encoding != "unicode" or method is not None or kw:
            return self._real.tostring(element, encoding=encoding, method=method, **kw)
        # what tostring(element, encoding="unicode") does, with the file in place of its StringIO
        self._real.ElementTree(element).write(handle, encoding="unicode")
        self.streamed = True
        return ""


class StreamingJunit:
    """Around ``pytest_sessionfinish``: pytest's JUnit writer serializes into its file (see the module's text)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Any:
        xml = self.config.stash.get(_compat.junit_xml_key(), None)
        module: Any = sys.modules.get("_pytest.junitxml")
        if xml is None or module is None or type(xml).__name__ != "LogXML" or "open" in vars(module):
            return (yield)
        real_et = module.ET
        shim = _StreamingET(real_et)
        target = os.path.abspath(xml.logfile)

        def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            handle = builtins.open(file, mode, *args, **kwargs)  # noqa: SIM115  # pytest's own ``with`` closes it
            if mode == "w" and shim.handle is None and os.path.abspath(os.fspath(file)) == target \
                    and kwargs.get("encoding") == "utf-8":
                shim.handle = handle
            return handle

        module.ET = shim
        module.open = open_  # a module global shadows the builtin for this call only
        try:
            return (yield)
        finally:
            module.ET = real_et
            del module.open
