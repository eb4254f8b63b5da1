"""Multi-record files indexed by their records' byte spans (loaders/spans.py, used by loaders/multi.py).

The tokenizer against json/orjson on generated documents; hostile bytes (cut off, brackets and quotes in strings,
deep nesting, records that are not objects, a BOM, UTF-16, NUL); and every multi-record format loaded through
its span index equal to the same file parsed whole.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_trajaudit.discover.jobs import JobRef
from pytest_trajaudit.loaders import hooklib, inspect_ai, multi, openhands, spans, traces
from pytest_trajaudit.model import UnusableInput
from pytest_trajaudit.safeio import Budget, events_limit, parse_bytes

# ================================================================================================ the tokenizer

# strings full of what a naive scanner trips on: brackets, quotes, backslashes, escapes, non-ASCII, control chars
_TEXT = st.text(alphabet=st.sampled_from(list('ab {}[]",:\\/\n\t\u00e9\u2028\U0001f600') + ["\x00", "\x1f"]),
                max_size=12)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                    st.floats(allow_nan=False, allow_infinity=False), _TEXT)
_JSON = st.recursive(_SCALAR, lambda kids: st.one_of(st.lists(kids, max_size=5),
                                                      st.dictionaries(_TEXT, kids, max_size=5)), max_leaves=40)
_STYLE = st.sampled_from([dict(), dict(indent=2), dict(separators=(",", ":")), dict(indent="\t"),
                          dict(ensure_ascii=False), dict(ensure_ascii=False, indent=1)])


def _dumps(value: Any, style: dict[str, Any]) -> bytes:
    return json.dumps(value, **style).encode("utf-8")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON, _STYLE, st.sampled_from(["", " ", "\n\t "]))
def test_a_value_ends_where_json_says(value: Any, style: dict[str, Any], pad: str) -> None:
    data = pad.encode() + _dumps(value, style) + pad.encode()
    start = spans.skip_ws(data, 0)
    end = spans.value_end(data, start)
    assert spans.skip_ws(data, end) == len(data)
    assert orjson.loads(data[start:end]) == json.loads(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_JSON, max_size=6), _STYLE)
def test_array_items_are_the_elements(items: list[Any], style: dict[str, Any]) -> None:
    data = _dumps(items, style)
    found, end = spans.array_items(data, spans.skip_ws(data, 0))
    assert end == len(data)
    assert [orjson.loads(data[s:e]) for s, e in found] == json.loads(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_TEXT, _JSON, max_size=6), _STYLE)
def test_object_members_are_the_members(obj: dict[str, Any], style: dict[str, Any]) -> None:
    data = _dumps(obj, style)
    found, end = spans.object_members(data, 0)
    assert end == len(data)
    assert [(k, orjson.loads(data[s:e])) for k, s, e in found] == list(json.loads(data).items())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_JSON, max_size=8), _STYLE, st.booleans())
def test_a_document_resolved_is_the_document(runs: list[Any], style: dict[str, Any], nest: bool) -> None:
    doc: Any = {"tasks": [{"task": "t", "runs": runs}], "x": runs[:1]} if nest else runs
    data = _dumps(doc, style)
    value = spans.document(data, ((), ("tasks", "*", "runs")), spans.keep("id"))
    records = value if not nest else value["tasks"][0]["runs"]
    assert all(isinstance(r, spans.Span) == isinstance(o, dict) for r, o in zip(records, runs, strict=True))
    assert [spans.resolve(r) for r in records] == runs
    if nest:
        assert value["x"] == runs[:1]  # off the record paths: parsed


def test_deep_containers_past_the_one_pattern_are_skipped_by_the_bracket_loop() -> None:
    for depth in (spans.NEST - 1, spans.NEST, spans.NEST + 1, 50, spans.ORJSON_DEPTH):
        data = b"[" * depth + b'"]}[{\\""' + b"]" * depth
        assert spans.value_end(data, 0) == len(data)


def test_nesting_past_orjson_declines() -> None:
    ok = b"[" * spans.ORJSON_DEPTH + b"]" * spans.ORJSON_DEPTH
    assert spans.value_end(ok, 0) == len(ok)
    deep = b"[" + ok + b"]"
    with pytest.raises(spans.Declined):
        spans.value_end(deep, 0)
    with pytest.raises(spans.Declined):  # the depth around a record counts
        spans.value_end(ok, 0, depth=1)


@pytest.mark.parametrize("data", [b'[{"a": 1}, {"b": [1, 2}', b'[{"a": "]}', b'[{"a": "x\\"}]', b'[{"a": 1} {"b": 2}]',
                                  b'{"a" 1}', b'[{"a": 1},]', b'[{"a": 1}] x', b""])
def test_cut_off_or_malformed_bytes_decline(data: bytes) -> None:
    with pytest.raises(spans.Declined):
        spans.document(data, ((),), spans.keep())


def test_brackets_and_quotes_inside_strings_do_not_count() -> None:
    runs = [{"run_id": 'a"]}[{', "steps": [{"tool": "x", "observation": "}}]] \\\" [[{"}]}, {"run_id": "b"}]
    data = json.dumps(runs).encode()
    value = spans.document(data, ((),), spans.keep("run_id"))
    assert [r.get("run_id") for r in value] == ['a"]}[{', "b"]
    assert [r.load() for r in value] == runs


def test_a_bom_is_skipped_and_other_encodings_or_nul_decline() -> None:
    runs = [{"run_id": "é"}]
    assert spans.document(codecs.BOM_UTF8 + json.dumps(runs).encode(), ((),), spans.keep())[0].load() == runs[0]
    for data in (json.dumps(runs).encode("utf-16"), json.dumps(runs).encode("utf-16-le"),
                 b'[{"a": "\x00"}]', b'[{"a": "\xff"}]'):
        with pytest.raises(spans.Declined):
            spans.document(data, ((),), spans.keep())


def test_lines_are_spans_without_their_newline_and_blank_lines_are_skipped() -> None:
    data = codecs.BOM_UTF8 + b'{"id": "a"}\r\n\n  \n[1, 2]\n{"id": "b"}'
    values, numbers = spans.lines(data, spans.keep("id"))
    assert numbers == [1, 4, 5]
    assert values[1] == [1, 2]
    assert [v.text() for v in (values[0], values[2])] == ['{"id": "a"}\r', '{"id": "b"}']
    for one_document in (b'{"id": "a"}\n', b'{\n"id": "a"}\n', b'{"a": 1}\n{"b": \n'):
        with pytest.raises(spans.Declined):
            spans.lines(one_document, spans.keep())


def test_more_containers_than_the_events_limit_declines() -> None:
    data = json.dumps([{"a": [i]} for i in range(10)]).encode()
    with events_limit(20), pytest.raises(spans.Declined):  # 21 containers
        spans.document(data, ((),), spans.keep())
    with events_limit(21):
        assert len(spans.document(data, ((),), spans.keep())) == 10


# ================================================================================================ through multi.py


def _ser(o: Any) -> Any:
    if dataclasses.is_dataclass(o):
        return {f.name: _ser(getattr(o, f.name)) for f in dataclasses.fields(o)}
    if isinstance(o, dict):
        return {str(k): _ser(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_ser(v) for v in o]
    return o


def _through_multi(path: Path) -> list[Any]:
    """Every member of ``path`` loaded as the plugin loads it (multi.load_record), one parse for all."""
    multi.release()
    before = multi.parses
    container = JobRef(path.parent, path, multi.RECORD)
    out = []
    for m in multi.list_members(container, 1 << 26):
        traj, info = multi.load_record(multi.member_ref(container, m), Budget())
        out.append([m, _ser(traj), info])
    assert multi.parses - before == 1
    assert not multi._cache  # released with its last record
    return out


def _whole(path: Path, mod: Any) -> list[Any]:
    """The same members from the file parsed whole, through the format module itself."""
    parsed = parse_bytes(path.read_bytes(), path)
    out = []
    for m in mod.members(parsed, str(path)):
        traj, info = mod.load_member(parsed, str(path), m)
        traj.meta.setdefault("member", m)
        out.append([m, _ser(traj), info])
    return out


STEPS = [{"step": 1, "tool": "Read", "args": {"file_path": "a.py"}, "observation": 'x = "[{"', "ok": True},
         {"step": 2, "tool": "Edit", "args": {"file_path": "b.py"}, "observation": "é \\ }", "ok": False}]


def _traces(shape: str) -> Any:
    runs = [{"run_id": f"r{i}", "task": "T" if i % 2 else None, "ok": bool(i % 3), "steps": STEPS[: i % 3]}
            for i in range(60)] + [{"run_id": "r1", "steps": STEPS}, {"id": 7, "steps": []}]
    if shape == "list":
        return runs
    if shape == "runs":
        return {"meta": {"v": [1, {"a": 2}]}, "runs": runs}
    return {"tasks": [{"task": f"t{t}", "runs": runs[t::55]} for t in range(55)] + [{"id": "x", "runs": None}]}


def _openhands() -> str:
    recs = [{"instance_id": f"i{i}", "instruction": "fix", "history": [
        {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls [x]"}},
        {"id": 2, "source": "environment", "observation": "run", "cause": 1, "content": "a\"b",
         "extras": {"metadata": {"exit_code": i % 2}}}], "test_result": {"resolved": bool(i % 2)}}
            for i in range(60)]
    recs.append({"issue": {"owner": "o", "repo": "r", "number": 3}, "history": [], "success": True})
    recs.append({"instruction": "no id", "history": []})
    return "\n".join(json.dumps(r) for r in recs) + "\n\n"


def _hooklib() -> str:
    lines = []
    for i in range(70):
        sid = f"S{i % 7}"
        args = {"file_path": f"f{i}.py"} if i % 2 else {"command": "echo '}]'"}
        tool = "Read" if i % 2 else "Bash"
        lines.append({"ts": i, "event": "PreToolUse", "session_id": sid, "tool_name": tool, **args})
        lines.append({"ts": i, "event": "PostToolUse", "session_id": sid, "tool_name": tool, **args})
        if i % 10 == 0:
            lines.append({"ts": i, "event": "Stop", "session_id": sid})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def _inspect() -> Any:
    def sample(i: int, epoch: int) -> dict[str, Any]:
        return {"id": i, "epoch": epoch, "input": "q", "target": "a",
                "messages": [{"role": "user", "content": "do [it]"},
                             {"role": "assistant", "content": "done \"}\"", "tool_calls": [
                                 {"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}}]},
                             {"role": "tool", "tool_call_id": "c1", "function": "bash", "content": "a.py"}],
                "output": {"completion": "done"}, "scores": {"s": {"value": "C" if i % 2 else "I"}}}

    return {"version": 2, "status": "success", "eval": {"task": "t", "model": "m", "dataset": {"samples": 30}},
            "results": {"scores": []}, "samples": [sample(i, e) for i in range(30) for e in (1, 2)]}


CASES = {
    "traces-list": ("traces.json", lambda: json.dumps(_traces("list")), traces),
    "traces-runs": ("traces.json", lambda: json.dumps(_traces("runs"), indent=2), traces),
    "traces-tasks": ("traces.json", lambda: json.dumps(_traces("tasks"), ensure_ascii=False), traces),
    "openhands": ("output.jsonl", _openhands, openhands),
    "hooklib": ("2026-06-28.jsonl", _hooklib, hooklib),
    "inspect": ("log.json", lambda: json.dumps(_inspect()), inspect_ai),
}


@pytest.mark.parametrize("case", CASES)
def test_every_record_through_its_span_index_equals_the_whole_parse(tmp_path: Path, case: str) -> None:
    name, make, mod = CASES[case]
    path = tmp_path / name
    path.write_text(make(), encoding="utf-8")
    index = multi._indexed(path.read_bytes(), path)
    assert index is not None, "indexed by its spans, not parsed whole"
    assert multi._multi_module(index, path) is mod
    assert _through_multi(path) == _whole(path, mod)


def test_the_cached_index_holds_the_bytes_once_and_no_parsed_run(tmp_path: Path) -> None:
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(_traces("tasks")))
    multi.release()
    container = JobRef(path.parent, path, multi.RECORD)
    ids = multi.list_members(container, 1 << 26)
    entry = next(iter(multi._cache.values()))
    held = [r for r, *_ in traces._indexed(entry.parsed, str(path)).values()]
    assert len(held) == len(ids) and all(isinstance(r, spans.Span) for r in held)
    assert len({id(r.buf.obj) for r in held}) == 1 and len(held[0].buf.obj) == path.stat().st_size
    multi.release()


def _error(path: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> str:
    """The one-line error of listing ``path`` and loading its first record; parsed whole with ``monkeypatch``."""
    multi.release()
    if monkeypatch is not None:
        monkeypatch.setattr(multi, "_indexed", lambda data, path: None)
    container = JobRef(path.parent, path, multi.RECORD)
    try:
        ids = multi.list_members(container, 1 << 26)
        return str(multi.load_record(multi.member_ref(container, ids[0]), Budget()))
    except UnusableInput as exc:
        return str(exc)
    finally:
        multi.release()
        if monkeypatch is not None:
            monkeypatch.undo()


@pytest.mark.parametrize("body", [
    '{"runs": [{"run_id": "a", "steps": [{"tool": "x"}]}, {"run_id": "b", "steps": [{"tool": "x"}]',  # cut off
    '{"runs": [{"run_id": "a", "steps": [{"tool": "x"}]}, {"run_id": "b", "steps": [{"tool": "x", "o": "\\q"}]}]}',
    '{"runs": [{"run_id": "a", "steps": [{"tool": "x", "o": ' + "[" * 1030 + "]" * 1030 + '}]}]}',  # too deep
])
def test_bytes_it_cannot_index_fail_as_the_whole_parse_does(tmp_path: Path, body: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "traces.json"
    path.write_text(body)
    assert multi._indexed(path.read_bytes(), path) is None
    msg = _error(path)
    assert msg.startswith(f"{path}: ") and "\n" not in msg
    assert msg == _error(path, monkeypatch)


_RUN = '{"run_id": "a", "steps": [{"tool": "x"}]}'
_TASKS = '{"tasks": [' + ", ".join([f'{{"task": "t", "runs": [{_RUN}]}}'] * 51)  # past what detection reads


@pytest.mark.parametrize(("body", "says"), [
    (_TASKS + ', 3]}', "tasks[51] is not an object"),
    (_TASKS + ', {"runs": [{"run_id": "b"}, [2]]}]}', "tasks[51].runs[1] is not an object"),
    (_TASKS + ', {"runs": {"run_id": "b"}}]}', "tasks[51].runs is not a list"),
    ('[' + _RUN + ', 3]', "no known multi-record format matches this list file"),
])
def test_a_record_that_is_not_an_object_fails_as_the_whole_parse_does(tmp_path: Path, body: str, says: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "traces.json"
    path.write_text(body)
    if body.startswith(_TASKS):  # detection reads the first 50 tasks: indexed, the module reports the record
        assert multi._indexed(path.read_bytes(), path) is not None
    assert _error(path) == _error(path, monkeypatch) == f"{path}: {says}"


def test_utf16_and_bom_files_read_the_same_either_way(tmp_path: Path) -> None:
    doc = json.dumps(_traces("runs"), ensure_ascii=False)
    bom = tmp_path / "bom" / "traces.json"
    utf16 = tmp_path / "utf16" / "traces.json"
    for p, data in ((bom, codecs.BOM_UTF8 + doc.encode()), (utf16, doc.encode("utf-16"))):
        p.parent.mkdir()
        p.write_bytes(data)
    assert multi._indexed(bom.read_bytes(), bom) is not None
    assert multi._indexed(utf16.read_bytes(), utf16) is None  # parsed whole: UTF-16 text is not indexed
    a, b = _through_multi(bom), _through_multi(utf16)
    for x in (*a, *b):
        x[1]["source"] = x[1]["source"].rsplit("/", 2)[-1]
    assert a == b
