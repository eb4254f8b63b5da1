"""The judge engine's pure parts (no litellm, no network): answer parsing and validation, clipping, cache keys and
files, Cohen's kappa and run totals, option precedence, the finish closures of P3 / P11 / P13, and that importing
the plugin never imports litellm."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_trajaudit.judges import Answer, JudgeConfig, JudgeRequest, cache, clip, default_cache_dir
from pytest_trajaudit.judges.options import JudgeOptionError, build
from pytest_trajaudit.judges.stats import Totals, cohen_kappa, item_stats
from pytest_trajaudit.judges.validate import AnswerError, parse_answer, schema_errors
from pytest_trajaudit.principles import verifier as V

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["bucket", "reason"],
          "properties": {"bucket": {"enum": ["hard", "easy"]}, "reason": {"type": "string"}}}


# --- parsing --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ['{"a": 1}', '  {"a": 1}\n', '```json\n{"a": 1}\n```', '```\n{"a": 1}\n```'])
def test_parse_accepts_one_object_or_one_fence(text: str) -> None:
    assert parse_answer(text) == {"a": 1}


@pytest.mark.parametrize("text, why", [
    ("", "empty answer"), (None, "empty answer"), ("not json", "invalid JSON"),
    ('Sure! {"a": 1}', "invalid JSON"), ('{"a": 1} trailing', "invalid JSON"), ('{"a": 1}{"b": 2}', "invalid JSON"),
    ('[{"a": 1}]', "expected an object"), ('{"a": 1, "a": 2}', "duplicate key"), ('{"a": NaN}', "NaN"),
    ('```json\n{"a": 1}\n```\nand more', "invalid JSON"), ('{"a": 1', "invalid JSON"),
])
def test_parse_rejects_everything_else(text: str | None, why: str) -> None:
    with pytest.raises(AnswerError, match=why):
        parse_answer(text)


def test_schema_errors_name_the_path() -> None:
    assert schema_errors({"bucket": "hard", "reason": "r"}, SCHEMA) is None
    assert schema_errors({"bucket": "other", "reason": "r"}, SCHEMA) == \
        "schema violation at $.bucket: 'other' is not one of ['hard', 'easy']"
    assert "required property" in schema_errors({"bucket": "hard"}, SCHEMA)
    assert "$.items[1]" in schema_errors({"items": [1, "x"]}, {"properties": {"items": {"items": {"type": "integer"}}}})
    assert schema_errors({}, {"type": "no-such-type"}).startswith("invalid request schema")


# --- clipping -------------------------------------------------------------------------------------------------

def test_clip_keeps_both_ends_and_says_how_much() -> None:
    text = "A" * 5000 + "B" * 5000
    out, clipped = clip(text, 1000)
    assert clipped and out.startswith("A" * 400) and out.endswith("B" * 400)
    assert abs(len(out) - 1000) <= 2
    omitted = int(out.split("[... ", 1)[1].split(" ", 1)[0])
    assert omitted == len(text) - out.count("A") - out.count("B")
    assert clip("short", 1000) == ("short", False)


# --- cache ----------------------------------------------------------------------------------------------------

def test_cache_key_is_canonical_and_covers_every_input() -> None:
    r = JudgeRequest("p3_bucket", "prompt", SCHEMA, "sys")
    reordered = JudgeRequest("other purpose", "prompt", json.loads(json.dumps(SCHEMA, sort_keys=True)), "sys")
    assert cache.key("m", r) == cache.key("m", reordered)  # purpose is a label; key order does not matter
    variants = [("m2", r), ("m", JudgeRequest("p", "prompt2", SCHEMA, "sys")),
                ("m", JudgeRequest("p", "prompt", SCHEMA, "sys2")), ("m", JudgeRequest("p", "prompt", {}, "sys"))]
    assert len({cache.key(m, q) for m, q in variants} | {cache.key("m", r)}) == 5


def test_cache_files_are_private_atomic_and_validated(tmp_path: Path) -> None:
    d = tmp_path / "c"
    r = JudgeRequest("p", "prompt", SCHEMA)
    assert cache.load(d, "m", r) is None
    cache.store(d, "m", r, Answer("m", False, None, "bad"))  # failed answers are never stored
    assert not d.exists()
    cache.store(d, "m", r, Answer("m", True, {"bucket": "hard", "reason": "x"}, None, tokens_in=5))
    f = cache.path_for(d, cache.key("m", r))
    assert stat.S_IMODE(f.stat().st_mode) == 0o600 and stat.S_IMODE(f.parent.stat().st_mode) == 0o700
    assert [p.name for p in f.parent.iterdir()] == [f.name]  # no temporary file left behind
    hit = cache.load(d, "m", r)
    assert hit == Answer("m", True, {"bucket": "hard", "reason": "x"}, None, cached=True)
    # an entry that no longer satisfies the schema, garbage, or a symlink is a miss
    f.write_text(json.dumps({"version": cache.VERSION, "value": {"bucket": "nope", "reason": "x"}}))
    assert cache.load(d, "m", r) is None
    f.write_text("{garbage")
    assert cache.load(d, "m", r) is None
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"version": cache.VERSION, "value": {"bucket": "hard", "reason": "x"}}))
    f.unlink()
    f.symlink_to(target)
    assert cache.load(d, "m", r) is None


def test_default_cache_dir_follows_xdg() -> None:
    assert default_cache_dir({"XDG_CACHE_HOME": "/x/cache"}) == Path("/x/cache/pytest-trajaudit/judges")
    assert default_cache_dir({}) == Path(os.path.expanduser("~")) / ".cache" / "pytest-trajaudit" / "judges"


# --- stats ----------------------------------------------------------------------------------------------------

def test_cohen_kappa() -> None:
    assert cohen_kappa([]) is None
    assert cohen_kappa([("pass", "pass")] * 3) is None  # one label throughout: undefined
    assert cohen_kappa([("pass", "pass"), ("fail", "fail")]) == 1.0
    assert cohen_kappa([("pass", "fail"), ("fail", "pass")]) == -1.0
    # po = 2/3, pe = 4/9 → (6/9 - 4/9) / (5/9) = 0.4
    assert cohen_kappa([("fail", "fail"), ("fail", "pass"), ("pass", "pass")]) == pytest.approx(0.4)


def test_item_stats_and_totals() -> None:
    answers = [Answer("a", True, {}, None, tokens_in=10, tokens_out=2, cost=0.5, attempts=1),
               Answer("b", False, None, "p: HTTP 500 (3 attempts)", tokens_in=0, attempts=3),
               Answer("a", True, {}, None, cached=True)]
    st = item_stats(answers)
    assert st == {"models": ["a", "b"], "calls": 3, "cached": 1, "failures": 1, "attempts": 4, "tokens_in": 10,
                  "tokens_out": 2, "cost": 0.5, "errors": ["b: p: HTTP 500 (3 attempts)"]}
    t = Totals(["a", "b"])
    t.add("j1::P13", {"judge": st, "data": {"judge_labels": {"a": "fail", "b": "fail"}}})
    t.add("j2::P13", {"judge": st, "data": {"judge_labels": {"a": "fail", "b": "pass"}}})
    t.add("j3::P13", {"judge": st, "data": {"judge_labels": {"a": "pass", "b": "pass"}}})
    t.add("j4::P13", {"data": {"judge_labels": {"a": "pass", "b": None}}})  # a failed answer: not a pair
    s = t.summary()
    assert (s["calls"], s["failures"], s["tokens_in"], s["cost"]) == (9, 3, 30, 1.5)
    assert (s["kappa"], s["kappa_items"], s["agreement"]) == (pytest.approx(0.4), 3, pytest.approx(2 / 3))
    assert s["errors"][0] == "j1::P13: b: p: HTTP 500 (3 attempts)"
    line = t.terminal_line()
    assert "judges: a, b: 9 answer(s), 3 cached, 3 failed" in line and "P13 kappa 0.400 over 3 item(s)" in line
    assert Totals().terminal_line() is None


# --- options --------------------------------------------------------------------------------------------------

def _getter(values: dict) -> object:
    return lambda name: values.get(name)


def test_options_off_without_a_model_even_with_env() -> None:
    env = {"JUDGE_MODEL": "m", "JUDGE_BASE_URL": "http://x/v1", "JUDGE_API_KEY": "k"}
    assert build(_getter({}), environ=env) is None


def test_options_precedence(tmp_path: Path) -> None:
    env = {"JUDGE_BASE_URL": "http://judge/v1", "ADVISOR_BASE_URL": "http://advisor/v1", "JUDGE_API_KEY": "sk-1",
           "OTHER_KEY": "sk-2", "XDG_CACHE_HOME": str(tmp_path)}
    cfg = build(_getter({"judge": ["a", "b", "a"]}), environ=env)
    assert cfg is not None and cfg.models == ("a", "b") and cfg.base_url == "http://judge/v1"
    assert (cfg.api_key, cfg.timeout, cfg.retries, cfg.concurrency, cfg.provider) == ("sk-1", 120.0, 2, 8, "openai")
    assert cfg.cache_dir == tmp_path / "pytest-trajaudit" / "judges"
    assert "sk-1" not in repr(cfg)
    env.pop("JUDGE_BASE_URL")
    cfg = build(_getter({"judge": "x\ny", "judge_api_key_env": "OTHER_KEY", "judge_cache": "off",
                         "judge_timeout": "2.5", "judge_retries": "0", "judge_concurrency": "12"}), environ=env)
    assert (cfg.models, cfg.base_url, cfg.api_key, cfg.cache_dir) == (("x", "y"), "http://advisor/v1", "sk-2", None)
    assert (cfg.timeout, cfg.retries, cfg.concurrency) == (2.5, 0, 12)
    cfg = build(_getter({"judge": ["m"], "judge_base_url": "http://opt/v1", "judge_cache": "rel"}), environ=env,
                base=tmp_path)
    assert cfg.base_url == "http://opt/v1" and cfg.cache_dir == tmp_path / "rel"


def test_options_rules_file_judge_section() -> None:
    cfg = build(_getter({}), rules_model="from-rules", rules_enabled=True, environ={})
    assert cfg is not None and cfg.models == ("from-rules",)
    assert build(_getter({}), rules_model="from-rules", rules_enabled=False, environ={}) is None
    assert build(_getter({"judge": ["cli"]}), rules_model="r", rules_enabled=True, environ={}).models == ("cli",)
    with pytest.raises(JudgeOptionError, match="judge.enabled: true but no judge.model"):
        build(_getter({}), rules_model=None, rules_enabled=True, environ={})


@pytest.mark.parametrize("name, value", [("judge_timeout", "0"), ("judge_timeout", "x"), ("judge_retries", "-1"),
                                         ("judge_concurrency", "0")])
def test_options_bad_numbers(name: str, value: str) -> None:
    with pytest.raises(JudgeOptionError, match=name.replace("_", "-")):
        build(_getter({"judge": ["m"], name: value}), environ={})


def test_config_validates() -> None:
    with pytest.raises(ValueError):
        JudgeConfig(models=("m",), concurrency=0)


# --- finish closures: a failed or invalid answer never passes ---------------------------------------------------

def _ok(model: str, value: dict) -> Answer:
    return Answer(model, True, value, None)


def _bad(model: str, why: str = "p: HTTP 500") -> Answer:
    return Answer(model, False, None, why)


def test_p3_finish() -> None:
    finish = V._p3_finish("m", "agent's final: x; verifier: y", {"failure_bucket": "unjudged"})
    f = finish([_ok("m", {"bucket": "hard", "reason": "coherent but missed the ats clause"})])
    assert f.status == "PASS" and f.data["failure_bucket"] == "hard"
    assert f.evidence.startswith("hard (judge m: coherent but missed the ats clause); agent's final: x")
    f = finish([_ok("m", {"bucket": "unfair_test", "reason": "spaces"})])
    assert f.status == "WARN" and f.data["task_flag"] == "fairness"
    f = finish([_bad("m", "p3_bucket: schema violation at $.bucket: 'x' is not one of [...]")])
    assert f.status == "N/A" and f.data["failure_bucket"] == "unjudged" and "judge m failed: p3_bucket: schema" in f.evidence


def test_p11_finish() -> None:
    finish = V._p11_finish("m", {"reconstructed": False, "aligned": None})
    f = finish([_ok("m", {"verdict": "fair", "reason": "prose matches"})])
    assert f.status == "PASS" and f.data["aligned_by_prose"] is True and f.data["reconstructed"] is False
    f = finish([_ok("m", {"verdict": "unfair", "reason": "correct policy rejected"})])
    assert f.status == "WARN" and f.data["aligned"] is False and not f.data.get("flipped_signal")
    assert finish([_ok("m", {"verdict": "unclear", "reason": "?"})]).status == "N/A"
    assert finish([_bad("m")]).status == "N/A"


def test_p13_finish() -> None:
    finish = V._p13_finish(["a", "b"], 0.0, {"checked": False})
    both_fail = finish([_ok("a", {"passes": False, "reason": "r"}), _ok("b", {"passes": False, "reason": "r"})])
    assert both_fail.status == "PASS" and both_fail.data["agreement"] is True
    assert both_fail.data["judge_labels"] == {"a": "fail", "b": "fail"}
    split = finish([_ok("a", {"passes": False, "reason": "r"}), _ok("b", {"passes": True, "reason": "r"})])
    assert split.status == "FAIL" and "verifiable rubric FAIL" in split.evidence
    both_pass = finish([_ok("a", {"passes": True, "reason": "r"}), _ok("b", {"passes": True, "reason": "r"})])
    assert both_pass.status == "WARN" and both_pass.data["matches_reward"] is False  # reward 0 but both pass
    one_bad = finish([_ok("a", {"passes": True, "reason": "r"}), _bad("b")])
    assert one_bad.status == "N/A" and one_bad.data["judge_labels"] == {"a": "pass", "b": None}
    three = V._p13_finish(["a", "b", "c"], None, {})
    # a disagreement among the valid answers is a FAIL even when another judge failed
    assert three([_ok("a", {"passes": True, "reason": "r"}), _ok("b", {"passes": False, "reason": "r"}),
                  _bad("c")]).status == "FAIL"
    assert three([_ok("a", {"passes": True, "reason": "r"}), _ok("b", {"passes": True, "reason": "r"}),
                  _bad("c")]).status == "N/A"


def test_importing_the_plugin_does_not_import_litellm() -> None:
    code = ("import sys, pytest_trajaudit.plugin, pytest_trajaudit.judges, pytest_trajaudit.principles.engine; "
            "import pytest_trajaudit.report.summary; print('litellm' in sys.modules, 'openai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
