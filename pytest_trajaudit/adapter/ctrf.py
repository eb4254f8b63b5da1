"""pytest-json-ctrf's report, encoded once by orjson instead of twice.

pytest-json-ctrf writes its report at the session's end with ``json.dump(report, file, default=str, indent=4)``:
with an indent the standard library encodes in Python, one small write per token (0.2 s for 12,200 tests, on the
controller's serial path). The plugin then reads that file back at unconfigure to add the verdicts
(:func:`.rollup.enrich_ctrf`) and writes it again with orjson.

:class:`FastCtrf` (``trajaudit-ctrf-fast``, registered on the controller when auditing with ``--ctrf``;
``-p no:trajaudit-ctrf-fast`` turns it off) wraps that one hook call of an audit that has jobs to enrich: the
report object's ``save`` encodes the same document with orjson, with the standard library's conversions (a value
JSON lacks becomes ``str(value)``; tuples become lists; keys that are not strings become strings), writes it, and
keeps the document, so the enrichment starts from it instead of re-reading the file. A document orjson refuses (a
lone surrogate, an integer past 64 bits) goes through pytest-json-ctrf's own ``save``. The enriched file is the
same as without this shortcut (tested)."""

from __future__ import annotations

import os
from typing import Any

import orjson
import pytest

_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


class FastCtrf:
    """Around ``pytest_sessionfinish``: pytest-json-ctrf's report is encoded by orjson (see the module's text)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.doc: dict[str, Any] | None = None  # the report as written, for the enrichment
        self.path: str | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Any:
        from .rollup import ROLLUP_KEY

        plugin: Any = getattr(self.config, "_ctrf", None)
        report: Any = getattr(plugin, "_report", None)
        roll = self.config.stash.get(ROLLUP_KEY, None)
        if report is None or roll is None or not roll.rollup.jobs or "save" in vars(report) \
                or not callable(getattr(report, "get_report", None)) or not callable(getattr(report, "save", None)):
            return (yield)
        own_save = report.save

        def save(report_file: str) -> None:
            try:
                doc = report.get_report()
                data = orjson.dumps(doc, default=str, option=_OPTS)
            except (TypeError, orjson.JSONEncodeError):  # what orjson refuses: pytest-json-ctrf's own encoding
                own_save(report_file)
                return
            dirname = os.path.dirname(report_file)
            if dirname:
                os.makedirs(dirname, exist_ok=True)
            with open(report_file, "wb") as fh:
                fh.write(data)
            self.doc = orjson.loads(data)  # (plain JSON values, as the file holds them)
            self.path = os.path.abspath(report_file)

        report.save = save
        try:
            return (yield)
        finally:
            del report.save

    def take(self, path: str) -> dict[str, Any] | None:
        """The document written to ``path`` (once), or None when this run did not write it."""
        doc, self.doc = self.doc, None
        return doc if doc is not None and self.path == os.path.abspath(path) else None
