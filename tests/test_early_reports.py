"""A job's audit JSON is written during the run, once the job's items have reported (the next job's report came from
the same process), and the session's end writes it again only when something it was written from changed: the
report directory is then exactly what writing everything at the end gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_trajaudit.report.summary import Rollup

from .jobfactory import make_job

KEYS = {"P1": "anti_cheat_read", "P2": "anti_cheat_write"}


def rec(job: str, code: str, status: str, config: str = "agent") -> dict[str, Any]:
    return {"job": job, "code": code, "status": status, "evidence": f"{code} on {job}", "data": {}, "tier": "C0",
            "family": "anticheat", "affects": True, "meta": {"task": "t", "trial": job, "config": config}}


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def both(records: list[dict[str, Any]], tmp_path: Path, early_after: dict[int, str],
         before_write: Any = None) -> tuple[dict[str, bytes], dict[str, bytes], Rollup]:
    """The report directory written with early writes (``early_after``: after record i, write that job early) and
    the one written all at the end, from the same records."""
    out = {}
    for name, early in (("early", True), ("end", False)):
        r = Rollup()
        if early:
            r.early = {}
        for i, x in enumerate(records):
            r.add(dict(x))
            if early and i in early_after:
                r.write_early(tmp_path / name, KEYS, early_after[i])
        if before_write is not None:
            before_write(r)
        r.write(tmp_path / name, KEYS)
        out[name] = r
    return files(tmp_path / "early"), files(tmp_path / "end"), out["early"]


def test_a_job_written_early_and_unchanged_is_not_written_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    records = [rec("runs/a", "P1", "PASS"), rec("runs/a", "P2", "PASS"), rec("runs/b", "P1", "FAIL")]
    r = Rollup()
    r.early = {}
    for x in records[:2]:
        r.add(dict(x))
    out = tmp_path / "one"
    r.write_early(out, KEYS, "runs/a")
    written = out / "jobs/runs/a/audit-agent.json"
    inode = written.stat().st_ino
    r.add(dict(records[2]))
    r.write(out, KEYS)
    assert written.stat().st_ino == inode  # (an atomic write replaces the file: a new inode)
    early, end, _ = both(records, tmp_path / "cmp", {1: "runs/a"})
    assert early == end == files(out)


def test_a_job_that_changed_after_its_early_write_is_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record that came later (an item that ran after the guess) and a principle that did not run (coverage,
    at the end) change the verdict: the file says what the end says."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    records = [rec("runs/a", "P1", "PASS"), rec("runs/b", "P1", "PASS"), rec("runs/a", "P2", "FAIL")]
    early, end, r = both(records, tmp_path, {1: "runs/a"})
    assert early == end
    assert b'"verdict": "INVALID"' in early["jobs/runs/a/audit-agent.json"]

    def incomplete(roll: Rollup) -> None:
        roll.jobs["runs/b"]["missing"] = {"P2": "deselected (-k)"}

    early, end, _ = both(records[:2], tmp_path / "cov", {1: "runs/a"}, incomplete)
    assert early == end and b'"verdict": "INCOMPLETE"' in early["jobs/runs/b/audit-agent.json"]


def test_a_file_written_early_where_the_end_puts_another_job_is_replaced_and_no_stale_file_is_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Case twins (``runs/a`` and ``runs/A``) share a path until both are known: alone, each gets its plain path;
    at the end the second in sorted order gets ``-2``. The early file at the wrong path is removed."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    records = [rec("runs/a", "P1", "PASS"), rec("runs/A", "P1", "FAIL"), rec("runs/b", "P1", "PASS")]
    early, end, r = both(records, tmp_path, {1: "runs/a", 2: "runs/A"})
    assert early == end
    assert sorted(k for k in end if k.startswith("jobs/")) == [
        "jobs/runs/A/audit-agent.json", "jobs/runs/a-2/audit-agent.json", "jobs/runs/b/audit-agent.json"]
    assert r._written == {k: v for k, v in r._written.items() if (tmp_path / "early" / k).is_file()}
    dirs = sorted(d.relative_to(tmp_path / "early").as_posix() for d in (tmp_path / "early").rglob("*") if d.is_dir())
    assert dirs == sorted(d.relative_to(tmp_path / "end").as_posix() for d in (tmp_path / "end").rglob("*")
                          if d.is_dir())  # (the early file's folder went with it)


def test_each_job_is_written_early_at_most_once(tmp_path: Path) -> None:
    r = Rollup()
    r.early = {}
    r.add(rec("runs/a", "P1", "PASS"))
    r.write_early(tmp_path, KEYS, "runs/a")
    r.add(rec("runs/a", "P2", "WARN"))
    inode = (tmp_path / "jobs/runs/a/audit-agent.json").stat().st_ino
    r.write_early(tmp_path, KEYS, "runs/a")  # a job whose items interleave with another's (--dist load)
    assert (tmp_path / "jobs/runs/a/audit-agent.json").stat().st_ino == inode


class Watch:
    """Which audit JSON files exist when each item finishes (on the controller under -n)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.seen: list[int] = []

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.seen.append(len(list(self.out.glob("jobs/**/audit-*.json"))))


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_run_writes_each_jobs_audit_json_before_the_session_ends(pytester: pytest.Pytester,
                                                                     workers: tuple[str, ...]) -> None:
    if workers:
        pytest.importorskip("xdist")
    for i in range(6):
        make_job(pytester.path / "runs", f"job{i}")
    watch = Watch(pytester.path / "out")
    r = pytester.runpytest("--trajaudit=runs", "--trajaudit-report=out", "-p", "no:cacheprovider", *workers,
                           plugins=[watch])
    assert r.ret in (0, 1), r.stdout.str()  # (these one-call runs are P4 findings)
    # before the last item finished, every job but the last of each process had its file already
    assert watch.seen[-1] >= 6 - (2 if workers else 1)
    assert len(list((pytester.path / "out").glob("jobs/**/audit-*.json"))) == 6
