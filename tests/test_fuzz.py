"""Property-based fuzzing (hypothesis) of every loader and of the strict decoder: a short, deterministic slice of
the campaign in ``fuzz/campaign.py`` (same targets: ``fuzz/targets.py``).

Property: on any input, each entry point succeeds or raises the documented :class:`UnusableInput` whose reason
is one line; a job whose file is fuzzed is audited by every principle without a principle crashing, and its audit
JSON and summary are strict JSON. ``derandomize=True`` and a small ``max_examples``: the same examples every run.

The regression tests at the end replay one input of each kind of failure the campaign looks for.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from io import BytesIO
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz import gen, seeds, targets
from pytest_trajaudit.discover.jobs import classify
from pytest_trajaudit.loaders.sniff import load_trajectory
from pytest_trajaudit.model import UnusableInput
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.safeio import decode_text, parse_text
from pytest_trajaudit.settings import Settings
from tests.jobfactory import make_job

REPO = Path(__file__).resolve().parents[1]
SEEDS = {k: v for k, v in seeds.all_seeds().items()}  # inline seeds + examples/ (never the corpus: determinism)
SEED_NAMES = sorted(SEEDS)


def fuzz_settings(n: int) -> settings:
    return settings(max_examples=n, derandomize=True, database=None, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example, HealthCheck.filter_too_much])


# --- strategies --------------------------------------------------------------------------------------------------

scalars = (st.sampled_from(gen.STRINGS) | st.text(max_size=20) | st.integers(-(2 ** 70), 2 ** 70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.booleans() | st.none())
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.sampled_from(gen.KEYS) | st.text(max_size=8), children, max_size=6),
    max_leaves=40,
)
line_dicts = st.fixed_dictionaries({"type": st.sampled_from(gen.STRINGS)},
                                   optional={k: json_values for k in gen.KEYS[:40] if k != "type"})


def dump(v: object) -> str:
    return json.dumps(v, ensure_ascii=False)


@st.composite
def jsonl_docs(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(line_dicts | json_values, min_size=1, max_size=8))
    sep = draw(st.sampled_from(["\n", "\r\n", "\n\n"]))
    return sep.join(dump(v) for v in lines).encode("utf-8", "surrogatepass") + draw(st.sampled_from([b"", b"\n"]))


@st.composite
def encoded_docs(draw: st.DrawFn) -> bytes:
    text = dump(draw(json_values)) if draw(st.booleans()) else SEEDS[draw(st.sampled_from(SEED_NAMES))][1].decode(
        "utf-8", "replace")
    return text.encode(draw(st.sampled_from(gen.ENCODINGS)), "surrogatepass")


@st.composite
def mutated_seeds(draw: st.DrawFn) -> bytes:
    data = bytearray(SEEDS[draw(st.sampled_from(SEED_NAMES))][1])
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.integers(0, 4))
        pos = draw(st.integers(0, len(data)))
        if op == 0 and data:
            data[min(pos, len(data) - 1)] = draw(st.sampled_from(list(gen.INTERESTING_BYTES)))
        elif op == 1:
            data[pos:pos] = draw(st.sampled_from(gen.TOKENS) | st.binary(min_size=1, max_size=8))
        elif op == 2:
            del data[pos:pos + draw(st.integers(1, 64))]
        elif op == 3:
            del data[pos:]
        else:
            data[pos:pos] = data[pos:pos + draw(st.integers(1, 128))] * draw(st.sampled_from([2, 10]))
    return bytes(data)


@st.composite
def structurally_mutated_seeds(draw: st.DrawFn) -> bytes:
    """A seed whose JSON values are replaced by random ones (type confusion deep inside a real shape)."""
    text = SEEDS[draw(st.sampled_from(SEED_NAMES))][1].decode("utf-8", "replace")
    lines = text.split("\n")
    out = []
    for ln in lines:
        try:
            v = json.loads(ln)
        except ValueError:
            out.append(ln)
            continue
        slots: list[tuple[object, object]] = []
        gen._walk(v, slots)
        if slots and draw(st.booleans()):
            parent, key = slots[draw(st.integers(0, len(slots) - 1))]
            parent[key] = draw(json_values)  # type: ignore[index]
        out.append(dump(v))
    return "\n".join(out).encode("utf-8", "surrogatepass")


@st.composite
def deep_docs(draw: st.DrawFn) -> bytes:
    depth = draw(st.sampled_from([63, 64, 65, 200, 254, 256, 900, 1023, 1024, 1025, 5000]))
    opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"content":', b"}"), (b'{"text":[', b"]}")]))
    body = opener * depth + b'"x"' + closer * depth
    wrap = draw(st.sampled_from([b"%s", b'{"type":"user_message","text":"a"}\n{"type":"tool_call","kind":"execute",'
                                         b'"content":[{"type":"content","content":%s}]}\n',
                                         b'[{"role":"user","content":%s}]']))
    return wrap.replace(b"%s", body)


@st.composite
def zips(draw: st.DrawFn) -> bytes:
    members = {"header.json": draw(st.sampled_from([b'{"version":2,"eval":{"task":"t"},"status":"success"}', b"{}",
                                                    b"[", b""]))}
    for i in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from([f"samples/{i}_epoch_1.json", "../x.json", "/abs.json", "samples/x.eval",
                                     f"samples/{i}_epoch_2.json"]))
        members[name] = draw(mutated_seeds() | st.just(SEEDS["inspect"][1]))
    buf = BytesIO()
    with zipfile.ZipFile(buf, "w", draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))) as z:
        for n, d in members.items():
            z.writestr(n, d)
    data = buf.getvalue()
    if draw(st.booleans()):
        pos = draw(st.integers(0, len(data) - 1))
        data = data[:pos] + bytes([data[pos] ^ 0xFF]) + data[pos + 1:]
    return data


any_input = (st.binary(max_size=512) | st.builds(lambda v: dump(v).encode("utf-8", "surrogatepass"), json_values)
             | jsonl_docs() | encoded_docs() | mutated_seeds() | structurally_mutated_seeds() | deep_docs() | zips())
names = st.sampled_from(sorted({n for n, _ in SEEDS.values()}))


# --- properties --------------------------------------------------------------------------------------------------

def test_every_format_has_a_seed() -> None:
    """The seeds reach every loader: each format module is the one the dispatcher picks for some seed."""
    from pytest_trajaudit.loaders.sniff import detect, loaders
    from pytest_trajaudit.safeio import parse_bytes

    picked = {detect(parse_bytes(data, name)) for name, data in SEEDS.values()}
    assert set(loaders()) <= picked, sorted(m.NAME for m in set(loaders()) - picked)


@fuzz_settings(200)
@given(data=any_input, name=names)
def test_strict_decoder(data: bytes, name: str) -> None:
    assert targets.t_safeio(data, name, Path(".")) in ("ok", "unusable")


@fuzz_settings(200)
@given(data=any_input, name=names)
def test_format_dispatcher(data: bytes, name: str) -> None:
    assert targets.t_trajectory(data, name, Path(".")) in ("ok", "unusable")


@fuzz_settings(50)
@given(data=any_input, name=st.sampled_from(targets.LOOSE_NAMES))
def test_multi_record_files(data: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        assert targets.t_multi(data, name, Path(d)) in ("ok", "unusable")


@fuzz_settings(50)
@given(data=any_input, slot=st.sampled_from(targets.JOB_SLOTS))
def test_job_files_audited_by_every_principle(data: bytes, slot: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        assert targets.t_job(data, slot, Path(d)) in ("ok", "unusable")


MULTI_SEEDS = {"hooklib", "openhands-output", "inspect", "traces"}  # several runs: each record is a job


@pytest.mark.parametrize("seed", [n for n in SEED_NAMES if SEEDS[n][0] not in ("result.json", "ctrf.json", "out.json")])
def test_seeds_themselves_load(seed: str, tmp_path: Path) -> None:
    """Control: the unmutated seeds are valid inputs (so the properties above exercise the loaders, not only
    their first shape check)."""
    name, data = SEEDS[seed]
    if seed in MULTI_SEEDS:
        assert targets.t_multi(data, name, tmp_path) == "ok"
    else:
        assert targets.t_trajectory(data, name, tmp_path) == "ok"


# --- one input of each kind the campaign looks for -------------------------------------------------------------

def _unusable(text: str, name: str = "t.jsonl") -> UnusableInput:
    with pytest.raises(UnusableInput) as info:
        load_trajectory(parse_text(decode_text(text.encode(), name), name), name)
    assert "\n" not in info.value.reason
    return info.value


def test_regression_deep_message_content_is_unusable_not_recursion_error() -> None:
    """An ACP tool_call whose ``content`` nests 900 levels deep is unusable input, not a RecursionError out of
    ``loaders/common.py``'s flatten_text: a fixed nesting limit decides, the same way at any stack depth
    (in-process, under xdist)."""
    line = ('{"type":"tool_call","tool_call_id":"t","kind":"execute","title":"x","content":[{"type":"content",'
            '"content":' + "[" * 900 + "]" * 900 + "}]}")
    exc = _unusable('{"type":"user_message","text":"a"}\n' + line + "\n")
    assert "nested more than 64 levels" in exc.reason


def test_regression_content_at_the_nesting_limit_still_loads() -> None:
    content = '[{"type":"content","content":' + "[" * 60 + '{"type":"text","text":"deep ok"}' + "]" * 60 + "}]"
    t = load_trajectory(parse_text('{"type":"user_message","text":"a"}\n{"type":"agent_message","text":"b"}\n'
                                   '{"type":"tool_call","tool_call_id":"t","kind":"read","title":"Read /a",'
                                   f'"status":"completed","content":{content}}}\n', "t.jsonl"), "t.jsonl")
    assert any("deep ok" in e.output for e in t.events)


def test_regression_tool_arguments_deeper_than_orjson_can_write() -> None:
    """Arguments nested 300 levels (orjson writes at most 255; ``str()`` could raise RecursionError deeper down)
    are a clean unusable input."""
    args = "[" * 300 + "]" * 300
    msg = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": json.loads(args)}}]}
    exc = _unusable(json.dumps([{"role": "user", "content": "hi"}, msg]), "m.json")
    assert "nested too deep" in exc.reason


def test_regression_deep_prompts_json_names_the_file(tmp_path: Path) -> None:
    job = make_job(tmp_path / "runs", "j", extra_files={"prompts.json": "[" * 500 + '"p"' + "]" * 500})
    ref = classify(job)
    assert ref is not None
    audit = audit_job(ref, Settings(), list(registry().values()))
    assert audit.error is not None and audit.error.startswith("prompts.json: prompts nested more than 64 levels")


@pytest.mark.parametrize("unit", ["a-", "a_a-", "x-y.", "-a"])
def test_regression_redaction_is_linear_on_hyphenated_words(unit: str) -> None:
    """``redact`` is linear on ``a-a-a-…`` text: a key=value pattern that rescans the rest of every word from
    each word start is quadratic (seconds on 20 KB, minutes on a large tool output). 400 KB must finish well
    inside the subprocess timeout (quadratic would take hours); a hang fails the test."""
    code = textwrap.dedent(f"""
        from pytest_trajaudit.scan.redact import quote, redact
        s = {unit!r} * 200_000
        assert redact(s) == s
        assert redact("api-key=" + s).startswith("api-key=<REDACTED>")
        quote(s, 300)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_regression_long_shell_words_are_linear_and_still_parsed() -> None:
    """A SWE-agent action of one 550 KB word is split in linear time (shlex builds a token by concatenation:
    quadratic, half a minute on it). Commands over 16 KiB are split without shlex; a read hidden behind or before
    2 MB of padding is still found. The subprocess timeout turns a regression into a failure (quadratic: minutes)."""
    code = textwrap.dedent("""
        from pytest_trajaudit.loaders.codex import _unwrap_shell
        from pytest_trajaudit.loaders.common import shell_read_paths, split_words
        from pytest_trajaudit.principles.rules import _shell_read_paths
        pad = "conftest.py" * 200_000
        assert shell_read_paths(pad + "; cat /oracle/solve.sh") == ("/oracle/solve.sh",)
        assert shell_read_paths("cat '/oracle/solve.sh' " + pad)[0] == "/oracle/solve.sh"
        assert _shell_read_paths("cat /app/a.py " + pad)[0] == "/app/a.py"
        assert split_words("ls " + pad)[1] == pad
        assert _unwrap_shell("bash -lc 'cat /oracle/x; " + pad + "'").startswith("cat /oracle/x; conftest")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_regression_long_swe_agent_action_loads() -> None:
    action = "open " + "a" * 300_000
    doc = json.loads(SEEDS["sweagent"][1])
    doc["trajectory"][0]["action"] = action
    t = load_trajectory(parse_text(json.dumps(doc), "x.traj"), "x.traj")
    assert [e.tool for e in t.events if e.type == "tool_call"] == ["open", "submit"]


def test_campaign_fails_on_a_slow_finding(tmp_path: Path) -> None:
    """An input that is handled correctly but too slowly is a finding that fails the campaign (exit 1), like a
    crash: ``--slow 0`` makes every input slow, so the short campaign must exit 1 and record a slow finding."""
    from fuzz import campaign

    out = tmp_path / "findings"
    code = campaign.main(["--minutes", "0.01", "--seed", "1", "--targets", "safeio", "--no-corpus",
                          "--slow", "0", "--out", str(out)])
    stats = json.loads((out / "stats.json").read_text())
    assert stats["stats"]["safeio"]["slow"] >= 1
    assert {f["kind"] for f in stats["findings"]} == {"slow"}
    assert code == 1
