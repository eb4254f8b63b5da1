"""Every measurement script in benchmarks/ runs: each is started as the docs start it, on the smallest input it
accepts, and must exit 0 and print the line its figure is read from. Nothing here looks at a time (the scripts
print figures; they are never asserted). corpus_rates.py has its own tests (test_corpus_rates.py), and the two
measurement aids that ``-p`` loads into pytest (xdist_noreports.py, procprobe.py) theirs in test_xdist_batch.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
FAST = "-p no:hypothesispytest -p no:anyio"  # the test-only plugins' modules are not re-compiled in every run


def _env() -> dict[str, str]:
    """This interpreter's environment without what the surrounding pytest (and xdist) put there."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}


def _run(*args: str | Path, cwd: Path, ok: tuple[int, ...] = (0,)) -> str:
    p = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=_env(), capture_output=True, text=True,
                       timeout=600)
    assert p.returncode in ok, f"exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


def test_advisor_overlap(tmp_path: Path) -> None:
    out = _run(BENCH / "advisor_overlap.py", "--mb", "0.2", "--lines", "100", "--repeat", "1", cwd=tmp_path)
    assert "scan MB/s" in out
    row = out.strip().splitlines()[-1].split()
    assert row[0] == "0.2" and len(row) == 5, out  # size, three rates, the planted lines it found


def test_audit_ratio_on_a_generated_tree_and_against_loading(tmp_path: Path) -> None:
    out = _run(BENCH / "audit_ratio.py", "--jobs", "2", "--size-kb", "64", "--work", tmp_path, "--repeat", "1",
               "--parts", cwd=tmp_path)
    assert "audit / orjson.loads = " in out and "--- parts" in out and "verifier gaming, by step:" in out
    tree = next(tmp_path.glob("tree-*"))
    out = _run(BENCH / "audit_ratio.py", tree, "--vs-loading", "--repeat", "1", cwd=tmp_path)
    assert "audit / loading = " in out


def test_multi_record(tmp_path: Path) -> None:
    out = _run(BENCH / "multi_record.py", "--runs", "20", "40", "--workers", "0", "--work", tmp_path,
               "--pytest-args", FAST, cwd=tmp_path)
    assert "40 runs: plugin / baseline" in out and "bare pytest with the same" in out


def test_memory_bound(tmp_path: Path) -> None:
    out = _run(BENCH / "memory_bound.py", "--work", tmp_path, "--size-mb", "1", cwd=tmp_path)
    assert "realistic (gen_runs.py)" in out and "audited:" in out


def test_scale(tmp_path: Path) -> None:
    out = _run(BENCH / "scale.py", "--jobs", "10", "20", "--only", "bare,audit", "--work", tmp_path,
               "--pytest-args", FAST, cwd=tmp_path)
    assert "RSS slope audit:" in out and "audit / bare slope:" in out


def test_reports_on_a_shard(tmp_path: Path) -> None:
    _run(BENCH / "gen_runs.py", tmp_path / "t", "--jobs", "6", "--size-kb", "20", "--format", "mixed", cwd=tmp_path)
    out = _run("-m", "pytest", "--trajaudit=t", "-q", "-p", "no:cacheprovider", *FAST.split(), "--trajaudit-shard=1/1",
               f"--trajaudit-report={tmp_path / 'r'}", cwd=tmp_path, ok=(0, 1))  # 1: an item FAILED (a finding)
    assert (tmp_path / "r" / "summary.json").is_file(), out[-2000:]
    out = _run(BENCH / "reports.py", tmp_path / "r", "--repeat", "1", cwd=tmp_path)
    assert "`trajaudit merge` of this one shard" in out and "written: " in out


def test_p16_on_the_bundled_examples(tmp_path: Path) -> None:
    out = _run(BENCH / "p16_corpus.py", "runs", REPO / "examples" / "runs", cwd=tmp_path)
    counts = out.strip().splitlines()[-1]
    assert counts.startswith("{") and "PASS" in counts, out


def test_judges(tmp_path: Path) -> None:
    """Six pytest runs against the judge test server on 127.0.0.1 (litellm imported in each judged run)."""
    pytest.importorskip("litellm")
    pytest.importorskip("xdist")
    out = _run(BENCH / "judges.py", "--jobs", "1", "--latency", "0.01", "--keep", tmp_path / "w", cwd=REPO)
    labels = [line.split("  ")[0] for line in out.strip().splitlines()[:-1]]
    assert labels == ["no judge", "judges, one process", "judge items only (P3,P11)", "judges, -n 2",
                      "judges, cache fill", "judges, cache rerun"], out
    assert "calls=2 " in out and "1 jobs, 2 judge requests" in out


def test_measure_quick_import_section(tmp_path: Path) -> None:
    out = _run(BENCH / "measure.py", "--quick", "--sections", "e", "--workdir", tmp_path / "w", cwd=REPO)
    assert "## (e) Import time and startup" in out and "`import pytest_trajaudit.plugin` beyond `import pytest`" in out


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")))
def test_every_script_is_covered(script: str) -> None:
    """A new script gets a run here (or a reason in this module's text why it is run elsewhere)."""
    covered = {"advisor_overlap.py", "audit_ratio.py", "multi_record.py", "memory_bound.py", "scale.py",
               "reports.py", "p16_corpus.py", "measure.py", "gen_runs.py", "judges.py"}
    elsewhere = {"corpus_rates.py": "test_corpus_rates.py", "xdist_noreports.py": "test_xdist_batch.py",
                 "procprobe.py": "test_xdist_batch.py"}
    assert script in covered or script in elsewhere, f"benchmarks/{script} is run by no test"
