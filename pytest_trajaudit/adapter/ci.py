"""What CI consumers see of each audit item beyond pytest's own outcome.

- JUnit XML: a testcase may not carry ``<properties>`` in either JUnit family pytest writes (the schema pytest
  validates its own output against allows them on the testsuite only), so an item's status and evidence go into
  its ``<system-out>``; the skipped message of a WARN starts with ``WARN:`` and of an N/A with ``N/A:`` (the item's
  reason, see ``nodes._outcome``).
- CTRF: a WARN is status ``other`` (``rawStatus`` ``xfailed``), an N/A stays ``skipped``; the summary counts are
  recomputed from the tests so the document stays valid against the CTRF schema.
- GitHub Actions (``GITHUB_ACTIONS=true``): one ``::error`` line per FAIL or unusable job and one ``::warning``
  line per WARN, pointing at the job's trajectory file, so the findings appear as annotations on the run.

Everything written here comes from the audited tree: it is redacted and made printable first.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..records import ItemOutcome
from ..scan.redact import ShortMemo, clean, printable

EVIDENCE_MAX = 2000
# XML 1.0 admits tab, newline and carriage return among the C0 controls, nothing of the surrogates and U+FFFE/FFFF;
# printable() already escapes every control character, this is the last line of defence for the XML writer
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# The same short lines come back for every job (a principle's stock PASS or N/A evidence): the controller makes
# each once.
_TEXTS = ShortMemo(4096)
_SYSTEM_OUT = ShortMemo(4096)  # the same, as JUnit's system-out line


def item_text(status: str, code: str, evidence: str) -> str:
    """One line for a human: ``<STATUS> <code>: <evidence>``, redacted, printable and bounded."""
    key = (status, code, evidence)
    short = len(evidence or "") <= ShortMemo.MAX_CHARS
    if short:
        done = _TEXTS.get(key)
        if done is not None:
            return done
    text = f"{status} {code}: {clean(evidence or '')}"
    if len(text) > EVIDENCE_MAX:
        text = text[: EVIDENCE_MAX - 1] + "…"
    text = _NOT_XML.sub("?", text)
    return _TEXTS.keep(key, text) if short else text


def junit_system_out(xml: Any, report: Any, rec: dict[str, Any]) -> None:
    """Give the report's testcase a ``<system-out>`` with the item's status and evidence (pytest's LogXML)."""
    import xml.etree.ElementTree as ET

    status = rec.get("status") or "ERROR"
    code, evidence = rec.get("code", ""), rec.get("evidence") or rec.get("error") or ""
    node = ET.Element("system-out")
    # pytest keeps every testcase element until it writes the file: one string per distinct short line, shared
    key = (status, code, evidence)
    text = _SYSTEM_OUT.get(key) if len(evidence) <= ShortMemo.MAX_CHARS else None
    if text is None:
        text = "trajaudit: " + item_text(status, code, evidence)
        if len(evidence) <= ShortMemo.MAX_CHARS:
            _SYSTEM_OUT.keep(key, text)
    node.text = text
    from ._compat import junit_node

    junit_node(xml, report).append(node)


def ctrf_statuses(doc: dict[str, Any], items: dict[str, ItemOutcome]) -> None:
    """WARN items become status ``other``; the summary's counts follow the tests' statuses."""
    results = doc.get("results")
    if not isinstance(results, dict) or not isinstance(results.get("tests"), list):
        return
    tests = results["tests"]
    for t in tests:
        info = items.get(t.get("name")) if isinstance(t, dict) else None  # type: ignore[arg-type]  # a CTRF name: a node id
        if info and info.get("status") == "WARN" and t.get("status") == "skipped":
            t["status"] = "other"
            t["rawStatus"] = "xfailed"
    summary = results.get("summary")
    if isinstance(summary, dict):
        for key in ("passed", "failed", "skipped", "pending", "other"):
            summary[key] = sum(1 for t in tests if isinstance(t, dict) and t.get("status") == key)
        summary["tests"] = len(tests)


def _gh_escape(text: str, prop: bool = False) -> str:
    """GitHub's workflow-command escaping: ``%``, CR and LF always; ``:`` and ``,`` in a property value."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github_annotations(items: dict[str, ItemOutcome], files: dict[str, str], cwd: str) -> list[str]:
    """``::error``/``::warning`` workflow commands for FAIL/ERROR and WARN items, in node-id order.

    ``files`` maps a job id to its trajectory file (absolute); a file under ``cwd`` (the workspace) is given
    relative to it, as GitHub resolves annotation paths against the repository."""
    lines = []
    for nodeid in sorted(items):
        info = items[nodeid]
        status = info.get("status")
        level = {"FAIL": "error", "ERROR": "error", "WARN": "warning"}.get(status or "")
        if level is None:
            continue
        job = str(info.get("job") or "")
        path = files.get(job) or ""
        if path and os.path.isabs(path):
            rel = os.path.relpath(path, cwd)
            path = rel if not rel.startswith("..") else path
        props = f"title={_gh_escape(printable(job + '::' + str(info.get('code', ''))), prop=True)}"
        if path:
            props = f"file={_gh_escape(printable(path), prop=True)}," + props
        msg = item_text(status or "", str(info.get("code", "")), str(info.get("evidence") or ""))
        lines.append(f"::{level} {props}::{_gh_escape(msg)}")
    return lines
