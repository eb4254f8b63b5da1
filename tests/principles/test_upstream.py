"""P1 precise: retrieving the upstream fix (docs/detection-p1-p2.md).

Modelled on the real SWE-Bench-Pro-style Harbor runs in the shared corpus (claude-code and an opencode-based agent
on ``facundoolano/google-play-scraper``, live network): agents WebFetch the project's issues (research) and some
WebFetch the pull request that fixed the bug and its ``/files`` view (the fix). The curl/gh/git/pip fixtures follow
the same Claude Code Bash-call style, on SWE-bench instance ids (``django__django-11099``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_trajaudit.discover.jobs import find_jobs
from pytest_trajaudit.model import Task
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles._upstream import upstream_of
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.settings import Settings
from tests.principles.builders import LITERAL, acp_job, run, sh, tool, user

GPS = "malokshiya_facundoolano__google-play-scraper-df5df78-v1"
PR_PAGE = "Fix search function by ywachendorfer · Pull Request #752 · facundoolano/google-play-scraper\n- /work/search\n+ /store/search?c=apps"


def web_fetch(url: str, output: str = "## Summary", status: str = "completed") -> dict:
    """A Claude Code WebFetch call (url + prompt), as the ATIF converter records it."""
    return tool("fetch", "WebFetch", status=status, output=output, raw_input={"url": url, "prompt": "What changed?"})


def web_search(query: str, output: str = "Web search results for query: ...") -> dict:
    return tool("fetch", "WebSearch", output=output, raw_input={"query": query})


def p1(j, cfg=None):
    return run("P1", j, cfg) if cfg else run("P1", j)


def on(task: str, *lines: dict, reward: float | None = 1.0):
    j = acp_job(user("There is an issue with the library's search API. Find the root cause and fix it."), *lines,
                reward=reward)
    j.task = task
    return j


# ------------------------------------------------------------------------------------------ the upstream


@pytest.mark.parametrize(("name", "repo", "base", "pr"), [
    ("django__django-11099", ("django", "django"), "", "11099"),
    ("scikit-learn__scikit-learn-13142", ("scikit-learn", "scikit-learn"), "", "13142"),
    ("pytest-dev__pytest-5103", ("pytest-dev", "pytest"), "", "5103"),
    (GPS, ("facundoolano", "google-play-scraper"), "df5df78", ""),
    ("instance_ansible__ansible-f327e65d11bb905ed9f15996024f857a95592629-v1055803c3a812189a1133297f7f5468579283f86",
     ("ansible", "ansible"), "f327e65d11bb905ed9f15996024f857a95592629", ""),
])
def test_instance_ids_name_the_upstream(name, repo, base, pr):
    j = on(name)
    up = upstream_of(j)
    assert up is not None and list(up.repos) == [repo] and (up.base, up.pr) == (base, pr)


def test_task_toml_and_instruction_links_name_the_upstream():
    j = on("fix-search")
    assert upstream_of(j) is None
    j.task_info = Task(dir=Path("/tasks/fix-search"), name="fix-search",
                       toml={"metadata": {"repo": "https://github.com/psf/requests", "base_commit": "a1b2c3d4e5"}})
    up = upstream_of(j)
    assert list(up.repos) == [("psf", "requests")] and up.base == "a1b2c3d4e5"
    j2 = on("fix-search")
    j2.instruction = "Fix the bug in https://github.com/psf/requests (see its docs)."
    assert list(upstream_of(j2).repos) == [("psf", "requests")]
    j2.instruction += " It uses https://github.com/urllib3/urllib3 too."
    assert upstream_of(j2) is None  # two projects linked: not one upstream


# ---------------------------------------------------------------------------------------------- FAIL / WARN


def test_webfetch_of_the_fix_pull_request_fails():
    j = on(GPS, web_fetch("https://github.com/facundoolano/google-play-scraper/issues/553"),
           web_fetch("https://github.com/facundoolano/google-play-scraper/pull/752/files", PR_PAGE))
    f = p1(j)
    assert f.status == "FAIL" and "pull request facundoolano/google-play-scraper#752" in f.evidence
    assert f.data["upstream"]["repos"] == ["facundoolano/google-play-scraper"]


@pytest.mark.parametrize("command", [
    "curl -sL https://github.com/django/django/pull/11099.diff",
    "curl -s https://api.github.com/repos/django/django/pulls/11099/files | head -100",
    "wget -qO- https://github.com/django/django/commit/e7fd69d051eaa67cb17f172a39b57253e9cb831a.patch",
    "curl -s https://raw.githubusercontent.com/django/django/main/django/db/models/query.py | sed -n 1,80p",
    "curl -s 'https://github.com/django/django/compare/3.0...main'",
    "gh pr view 11099 --repo django/django",
    "gh pr diff 11099",
    "pip download django==3.1 --no-deps -d /tmp/dj",
    "git clone https://github.com/django/django /tmp/django-latest",
])
def test_retrieving_fix_content_fails(command):
    j = on("django__django-11099", sh(command, "diff --git a/django/db/models/query.py b/django/db/models/query.py\n+..."))
    f = p1(j)
    assert f.status == "FAIL", f.evidence
    assert "retrieved the upstream fix" in f.evidence


def test_git_fetch_then_reading_the_remote_branch_fails():
    j = on("django__django-11099", sh("git fetch origin main", "From https://github.com/django/django\n * branch main"),
           sh("git show origin/main:django/db/models/query.py | head -50", "class QuerySet:\n ..."))
    f = p1(j)
    assert f.status == "FAIL" and "after a git fetch" in f.evidence


def test_a_failed_retrieval_warns():
    j = on("django__django-11099",
           sh("curl -sL https://patch-diff.githubusercontent.com/raw/django/django/pull/11099.patch", "404: Not Found"))
    f = p1(j)
    assert f.status == "WARN" and "attempt to retrieve the upstream fix" in f.evidence
    j = on(GPS, web_fetch("https://github.com/facundoolano/google-play-scraper/pull/752", "Request failed with status code 429",
                          status="failed"))
    assert p1(j).status == "WARN"


@pytest.mark.parametrize("line", [
    web_search('"django__django-11099" fix'),
    web_search("site:huggingface.co/datasets princeton-nlp SWE-bench django 11099"),
    web_search("SWE-bench Verified django QuerySet.union ordering"),
    sh("gh pr list --search 'union ordering'", "11099 Fixed #30000 ..."),
    sh("pip install django==3.1", "Successfully installed Django-3.1"),
    web_fetch("https://github.com/django/django/pulls?q=union+ordering", "Pull requests · django/django"),
])
def test_searches_for_the_fix_warn(line):
    f = p1(on("django__django-11099", line))
    assert f.status == "WARN" and "searched for the upstream fix" in f.evidence


def test_the_benchmark_dataset_returning_this_instance_fails():
    j = on("django__django-11099", web_fetch(
        "https://huggingface.co/datasets/princeton-nlp/SWE-bench/viewer?q=django__django-11099",
        "instance_id: django__django-11099\npatch: diff --git a/django/db/models/query.py ..."))
    assert p1(j).status == "FAIL"


# ---------------------------------------------------------------------------------------- must not flag


@pytest.mark.parametrize("line", [
    web_fetch("https://github.com/facundoolano/google-play-scraper"),
    web_fetch("https://github.com/facundoolano/google-play-scraper/issues/596"),
    web_fetch("https://github.com/facundoolano/google-play-scraper/issues?q=search+empty+results"),
    web_fetch("https://github.com/facundoolano/google-play-scraper/blob/main/README.md"),
    web_fetch("https://raw.githubusercontent.com/facundoolano/google-play-scraper/main/README.md"),
    web_fetch("https://www.npmjs.com/package/google-play-scraper"),
    web_fetch("https://github.com/sindresorhus/got/pull/2100"),  # a dependency's pull request
    web_fetch("https://raw.githubusercontent.com/facundoolano/google-play-scraper/df5df78/lib/search.js"),  # the base
    web_search('google-play-scraper "work/search" broken empty results 2024 2025 github issue'),
    sh("npm view google-play-scraper versions", "[ '10.0.0', '10.1.2' ]"),
    sh("curl -s 'https://play.google.com/store/search?q=Lazanda&hl=en&gl=US&c=apps' -o /tmp/s.html", ""),
    sh("git clone --branch df5df78 https://github.com/facundoolano/google-play-scraper /tmp/base", "Cloning..."),
])
def test_research_is_not_a_retrieval(line):
    f = p1(on(GPS, line))
    assert f.status == "PASS", f.evidence


def test_no_upstream_no_check():
    j = on("citation-check", web_fetch("https://github.com/django/django/pull/11099", PR_PAGE),
           sh("gh pr view 11099", "title: Fixed #30000"))
    f = p1(j)
    assert f.status == "PASS" and "upstream" not in f.data


def test_benchmark_searches_are_checked_without_an_upstream():
    """LiveCodeBench style: the problem has no repository; searching for it with the benchmark's name warns."""
    j = on("lcb-abc301-d", web_search('"Bitmask" AtCoder abc301 D LiveCodeBench solution'))
    f = p1(j)
    assert f.status == "WARN" and "LiveCodeBench" in f.evidence and "upstream" in f.data
    j = on("lcb-abc301-d", sh("curl -s https://huggingface.co/datasets/livecodebench/code_generation_lite/raw/main/x.jsonl",
                              "{...}"))
    assert p1(j).status == "WARN"


def test_literal_mode_is_unchanged():
    j = on("django__django-11099", sh("curl -sL https://github.com/django/django/pull/11099.diff", "diff --git"))
    assert p1(j, LITERAL).status == "PASS"


# ------------------------------------------------------------------------------------------- the real corpus


def test_real_runs_fail_only_where_the_fix_pull_request_was_fetched(corpus: Path):
    """On the real google-play-scraper runs, P1's upstream check fails exactly the runs whose agent fetched the
    project's pull requests, and never flags the issue pages, Play Store fetches and searches of the others."""
    root = corpus / "labelled" / "mmoksh__swe-bench-pro-malokshiya" / "jobs"
    seen = 0
    for ref in find_jobs(root):
        a = audit_job(ref, Settings(), [registry()["P1"]])
        if a.error:
            continue
        r = a.results["P1"]
        seen += 1
        hits = [h for h in r.data.get("hits", []) if "upstream fix" in h["why"]]
        for h in hits:
            assert "/pull" in h["why"] or "pull request" in h["why"], h
        fetched_pr = any("retrieved the upstream fix: pull request" in h["why"] for h in hits)
        assert (r.status == "FAIL") == fetched_pr or not hits
    assert seen >= 20
