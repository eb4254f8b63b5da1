"""What pytest-html's report shows of each audit item.

pytest-html files a WARN under "XFailed" with "No log output captured." (a WARN's report carries its evidence in
``wasxfail``, not in a traceback) and an N/A under "Skipped" with its ``(path, line, reason)`` tuple as text. These
hooks, registered only when pytest-html is loaded (it defines the hook specifications; without it pluggy would
reject them), add an ``Audit`` column with the item's own status (PASS, FAIL, WARN, N/A, ERROR) and put
``<STATUS> <code>: <evidence>`` at the top of a WARN's or an N/A's log (a FAIL's log already is its one-line
report with the evidence). Rows of other tests get
an empty cell so the table stays rectangular.

The evidence comes from the audited tree: it is redacted, made printable and bounded (``ci.item_text``), then
HTML-escaped, as pytest-html escapes its own log text.
"""

from __future__ import annotations

from html import escape
from typing import Any

from .ci import item_text

NO_LOG = "No log output captured."


def _record(report: Any) -> dict[str, Any] | None:
    rec = getattr(report, "trajaudit", None)
    return rec if isinstance(rec, dict) else None


class HtmlHooks:
    """pytest-html's results-table hooks (``pytest_html.hooks``)."""

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.insert(1, '<th class="sortable" data-column-type="audit">Audit</th>')

    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        rec = _record(report)
        status = str(rec.get("status") or "ERROR") if rec is not None else ""
        cells.insert(1, f'<td class="col-audit">{escape(status)}</td>')

    def pytest_html_results_table_html(self, report: Any, data: list[str]) -> None:
        rec = _record(report)
        if rec is None:
            return
        status = str(rec.get("status") or "ERROR")
        if status == "PASS" or (status in ("FAIL", "ERROR") and NO_LOG not in data):
            return  # a FAIL's or an error's own report already is its one line of evidence
        line = escape(item_text(status, str(rec.get("code", "")), str(rec.get("evidence") or rec.get("error") or "")))
        # the log pytest-html built: keep it (a FAIL's one-line report, captured sections) except its placeholder
        # and an N/A's skip tuple, which the line above says in full
        kept = [d for d in data if d != NO_LOG and not (status == "N/A" and d.startswith("("))]
        data[:] = [line + "\n", *kept]
