"""Turn the ``--trajaudit-judge*`` options (or their ini twins) into a :class:`JudgeConfig`. No pytest here:
``adapter/configure.py`` passes a getter and turns :class:`JudgeOptionError` into a usage error."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import (
    API_KEY_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    JudgeConfig,
    default_cache_dir,
    env_api_key,
    env_base_url,
)

OFF = ("off", "none", "no", "false", "0")


class JudgeOptionError(ValueError):
    """A judge option that cannot be used (one line)."""


def _num(raw: Any, name: str, kind: type, minimum: float, default: float) -> Any:
    if raw is None or str(raw).strip() == "":
        return kind(default)
    try:
        v = kind(str(raw).strip())
    except ValueError:
        raise JudgeOptionError(f"{name} needs a number, got {raw!r}") from None
    if v < minimum or (kind is float and v <= 0):
        raise JudgeOptionError(f"{name} must be {'positive' if kind is float else f'at least {minimum}'}, got {raw!r}")
    return v


def build(get: Callable[[str], Any], *, rules_model: str | None = None, rules_enabled: bool = False,
          environ: Mapping[str, str] | None = None, base: Path | None = None) -> JudgeConfig | None:
    """``get(name)`` returns the option value, else its ini twin, else None/"" (names without ``trajaudit_``:
    judge, judge_base_url, judge_timeout, judge_retries, judge_concurrency, judge_cache, judge_api_key_env,
    judge_provider). Models: the options (repeatable) or ini lines, in order, duplicates dropped; else the rules
    file's ``judge.model`` when its ``judge.enabled`` is true. None: no judge (nothing is ever sent)."""
    env = os.environ if environ is None else environ
    raw = get("judge") or []
    if isinstance(raw, str):
        raw = raw.splitlines()
    models = [m.strip() for m in raw if m and m.strip()]
    if not models and rules_enabled:
        if not rules_model:
            raise JudgeOptionError("the rules file sets judge.enabled: true but no judge.model; name a model there "
                                   "or pass --trajaudit-judge MODEL")
        models = [rules_model]
    if not models:
        return None
    models = list(dict.fromkeys(models))
    base_url = str(get("judge_base_url") or "").strip() or env_base_url(env)
    key_env = str(get("judge_api_key_env") or "").strip() or API_KEY_ENV
    provider = str(get("judge_provider") or "").strip() or "openai"
    cache_raw = str(get("judge_cache") or "").strip()
    if cache_raw.lower() in OFF:
        cache_dir = None
    elif cache_raw:
        p = Path(os.path.expanduser(cache_raw))
        cache_dir = Path(os.path.abspath(p if p.is_absolute() or base is None else base / p))
    else:
        cache_dir = default_cache_dir(env)
    return JudgeConfig(
        models=tuple(models), base_url=base_url, api_key=env_api_key(key_env, env),
        timeout=_num(get("judge_timeout"), "--trajaudit-judge-timeout", float, 0, DEFAULT_TIMEOUT),
        retries=_num(get("judge_retries"), "--trajaudit-judge-retries", int, 0, DEFAULT_RETRIES),
        concurrency=_num(get("judge_concurrency"), "--trajaudit-judge-concurrency", int, 1, DEFAULT_CONCURRENCY),
        cache_dir=cache_dir, provider=provider)
