"""LLM judges behind one small interface: :func:`ask` (blocking) and :func:`submit` (a shared thread pool).

Importing this package never imports litellm: the call path (``judges/call.py``) imports it on the first real
request, in the process (xdist worker) that needs it. Nothing here raises on a bad endpoint or a bad answer:
every outcome is an :class:`Answer`, ``ok=False`` with the reason in ``error``.

- A request is ``(purpose, prompt, schema, system)``. The prompt is complete and already clipped by the caller
  (:func:`clip` keeps both ends). The answer must be one JSON object satisfying ``schema`` (JSON Schema 2020-12);
  one Markdown code fence around the whole object is tolerated, nothing else (no prose around it, no duplicate
  keys, no NaN). An answer that is not valid is that judge failing.
- Retries: HTTP 5xx, 429, timeouts and connection errors are retried ``cfg.retries`` times with bounded
  exponential backoff (0.5 s, 1 s, 2 s … capped at 8 s). A 4xx, invalid JSON or a schema violation is never
  retried: the request is sent at temperature 0, so asking again mostly buys the same answer at full price.
- Cache: valid answers only, one file per request under ``cfg.cache_dir`` keyed by
  sha256(version, model, system, prompt, canonical schema JSON); files 0600, written atomically. A cached
  answer has ``cached=True`` and costs nothing (tokens 0, cost 0). Identical requests submitted while one is in
  flight share its call (the later ones are reported as cached).
- Configuration precedence (README "Judges"): models come from ``--trajaudit-judge`` / ini ``trajaudit_judge``
  only (environment variables never switch judges on); base URL from the option / ini, else ``$JUDGE_BASE_URL``,
  else ``$ADVISOR_BASE_URL``; the API key only from the environment variable named by
  ``--trajaudit-judge-api-key-env`` (default ``JUDGE_API_KEY``), else litellm's own provider variables
  (``OPENAI_API_KEY`` …). The key is never printed (``repr=False``) and is scrubbed from error messages.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = ["JudgeRequest", "Answer", "JudgeConfig", "ask", "submit", "clip", "default_cache_dir",
           "env_base_url", "env_model", "env_api_key", "cache_key", "DEFAULT_TIMEOUT", "DEFAULT_RETRIES",
           "DEFAULT_CONCURRENCY", "API_KEY_ENV"]

DEFAULT_TIMEOUT = 120.0  # total seconds per HTTP attempt (a deadline, not an inactivity timeout: call.py)
DEFAULT_RETRIES = 2  # extra attempts after a retryable failure
DEFAULT_CONCURRENCY = 8  # requests in flight per process
API_KEY_ENV = "JUDGE_API_KEY"


@dataclass(frozen=True)
class JudgeRequest:
    purpose: str  # "coherence", "leakage", "p3_bucket", "p11_prose", "p13_grade" (cache key, summary, errors)
    prompt: str  # the full user message, already clipped by the caller
    schema: dict[str, Any]  # JSON Schema the answer object must satisfy (invalid answer = that judge failed)
    system: str = ""


@dataclass(frozen=True)
class Answer:
    model: str
    ok: bool
    value: dict[str, Any] | None
    error: str | None  # ok=False: why (HTTP 500, timeout, invalid JSON, schema violation: path + message)
    cached: bool = False  # served without a new HTTP call (disk cache or a shared in-flight call)
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0  # USD from litellm's cost map; 0 when the model is unknown to it (tokens still counted)
    attempts: int = 0  # HTTP attempts made for this answer (0 when cached)


@dataclass(frozen=True)
class JudgeConfig:
    models: tuple[str, ...]
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    concurrency: int = DEFAULT_CONCURRENCY
    cache_dir: Path | None = None  # None: no disk cache
    provider: str = "openai"  # litellm provider prefix for a model name without a known provider

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("judge concurrency must be at least 1")
        if self.retries < 0:
            raise ValueError("judge retries must be 0 or more")
        if not self.timeout > 0:
            raise ValueError("judge timeout must be positive")


# --- environment precedence (the seed's advisor-audit.md "Run it"; README "Judges") ---------------------------------

def env_model(environ: Mapping[str, str] | None = None) -> str | None:
    """``$JUDGE_MODEL``, else ``$ADVISOR_MODEL`` (the advisor audit's default model; never used by the pytest
    options to switch judges on)."""
    env = os.environ if environ is None else environ
    return env.get("JUDGE_MODEL") or env.get("ADVISOR_MODEL") or None


def env_base_url(environ: Mapping[str, str] | None = None) -> str | None:
    """``$JUDGE_BASE_URL``, else ``$ADVISOR_BASE_URL``."""
    env = os.environ if environ is None else environ
    return env.get("JUDGE_BASE_URL") or env.get("ADVISOR_BASE_URL") or None


def env_api_key(var: str = API_KEY_ENV, environ: Mapping[str, str] | None = None) -> str | None:
    """The key in the environment variable named ``var`` (default ``JUDGE_API_KEY``); None leaves it to
    litellm's provider variables."""
    env = os.environ if environ is None else environ
    return env.get(var) or None


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/pytest-trajaudit/judges``, else ``~/.cache/pytest-trajaudit/judges``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(os.path.abspath(base)) / "pytest-trajaudit" / "judges"


# --- helpers for prompt builders ------------------------------------------------------------------------------

def clip(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to about ``limit`` characters keeping both ends (half each), with one marker line in the
    middle saying how many characters were left out; returns (text, whether it was clipped)."""
    if len(text) <= limit:
        return text, False
    keep = max(limit - len(f"\n[... {len(text)} characters omitted by trajaudit ...]\n"), 0)
    head, tail = keep - keep // 2, keep // 2
    marker = f"\n[... {len(text) - head - tail} characters omitted by trajaudit ...]\n"
    return text[:head] + marker + (text[len(text) - tail:] if tail else ""), True


def cache_key(model: str, req: JudgeRequest) -> str:
    from .cache import key

    return key(model, req)


# --- the call path --------------------------------------------------------------------------------------------

def ask(model: str, req: JudgeRequest, cfg: JudgeConfig) -> Answer:
    """One validated answer from ``model`` (disk cache first). Blocking; never raises."""
    try:
        from .cache import load, store
        from .call import ask_uncached

        hit = load(cfg.cache_dir, model, req)
        if hit is not None:
            return hit
        ans = ask_uncached(model, req, cfg)
        if ans.ok:
            store(cfg.cache_dir, model, req, ans)
        return ans
    except Exception as exc:  # a bug or an unexpected library error must still be an answer, never a raise
        return Answer(model, False, None, f"internal error: {type(exc).__name__}: {_scrub(str(exc), cfg)}")


_lock = threading.Condition()
_pools: dict[int, ThreadPoolExecutor] = {}
_inflight: dict[str, Future[Answer]] = {}
_queued = 0  # requests submitted to a pool and not finished (backpressure: see submit)


def max_queued(cfg: JudgeConfig) -> int:
    """At most this many requests wait or run at once per process; :func:`submit` blocks beyond it, so the
    prompts held in memory stay bounded however many jobs load before their judge items run."""
    return max(4 * cfg.concurrency, 32)


def _pool(concurrency: int) -> ThreadPoolExecutor:
    pool = _pools.get(concurrency)
    if pool is None:
        pool = _pools[concurrency] = ThreadPoolExecutor(concurrency, thread_name_prefix="trajaudit-judge")
    return pool


def _done_future(ans: Answer) -> Future[Answer]:
    f: Future[Answer] = Future()
    f.set_result(ans)
    return f


def submit(model: str, req: JudgeRequest, cfg: JudgeConfig) -> Future[Answer]:
    """Queue :func:`ask` on the process-wide pool for ``cfg.concurrency`` (created on first use; one pool per
    process, so each xdist worker has its own). A disk-cache hit resolves at once, without the pool. An
    identical request already in flight in this process is not sent again: the returned future resolves to its
    answer, marked cached with zero tokens and cost. Blocks only while :func:`max_queued` requests are already
    waiting or running. The future never raises."""
    global _queued
    try:
        from .cache import key, load

        k = f"{key(model, req)}:{cfg.base_url or ''}"
        hit = load(cfg.cache_dir, model, req)
    except Exception as exc:  # an unserialisable schema: a failed answer, not an exception
        return _done_future(Answer(model, False, None, f"invalid request: {type(exc).__name__}: {exc}"))
    if hit is not None:
        return _done_future(hit)
    try:  # import litellm here, in the caller's thread: its import must not run (and touch warnings) in a pool thread
        from .call import _lib

        _lib()
    except Exception as exc:  # litellm missing or broken: every request fails with the reason
        return _done_future(Answer(model, False, None, f"{req.purpose}: cannot import litellm (the 'judge' extra): "
                                   f"{type(exc).__name__}: {exc}"))
    with _lock:
        first = _inflight.get(k)
        if first is not None:
            shared: Future[Answer] = Future()

            def _copy(f: Future[Answer]) -> None:
                try:
                    a = f.result()
                except Exception as exc:  # cancelled at shutdown
                    a = Answer(model, False, None, f"{req.purpose}: no answer: {type(exc).__name__}")
                # the call is the first submitter's: this copy costs nothing (a failure stays a failure)
                shared.set_result(replace(a, cached=a.ok, tokens_in=0, tokens_out=0, cost=0.0, attempts=0))

            first.add_done_callback(_copy)
            return shared
        _lock.wait_for(lambda: _queued < max_queued(cfg))
        _queued += 1
        fut = _pool(cfg.concurrency).submit(ask, model, req, cfg)
        _inflight[k] = fut
    fut.add_done_callback(lambda f: _forget(k, f))
    return fut


def _forget(k: str, f: Future[Answer]) -> None:
    global _queued
    with _lock:
        _queued -= 1
        if _inflight.get(k) is f:
            del _inflight[k]
        _lock.notify_all()


def shutdown() -> None:
    """Cancel queued requests and let running ones finish in the background (end of a session: an interrupted
    run must not wait for judge answers nobody will read)."""
    with _lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.shutdown(wait=False, cancel_futures=True)


def _scrub(text: str, cfg: JudgeConfig) -> str:
    if cfg.api_key and len(cfg.api_key) >= 4:
        text = text.replace(cfg.api_key, "***")
    return text
