"""The report files' JSON (report/audit.py ``json_bytes``: orjson, with the standard library for what orjson
refuses) and reading a shard's summary back (report/merge.py ``load_shard``). ``json.dumps(indent=2)`` indents in Python, which
dominates writing the reports of a 10,000-job audit; orjson must give the same bytes."""

from __future__ import annotations

import json
import math
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_trajaudit.report import merge
from pytest_trajaudit.report.audit import (
    Deferred,
    _printable_tree,
    json_bytes,
    json_chunks,
    write_json_atomic,
)
from pytest_trajaudit.report.summary import Rollup


def stdlib(value) -> bytes:
    """The reference serialization: ``json.dumps(indent=2, ensure_ascii=False)`` and a newline, with
    strings made printable and NaN null when that fails (a lone surrogate, a non-finite number)."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
        return (text + "\n").encode("utf-8")
    except (UnicodeEncodeError, ValueError):
        return (json.dumps(_printable_tree(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)  # any character but a lone surrogate
scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | text
trees = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(text, kids, max_size=4),
                     max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(trees)
def test_the_same_bytes_as_json_dumps_indent_2(value) -> None:
    assert json_bytes(value) == stdlib(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=6))
def test_floats_read_back_as_the_same_numbers(value) -> None:
    assert json.loads(json_bytes(value)) == value
    big = [f for f in value if f == 0 or abs(f) >= 1e-4]  # only orjson's spelling of tiny floats differs
    assert json_bytes(big) == stdlib(big)


def test_what_orjson_refuses_is_written_as_before() -> None:
    cases = [
        {"name": "bad\udcffname"},  # a file name that is not UTF-8 (surrogateescape)
        {"k\ud800": 1},  # in a key
        {"reward": float("nan"), "x": [float("inf"), -float("inf")]},  # strict JSON has no NaN: null
        {"n": 2**70, "m": -(2**65)},  # past 64 bits
        {1: "a", None: "b", False: "c", 2.5: "d"},  # keys that are not strings
        [{"nan": math.nan, "s": "\ud800"}],  # both at once
    ]
    for value in cases:
        assert json_bytes(value) == stdlib(value), value
    assert json.loads(json_bytes({"name": "bad\udcffname"}))["name"] == "bad\\xffname"
    assert json.loads(json_bytes({"reward": float("nan")})) == {"reward": None}


@settings(max_examples=400, deadline=None)
@given(trees | st.dictionaries(text, trees | st.lists(trees, max_size=4), max_size=5))
def test_written_in_pieces_the_same_bytes(value) -> None:
    """summary.json is written top-level value by value and job by job (``json_chunks``): the same bytes."""
    assert b"".join(json_chunks(value)) == json_bytes(value)


def test_what_orjson_refuses_in_a_piece_is_written_whole(tmp_path: Path) -> None:
    cases = [{"jobs": [{"a": 1}, {"name": "bad\udcffname"}]}, {"a": [1, 2], "n": 2**70}, {1: "a", "b": [1]}]
    for i, value in enumerate(cases):
        path = tmp_path / f"{i}.json"
        path.write_bytes(b"x" * 100_000)  # replaced whole, nothing of it left
        write_json_atomic(path, value)
        assert path.read_bytes() == stdlib(value) == json_bytes(value)


def _deferring(value):
    """``value`` with every dict inside a list replaced by a :class:`Deferred` that makes it."""
    if isinstance(value, list):
        return [Deferred(lambda v=v: v) if isinstance(v, dict) else _deferring(v) for v in value]
    if isinstance(value, dict):
        return {k: _deferring(v) for k, v in value.items()}
    return value


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(text, trees | st.lists(trees, max_size=4), max_size=5))
def test_a_deferred_value_is_written_as_the_value_it_makes(value) -> None:
    """A summary's per-job detail is made as the file is written: the same bytes as the value held."""
    assert b"".join(json_chunks(_deferring(value))) == json_bytes(_deferring(value)) == json_bytes(value)


def test_a_deferred_value_in_what_orjson_refuses(tmp_path: Path) -> None:
    value = {"jobs": [{"detail": {"name": "bad\udcffname", "n": 2**70}}]}
    held = tmp_path / "held.json"
    made = tmp_path / "made.json"
    write_json_atomic(held, value)
    write_json_atomic(made, {"jobs": [{"detail": Deferred(lambda: value["jobs"][0]["detail"])}]})
    assert made.read_bytes() == held.read_bytes() == stdlib(value)
    with pytest.raises(TypeError):
        json_bytes({"a": object()})  # nothing else is encoded by the Deferred hook


def test_written_owner_only_and_whole(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "audit.json"
    write_json_atomic(path, {"a": [1, {"b": "é"}]})
    assert path.read_bytes() == stdlib({"a": [1, {"b": "é"}]})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["audit.json"]  # no temporary file left behind


def _shard_summary(**extra) -> dict:
    return {"schema_version": "trajaudit-summary-1", "shard": {"index": 1, "count": 1}, "jobs": [], **extra}


def test_a_shard_summary_reads_back_whatever_json_reads(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "summary.json").write_bytes(json_bytes(_shard_summary(note="é")))
    assert merge.load_shard(tmp_path / "a")["note"] == "é"
    (tmp_path / "b").mkdir()  # orjson refuses integers past 64 bits; json takes them, as before
    (tmp_path / "b" / "summary.json").write_text(json.dumps(_shard_summary(big=2**70)))
    assert merge.load_shard(tmp_path / "b")["big"] == 2**70
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "summary.json").write_bytes(json_bytes(_shard_summary())[:-3] + b"\xff}")
    with pytest.raises(merge.MergeError, match="unreadable summary.json"):
        merge.load_shard(tmp_path / "c")


def test_terminal_lines_from_the_summary_already_built() -> None:
    rollup = Rollup()
    for code, status in (("P1", "FAIL"), ("P2", "PASS"), ("P8", "WARN")):
        rollup.add({"job": "runs/a", "code": code, "status": status, "evidence": f"{code} said so", "data": {},
                    "tier": "C0", "family": "anticheat", "affects": True, "meta": {"task": "t", "trial": "a"}})
    rollup.add({"job": "runs/b", "code": "P1", "status": "PASS", "evidence": "", "data": {}, "tier": "C0",
                "family": "anticheat", "affects": True, "meta": {"task": "t", "trial": "b"}})
    lines = rollup.terminal_lines()
    assert rollup.terminal_lines(rollup.summary()) == lines
    assert lines[0] == "2 job(s): 1 CLEAN, 1 INVALID" and lines[1].startswith("PR verdict: REJECT")


def test_merge_pauses_the_cyclic_collector_and_restores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading back and writing a large merge with the collector paused (gcpause.py), and the caller's setting
    back afterwards, also when the shards are refused."""
    import gc

    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "summary.json").write_bytes(json_bytes(_shard_summary(mode="precise")))
    real, seen = merge.load_shard, []

    def spy(d: Path) -> dict:
        seen.append(gc.isenabled())
        return real(d)

    monkeypatch.setattr(merge, "load_shard", spy)
    was = gc.isenabled()
    try:
        gc.enable()
        summary = merge.merge(tmp_path / "out", [tmp_path / "s"])
        assert summary["n_jobs"] == 0 and seen == [False] and gc.isenabled()
        with pytest.raises(merge.MergeError, match="given twice"):
            merge.merge(tmp_path / "out2", [tmp_path / "s", tmp_path / "s"])
        assert gc.isenabled()
        gc.disable()  # a caller that turned it off keeps it off
        merge.merge(tmp_path / "out3", [tmp_path / "s"])
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
