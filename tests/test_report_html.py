"""``report.html`` (report/html.py, report/timeline.py): one self-contained page, hostile text inert, checked in a
real browser (headless Chromium from the system's ``chromium`` package, driven by Playwright; ``.ci/run`` installs
both and sets ``TRAJAUDIT_REQUIRE_BROWSER=1`` so that a missing browser fails there instead of skipping)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from pytest_trajaudit.model import Event
from pytest_trajaudit.report import html as report_html
from pytest_trajaudit.report.timeline import MAX_ROWS, timeline
from tests.jobfactory import make_job

REPO = Path(__file__).resolve().parents[1]

# What an agent could write into its trajectory to attack a reviewer's browser: each payload sets a global flag
# if it ever runs.
PAYLOADS = [
    "</script><script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 2">',
    "javascript:window.__pwned = 3",
    '"><svg onload="window.__pwned = 4">',
    "<!--<script>window.__pwned = 5</script>-->",
    "\u2028</SCRIPT ><script>window.__pwned = 6</script>",
]


def hostile_lines() -> list[dict]:
    """A BenchFlow ACP trajectory (the corpus' shape) whose agent reads the answer key through a command that
    carries every payload, so that the payloads reach the evidence of a FAIL and the cited timeline rows."""
    cmd = "cat /oracle/expected_answer.json # " + " ".join(PAYLOADS)
    return [
        {"type": "user_message", "text": "Find the answer. " + PAYLOADS[1]},
        {"type": "tool_call", "tool_call_id": "t1", "kind": "execute", "title": cmd, "status": "completed",
         "rawInput": {"command": cmd},
         "content": [{"type": "content", "content": {"type": "text", "text": '{"answer": 42} ' + PAYLOADS[0]}}]},
        {"type": "agent_message", "text": "Done. " + PAYLOADS[2]},
    ]


def run_report(pytester: pytest.Pytester, runs: Path, out: Path, *args: str) -> Path:
    pytester.runpytest("-p", "no:cacheprovider", f"--trajaudit={runs}", f"--trajaudit-report={out}", *args)
    page = out / "report.html"
    assert page.is_file()
    return page


def embedded(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="trajaudit-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


# --- the page as text -----------------------------------------------------------------------------------------------

def test_examples_page_is_self_contained_and_lists_every_job(pytester: pytest.Pytester, tmp_path: Path) -> None:
    page = run_report(pytester, REPO / "examples" / "runs", tmp_path / "out",
                      f"--trajaudit-tasks={REPO / 'examples' / 'tasks'}").read_text()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    data = embedded(page)
    assert [j["job"] for j in data["jobs"]] == [j["job"] for j in summary["jobs"]]
    assert f'id="pr-verdict">{summary["pr_verdict"]["verdict"]}<' in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page), "no network resource"
    assert "<link" not in page
    cheat = next(j for j in data["jobs"] if j["verdict"] == "INVALID")
    p1 = next(f for f in cheat["findings"] if f["code"] == "P1")
    assert p1["status"] == "FAIL" and p1["events"]
    cited = {r["i"] for r in cheat["timeline"]["rows"] if r.get("cited")}
    assert set(p1["events"]) <= cited


def test_csp_allows_exactly_the_inline_style_and_script() -> None:
    """The Content-Security-Policy names the SHA-256 of the page's own style and script and nothing else: no
    other inline script, handler attribute or network fetch can run."""
    page = report_html.render({"pr_verdict": {"verdict": "APPROVE", "reasons": []}, "jobs": []})
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(script) == 1

    def digest(text: str) -> str:
        return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"style-src '{digest(style)}'" in csp and f"script-src '{digest(script[0])}'" in csp
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp


def test_hostile_strings_stay_inside_the_data_element(tmp_path: Path) -> None:
    jobs = [{"job": p, "verdict": "INVALID", "config": p, "trial": p, "reward": 1.0, "reasons": [p],
             "statuses": {"P1": "FAIL"},
             "detail": {"meta": {"timeline": {"n_events": 1, "rows": [{"i": 0, "type": "tool_call", "text": p,
                                                                         "cited": True}]}},
                        "records": {"P1": {"status": "FAIL", "evidence": p, "events": [0]}}}} for p in PAYLOADS]
    summary = {"pr_verdict": {"verdict": "REJECT", "reasons": PAYLOADS}, "jobs": jobs,
               "configs": {p: {"verdicts": {"INVALID": 1}} for p in PAYLOADS},
               "not_audited": [{"job": p, "path": p, "reason": p} for p in PAYLOADS]}
    page = report_html.render(summary)
    data = page[page.index('id="trajaudit-data">'):]
    data = data[:data.index("</script>")]
    for p in PAYLOADS:
        if "<" in p:
            assert p not in page  # every occurrence escaped, in the markup and in the data
    assert "<" not in data[len('id="trajaudit-data">'):]
    assert not re.search(r"""(?:href|src|action)\s*=\s*["']?\s*javascript:""", page, re.I)  # text, never a URL
    assert [j["job"] for j in embedded(page)["jobs"]] == PAYLOADS


# --- the timeline window ---------------------------------------------------------------------------------------------

def events(n: int) -> list[Event]:
    return [Event(i, "tool_call", kind="execute", tool="Bash", command=f"echo {i}") for i in range(n)]


def test_timeline_keeps_head_tail_and_cited_events_with_context() -> None:
    tl = timeline(events(100), {50})
    kept = [r["i"] for r in tl["rows"]]
    assert kept == [0, 1, 2, 48, 49, 50, 51, 52, 98, 99] and tl["n_events"] == 100
    assert [r["i"] for r in tl["rows"] if r.get("cited")] == [50]


def test_timeline_is_bounded_and_never_drops_a_cited_event_for_context() -> None:
    cited = set(range(0, 1000, 7))
    tl = timeline(events(1000), cited)
    assert len(tl["rows"]) == MAX_ROWS
    assert all(r.get("cited") for r in tl["rows"])  # more cited events than rows: cited ones only


def test_timeline_text_is_one_escaped_redacted_line() -> None:
    e = Event(3, "tool_call", tool="Bash", command="export KEY=sk-ant-" + "a" * 40 + "\n\x1b[31mred\x1b[0m " + "x" * 500)
    (r,) = timeline([e], {3})["rows"]
    assert "sk-ant-aaaa" not in r["text"] and "\x1b" not in r["text"] and "\n" not in r["text"]
    assert len(r["text"]) <= 160


# --- in a real browser ------------------------------------------------------------------------------------------------

def _chromium() -> str | None:
    return os.environ.get("TRAJAUDIT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        exe = None
    if exe is None:
        if os.environ.get("TRAJAUDIT_REQUIRE_BROWSER") == "1":
            pytest.fail("TRAJAUDIT_REQUIRE_BROWSER=1 but no chromium executable or no playwright")
        pytest.skip("needs the system's chromium and the playwright package (.ci/run installs both)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        yield b
        b.close()


def open_page(browser, path: Path):  # noqa: ANN201 - a playwright Page
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, problems


def test_browser_examples_filter_and_finding_links(browser, pytester: pytest.Pytester, tmp_path: Path) -> None:
    path = run_report(pytester, REPO / "examples" / "runs", tmp_path / "out",
                      f"--trajaudit-tasks={REPO / 'examples' / 'tasks'}")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    page, problems = open_page(browser, path)
    ids = page.locator("tr.job td.id").all_inner_texts()
    assert sorted(ids) == sorted(j["job"] for j in summary["jobs"])
    assert page.locator("#pr-verdict").inner_text() == summary["pr_verdict"]["verdict"]

    page.select_option("#f-verdict", "INVALID")
    assert page.locator("tr.job").count() == 1
    page.select_option("#f-verdict", "")
    page.select_option("#f-code", "P1")
    page.select_option("#f-status", "FAIL")
    assert page.locator("tr.job").count() == 1

    page.locator("tr.job").first.click()
    link = page.locator(".finding[data-code='P1'] a.evlink").first
    event = link.get_attribute("data-event")
    link.click()
    active = page.locator("table.timeline tr.active")
    assert active.count() == 1 and active.get_attribute("id").endswith(f"-{event}")
    assert "/oracle/expected_answer.json" in active.inner_text()
    assert problems == []
    page.close()


def test_browser_hostile_trajectory_runs_no_script(browser, pytester: pytest.Pytester, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    make_job(runs / "benchflow", "hostile__1", lines=hostile_lines())
    path = run_report(pytester, runs, tmp_path / "out")
    page, problems = open_page(browser, path)
    for row in page.locator("tr.job").all():
        row.click()
    page.locator("a.evlink").first.click()
    assert page.evaluate("window.__pwned") is None
    text = page.locator("body").inner_text()
    assert "/oracle/expected_answer.json" in text and "onerror" in text  # shown as text, not run
    assert page.locator("body img, body iframe, body svg[onload]").count() == 0
    assert problems == []
    page.close()
