"""The one place that talks to litellm. Imported (and litellm with it) only on the first real judge request."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from . import Answer, JudgeConfig, JudgeRequest, _scrub
from .validate import AnswerError, parse_answer, schema_errors

BACKOFF_BASE = 0.5  # seconds before the first retry; doubled each time
BACKOFF_CAP = 8.0

_import_lock = threading.Lock()
_litellm: Any = None


def _lib() -> Any:
    """Import litellm once per process, quietly and offline: its bundled price map and no downloads of its own
    (``LITELLM_LOCAL_MODEL_COST_MAP`` / ``LITELLM_OFFLINE_MODE`` default to true; set them to false yourself to
    let it fetch the current price map)."""
    global _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_OFFLINE_MODE", "True")  # no catalog or tokenizer downloads of its own
            os.environ.setdefault("LITELLM_TELEMETRY", "False")
            import warnings

            # pydantic warns about litellm's own TypedDicts at import and on the first call: not the user's concern
            warnings.filterwarnings("ignore", message=r"Items? .* on TypedDict class .* `ReadOnly` qualifier",
                                    category=UserWarning)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import litellm

            for attr, value in (("suppress_debug_info", True), ("telemetry", False), ("set_verbose", False)):
                if hasattr(litellm, attr):
                    setattr(litellm, attr, value)
            _litellm = litellm
        return _litellm


def litellm_model(model: str, provider: str) -> str:
    """The name litellm gets: as given when it starts with a provider litellm knows (``anthropic/…``,
    ``openai/…``), else prefixed with ``provider`` (default ``openai``: any OpenAI-compatible endpoint)."""
    lib = _lib()
    first = model.split("/", 1)[0]
    known = {str(getattr(p, "value", p)) for p in lib.provider_list}
    return model if "/" in model and first in known else f"{provider}/{model}"


class DeadlineExceeded(Exception):
    """An attempt that did not finish within its total deadline (``cfg.timeout`` seconds)."""


def _complete(lib: Any, kwargs: dict[str, Any], deadline: float) -> Any:
    """``lib.completion(**kwargs)`` finished within ``deadline`` seconds in total, else :class:`DeadlineExceeded`.

    litellm's ``timeout`` reaches the HTTP client as a per-operation timeout: it fires only when the server is
    silent that long, so a server that trickles a byte now and then keeps a call going for as long as it likes.
    The call therefore runs in a daemon thread of its own and is waited for ``deadline`` seconds at most; a call
    past it is abandoned (its thread ends when the connection does; being a daemon thread, it never holds up
    the process's exit) and its late answer is never used."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["resp"] = lib.completion(**kwargs)
        except BaseException as exc:  # handed to the caller's thread, as if raised there
            box["exc"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="trajaudit-judge-call", daemon=True).start()
    if not done.wait(deadline):
        raise DeadlineExceeded(f"no complete answer within {deadline:g}s")
    if "exc" in box:
        raise box["exc"]
    return box["resp"]


def _classify(exc: BaseException, cfg: JudgeConfig) -> tuple[bool, str]:
    """(retryable, one-line reason) for an exception raised by litellm.completion."""
    if isinstance(exc, DeadlineExceeded):
        return True, f"timeout after {cfg.timeout:g}s"
    lib = _lib()
    status = getattr(exc, "status_code", None)
    msg = _scrub(" ".join(str(exc).split())[:240], cfg)
    if "missing credentials" in msg.lower() or "api_key client option must be set" in msg.lower():
        return False, ("no API key: set $JUDGE_API_KEY (or the variable --trajaudit-judge-api-key-env names) or the "
                       "provider's own variable (e.g. $OPENAI_API_KEY); any value for an endpoint without auth")
    chain = _chain(exc)
    names = {type(e).__name__ for e in chain}
    if isinstance(exc, lib.Timeout) or names & {"APITimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout"} \
            or ("timed out" in msg.lower() and status in (None, 408)):
        return True, f"timeout after {cfg.timeout:g}s"
    # litellm reports a refused or dropped connection as an InternalServerError (500) caused by the client's
    # connection error: tell it apart from a real HTTP 500 by the cause
    if isinstance(exc, lib.APIConnectionError) or names & {"APIConnectionError", "ConnectError", "RemoteProtocolError"} \
            or any(str(e).strip() == "Connection error." for e in chain[1:]):
        return True, f"connection error: {msg}"
    if isinstance(status, int):
        return status >= 500 or status in (408, 429), f"HTTP {status}: {msg}"
    if isinstance(exc, lib.RateLimitError | lib.InternalServerError | lib.ServiceUnavailableError):
        return True, f"{type(exc).__name__}: {msg}"
    return False, f"{type(exc).__name__}: {msg}"


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in out and len(out) < 10:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def _usage(resp: Any) -> tuple[int, int]:
    u = getattr(resp, "usage", None)
    if u is None:
        return 0, 0
    get = u.get if isinstance(u, dict) else lambda k, d=None: getattr(u, k, d)
    return int(get("prompt_tokens", 0) or 0), int(get("completion_tokens", 0) or 0)


def _cost(lib: Any, resp: Any) -> float:
    try:
        c = lib.completion_cost(completion_response=resp)
        return float(c) if c and c > 0 else 0.0
    except Exception:  # a model missing from litellm's price map: cost 0, tokens still counted
        return 0.0


def ask_uncached(model: str, req: JudgeRequest, cfg: JudgeConfig) -> Answer:
    """Send one request (with retries), parse and validate the answer. Never raises."""
    lib = _lib()
    messages = ([{"role": "system", "content": req.system}] if req.system else []) + \
        [{"role": "user", "content": req.prompt}]
    kwargs: dict[str, Any] = {
        "model": litellm_model(model, cfg.provider), "messages": messages, "timeout": cfg.timeout,
        "temperature": 0, "response_format": {"type": "json_object"}, "drop_params": True,
        "num_retries": 0, "max_retries": 0, "extra_headers": {"X-Trajaudit-Purpose": req.purpose},
    }
    if cfg.base_url:
        kwargs["api_base"] = cfg.base_url
    if cfg.api_key:
        kwargs["api_key"] = cfg.api_key
    attempts, tokens_in, tokens_out, cost = 0, 0, 0, 0.0
    error = "no attempt made"
    for attempt in range(cfg.retries + 1):
        if attempt:
            time.sleep(min(BACKOFF_BASE * 2 ** (attempt - 1), BACKOFF_CAP))
        attempts += 1
        try:
            resp = _complete(lib, kwargs, cfg.timeout)
        except Exception as exc:
            retryable, error = _classify(exc, cfg)
            if retryable:
                continue
            break
        t_in, t_out = _usage(resp)
        tokens_in, tokens_out, cost = tokens_in + t_in, tokens_out + t_out, cost + _cost(lib, resp)
        try:
            content = resp.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            content = None
        try:
            value = parse_answer(content)
        except AnswerError as exc:
            return Answer(model, False, None, f"{req.purpose}: {exc}", False, tokens_in, tokens_out, cost, attempts)
        bad = schema_errors(value, req.schema)
        if bad:
            return Answer(model, False, None, f"{req.purpose}: {bad}", False, tokens_in, tokens_out, cost, attempts)
        return Answer(model, True, value, None, False, tokens_in, tokens_out, cost, attempts)
    where = f" ({attempts} attempts)" if attempts > 1 else ""
    return Answer(model, False, None, f"{req.purpose}: {error}{where}", False, tokens_in, tokens_out, cost, attempts)
