"""The judges' disk cache: one JSON file per valid answer, keyed by sha256 of the request.

Layout: ``<cache_dir>/<key[:2]>/<key>.json``, directories 0700, files 0600, written to a temporary file in the
same directory and renamed into place (a concurrent reader sees the old file or the new one, never half of
one). A file that is unreadable, a symlink, oversized, not JSON, or whose value no longer satisfies the
request's schema is a miss (the request is sent again and the file replaced). Only valid answers are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from . import Answer, JudgeRequest

VERSION = "trajaudit-judge-1"
MAX_ENTRY_BYTES = 4 * 1024 * 1024


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def key(model: str, req: JudgeRequest) -> str:
    """sha256 over (format version, model, system, prompt, canonical schema JSON). The purpose is a label only."""
    blob = canonical([VERSION, model, req.system, req.prompt, req.schema])
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def path_for(cache_dir: Path, k: str) -> Path:
    return cache_dir / k[:2] / f"{k}.json"


def load(cache_dir: Path | None, model: str, req: JudgeRequest) -> Answer | None:
    if cache_dir is None:
        return None
    from .validate import schema_errors

    p = path_for(cache_dir, key(model, req))
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            doc = json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("value"), dict):
        return None
    if schema_errors(doc["value"], req.schema):
        return None
    return Answer(model, True, doc["value"], None, cached=True)


def store(cache_dir: Path | None, model: str, req: JudgeRequest, ans: Answer) -> None:
    """Write a valid answer; any OS error is ignored (the cache is an optimisation, never a requirement)."""
    if cache_dir is None or not ans.ok or ans.value is None:
        return
    k = key(model, req)
    p = path_for(cache_dir, k)
    doc = {"version": VERSION, "model": model, "purpose": req.purpose, "value": ans.value,
           "tokens_in": ans.tokens_in, "tokens_out": ans.tokens_out, "cost": ans.cost}
    try:
        os.makedirs(p.parent, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=p.parent)  # mkstemp: mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(canonical(doc))
            os.chmod(tmp, 0o600)
            os.replace(tmp, p)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return
