"""ask / submit through litellm against a real OpenAI-compatible server on 127.0.0.1 (tests/judgeserver.py):
valid answers, garbage, schema violations, HTTP errors, timeouts, a dead port, retries, the disk cache (a rerun
makes zero HTTP calls), in-flight sharing and concurrency. No function on this path is mocked."""

from __future__ import annotations

from concurrent.futures import wait
from pathlib import Path

import pytest

from pytest_trajaudit.judges import JudgeConfig, JudgeRequest, ask, cache, shutdown, submit
from pytest_trajaudit.principles.engine import _answer
from tests.judgeserver import JudgeServer, http, ok, slow, text, trickle

pytestmark = pytest.mark.usefixtures("litellm")

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["bucket", "reason"],
          "properties": {"bucket": {"enum": ["hard", "easy"]}, "reason": {"type": "string"}}}
KEY = "sk-test-0123456789abcdefghij"


def cfg(url: str, **kw: object) -> JudgeConfig:
    base = {"models": ("m1",), "base_url": url, "api_key": KEY, "timeout": 5.0, "retries": 0, "cache_dir": None}
    return JudgeConfig(**{**base, **kw})  # type: ignore[arg-type]


def req(prompt: str = "p", purpose: str = "p3_bucket") -> JudgeRequest:
    return JudgeRequest(purpose, prompt, SCHEMA, "system text")


def test_valid_answer_and_what_is_sent(judge_server: JudgeServer) -> None:
    judge_server.script = [ok({"bucket": "hard", "reason": "x"}, usage=(123, 45))]
    a = ask("m1", req("the prompt"), cfg(judge_server.url))
    assert (a.ok, a.value, a.error, a.cached) == (True, {"bucket": "hard", "reason": "x"}, None, False)
    assert (a.tokens_in, a.tokens_out, a.attempts, a.cost) == (123, 45, 1, 0.0)  # m1: not in litellm's price map
    r = judge_server.requests[0]
    assert r["path"] == "/v1/chat/completions" and r["model"] == "m1" and r["purpose"] == "p3_bucket"
    assert (r["system"], r["prompt"]) == ("system text", "the prompt")
    assert r["authorization"] == f"Bearer {KEY}"
    assert r["response_format"] == {"type": "json_object"} and r["temperature"] == 0


def test_known_model_costs_money(judge_server: JudgeServer) -> None:
    judge_server.script = [ok({"bucket": "easy", "reason": "x"}, usage=(1000, 100))]
    a = ask("gpt-4o", req(), cfg(judge_server.url))
    assert a.ok and a.cost > 0 and judge_server.requests[0]["model"] == "gpt-4o"


def test_fenced_answer_is_tolerated(judge_server: JudgeServer) -> None:
    judge_server.script = [text('```json\n{"bucket": "easy", "reason": "y"}\n```')]
    assert ask("m1", req(), cfg(judge_server.url)).value == {"bucket": "easy", "reason": "y"}


@pytest.mark.parametrize("reply, why", [
    (text("I think it is hard."), "p3_bucket: invalid JSON"),
    (text('Here: {"bucket": "hard", "reason": "x"}'), "p3_bucket: invalid JSON"),
    (text(""), "p3_bucket: empty answer"),
    (ok({"bucket": "medium", "reason": "x"}), "p3_bucket: schema violation at $.bucket: 'medium' is not one of"),
    (ok({"bucket": "hard"}), "p3_bucket: schema violation at $: 'reason' is a required property"),
    (ok({"bucket": "hard", "reason": "x", "extra": 1}), "p3_bucket: schema violation at $: Additional properties"),
])
def test_bad_answers_fail_and_are_not_retried(judge_server: JudgeServer, reply: object, why: str) -> None:
    judge_server.script = [reply]
    a = ask("m1", req(), cfg(judge_server.url, retries=3))
    assert not a.ok and a.value is None and a.error.startswith(why)
    assert judge_server.calls == 1 and a.attempts == 1 and a.tokens_in == 100  # tokens of a bad answer still count


def test_http_500_is_retried_then_succeeds(judge_server: JudgeServer) -> None:
    judge_server.script = [http(500), http(503), ok({"bucket": "hard", "reason": "x"})]
    a = ask("m1", req(), cfg(judge_server.url, retries=2))
    assert a.ok and a.attempts == 3 and judge_server.calls == 3


def test_http_500_exhausts_retries(judge_server: JudgeServer) -> None:
    judge_server.script = [http(500), http(500), ok({"bucket": "hard", "reason": "x"})]
    a = ask("m1", req(), cfg(judge_server.url, retries=1))
    assert not a.ok and "HTTP 500" in a.error and "(2 attempts)" in a.error and judge_server.calls == 2


def test_http_400_is_not_retried(judge_server: JudgeServer) -> None:
    judge_server.script = [http(400, "bad request"), ok({"bucket": "hard", "reason": "x"})]
    a = ask("m1", req(), cfg(judge_server.url, retries=2))
    assert not a.ok and "HTTP 400" in a.error and judge_server.calls == 1


def test_api_key_never_appears_in_an_error(judge_server: JudgeServer) -> None:
    judge_server.script = [http(401, f"invalid key {KEY}")]
    a = ask("m1", req(), cfg(judge_server.url, retries=2))
    assert not a.ok and "HTTP 401" in a.error and KEY not in a.error and judge_server.calls == 1


def test_slow_reply_times_out(judge_server: JudgeServer) -> None:
    judge_server.script = [slow(30, ok({"bucket": "hard", "reason": "x"}))]
    a = ask("m1", req(), cfg(judge_server.url, timeout=0.5))
    assert not a.ok and a.error == "p3_bucket: timeout after 0.5s" and judge_server.calls == 1


def test_trickling_reply_hits_the_total_deadline(judge_server: JudgeServer) -> None:
    """A server that sends its (valid) answer one byte at a time, each byte well within the timeout, never lets
    an inactivity timeout fire: the timeout is a total deadline per attempt, so the answer is a failed one (a
    timeout), never the trickled verdict. A retry meets the same deadline."""
    judge_server.script = [trickle(0.05, ok({"bucket": "hard", "reason": "x" * 200}))] * 2
    a = ask("m1", req(), cfg(judge_server.url, timeout=1.0, retries=1))
    assert not a.ok and a.value is None
    assert a.error == "p3_bucket: timeout after 1s (2 attempts)" and judge_server.calls == 2


def test_dead_port(dead_url: str) -> None:
    a = ask("m1", req(), cfg(dead_url, retries=1))
    assert not a.ok and a.error.startswith("p3_bucket: connection error") and a.attempts == 2


def test_cache_second_run_makes_no_http_call(judge_server: JudgeServer, tmp_path: Path) -> None:
    c = cfg(judge_server.url, cache_dir=tmp_path / "cache")
    judge_server.responder = lambda r: ok({"bucket": "hard", "reason": r["prompt"]})
    first = [ask("m1", req(f"prompt {i}"), c) for i in range(3)]
    assert all(a.ok and not a.cached and a.tokens_in == 100 for a in first) and judge_server.calls == 3
    second = [ask("m1", req(f"prompt {i}"), c) for i in range(3)]
    assert judge_server.calls == 3
    assert [a.value for a in second] == [a.value for a in first]
    assert all(a.cached and a.tokens_in == a.tokens_out == a.attempts == 0 and a.cost == 0 for a in second)
    assert submit("m1", req("prompt 0"), c).result().cached and judge_server.calls == 3
    # another model, or a changed prompt or schema, is a different entry
    ask("m2", req("prompt 0"), c)
    ask("m1", JudgeRequest("p3_bucket", "prompt 0", {**SCHEMA, "title": "t"}, "system text"), c)
    assert judge_server.calls == 5


def test_failed_answers_are_not_cached(judge_server: JudgeServer, tmp_path: Path) -> None:
    c = cfg(judge_server.url, cache_dir=tmp_path / "cache")
    judge_server.script = [text("garbage"), http(500), ok({"bucket": "medium", "reason": "x"}),
                           ok({"bucket": "easy", "reason": "x"})]
    assert [ask("m1", req(), c).ok for _ in range(4)] == [False, False, False, True]
    assert ask("m1", req(), c).cached and judge_server.calls == 4
    assert cache.path_for(tmp_path / "cache", cache.key("m1", req())).is_file()


def test_concurrency_reaches_eight_in_flight(judge_server: JudgeServer) -> None:
    judge_server.hold = 8
    judge_server.responder = lambda r: ok({"bucket": "hard", "reason": r["prompt"]})
    c = cfg(judge_server.url, concurrency=8)
    futures = [submit("m1", req(f"concurrent {i}"), c) for i in range(12)]
    done, _ = wait(futures, timeout=60)
    assert len(done) == 12 and all(f.result().ok for f in futures)
    assert judge_server.max_in_flight >= 8 and judge_server.calls == 12


def test_identical_requests_in_flight_share_one_call(judge_server: JudgeServer) -> None:
    judge_server.script = [slow(1.0, ok({"bucket": "hard", "reason": "x"}))]
    c = cfg(judge_server.url)
    a, b = submit("m1", req("same"), c), submit("m1", req("same"), c)
    first, second = a.result(timeout=30), b.result(timeout=30)
    assert judge_server.calls == 1 and first.ok and second.ok and first.value == second.value
    assert not first.cached and second.cached and second.tokens_in == 0


def test_missing_api_key_is_not_retried(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    a = ask("m1", req(), cfg(judge_server.url, api_key=None, retries=2))
    assert not a.ok and "no API key" in a.error and a.attempts == 1 and judge_server.calls == 0


def test_shutdown_cancels_queued_requests(judge_server: JudgeServer) -> None:
    judge_server.script = [slow(1.0, ok({"bucket": "hard", "reason": "x"}))]
    c = cfg(judge_server.url, concurrency=1)
    running = submit("m1", req("first"), c)
    queued, twin = submit("m1", req("second"), c), submit("m1", req("second"), c)
    shutdown()
    assert queued.cancelled()
    failed = _answer(queued, "m1")  # what the item gets: a failed answer, never a pass
    assert not failed.ok and failed.error == "no answer: CancelledError"
    shared = twin.result(timeout=10)
    assert not shared.ok and "CancelledError" in shared.error
    assert running.result(timeout=30).ok and judge_server.calls == 1
