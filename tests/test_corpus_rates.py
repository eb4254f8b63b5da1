"""benchmarks/corpus_rates.py: its populations, tables and determinism on a small tree, and the calibration
targets on the real corpus (skipped when ../shared/corpus is absent)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.jobfactory import make_job

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "corpus_rates.py"


@pytest.fixture(scope="module")
def rates() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus_rates", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["corpus_rates"] = mod  # dataclasses resolve their module's annotations through sys.modules
    spec.loader.exec_module(mod)
    return mod


def _read(path: str) -> dict:
    return {"type": "tool_call", "tool_call_id": path, "kind": "read", "title": f"Read {path}", "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "x"}}]}


def _tree(root: Path) -> Path:
    """A clean passing run, a failed run, a read-only run that never edits (P8 WARN), a cheat that reads the
    oracle (P1 FAIL), a trial with no trajectory, and a fixture folder named like the corpus's synthetic one."""
    corpus = root / "corpus"
    make_job(corpus / "runs", "clean__1")
    make_job(corpus / "runs", "failed__1", result={"task_name": "t", "rewards": {"reward": 0.0}})
    lines = [{"type": "user_message", "text": "fix it"}, *[_read(f"/app/f{i}.py") for i in range(8)],
             {"type": "agent_message", "text": "I looked around."}]
    make_job(corpus / "runs", "explore__1", lines=lines, result={"task_name": "t", "rewards": {"reward": 1.0}})
    make_job(corpus / "runs", "cheat__1", lines=[{"type": "user_message", "text": "x"}, _read("/oracle/answer.json")])
    broken = corpus / "runs" / "broken__1"
    broken.mkdir(parents=True)
    (broken / "result.json").write_text('{"task_name": "t", "verifier_result": {"rewards": {"reward": 1.0}}}')
    make_job(corpus / "harbor" / "benchflow-ai__benchflow", "reward-hack")
    return corpus


def test_populations_and_verdicts(rates: ModuleType, tmp_path: Path) -> None:
    corpus = _tree(tmp_path)
    rows = {r.job: r for r in rates.audit_corpus(corpus, list(rates.registry().values()), rates.Settings())}
    assert set(rows) == {"runs/clean__1", "runs/failed__1", "runs/explore__1", "runs/cheat__1", "runs/broken__1",
                         "harbor/benchflow-ai__benchflow/reward-hack"}
    assert rows["harbor/benchflow-ai__benchflow/reward-hack"].fixture
    assert {j for j, r in rows.items() if r.clean_real} == {"runs/clean__1", "runs/explore__1"}
    assert rows["runs/cheat__1"].verdict == "INVALID" and not rows["runs/cheat__1"].clean_real
    assert rows["runs/broken__1"].verdict == "ERROR" and rows["runs/broken__1"].error
    assert rows["runs/explore__1"].results["P8"][0] == "WARN"


def test_report_tables_evidence_and_determinism(rates: ModuleType, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _tree(tmp_path)
    assert rates.main([str(corpus), "--markdown", "--evidence", "--data", "P8"]) == 0
    out = capsys.readouterr().out
    assert rates.main([str(corpus), "--markdown", "--evidence", "--data", "P8"]) == 0
    assert capsys.readouterr().out == out
    assert "6 jobs discovered: 5 audited, 1 unusable input; 5 real runs, 1 fixtures; 2 clean real runs" in out
    assert "| P8 | yes | 2 | 2 | 1 | 50% | 0 | 0% | 0 | 0 |" in out  # clean real runs: the read-only run warns
    assert "| clean real runs | 0 | 2 | 0 | 0 | 0 | 0 | 2 |" in out  # P4 FAILs the 1-call pass, P8 WARNs the other
    assert "8 distinct reads in 8 tool calls and no edit or solver run" in out
    assert "| runs/explore__1 | WARN | 1 | yes |" in out


def test_unknown_code_and_missing_corpus_are_usage_errors(rates: ModuleType, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert rates.main([str(tmp_path / "nowhere")]) == 2
    assert rates.main([str(tmp_path), "--principles", "P99"]) == 2
    err = capsys.readouterr().err
    assert "is not a directory" in err and "unknown principle code(s) P99" in err


def test_calibration_targets_on_the_real_corpus(rates: ModuleType, corpus: Path) -> None:
    """The calibrated principles warn on at most 1 in 5 clean real runs, and each P8 WARN says which counter
    fired with its numbers."""
    reg = rates.registry()
    rows = rates.audit_corpus(corpus, [reg["P1"], reg["P2"], reg["P8"], reg["P14"]], rates.Settings())
    clean = [r for r in rows if r.clean_real]
    assert len(clean) >= 20
    for code in ("P8", "P14"):
        warns = [r.job for r in clean if r.results[code][0] == "WARN"]
        assert 5 * len(warns) <= len(clean), (code, warns)
    for r in rows:
        status, evidence = r.results.get("P8", ("", ""))
        if status == "WARN":
            assert any(k in evidence for k in ("distinct reads", "re-reads", "in a row", "rewrite #", "reversal '")), \
                evidence
            assert "rewrite #" not in evidence or " of ," not in evidence
