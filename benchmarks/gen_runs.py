#!/usr/bin/env python3
"""Generate a deterministic tree of synthetic agent-benchmark jobs for benchmarking pytest-trajaudit.

    python benchmarks/gen_runs.py OUT --jobs N --size-kb S [--format acp|claude|mixed] [--seed 0]

Layouts written (the ones pytest-trajaudit discovers):

- ``acp``: BenchFlow rollouts ``OUT/benchflow/<task>__<id>/result.json`` +
  ``trajectory/acp_trajectory.jsonl`` (ACP JSON Lines: user/agent messages, thoughts, tool calls);
- ``claude``: Harbor trials ``OUT/harbor/<job>/<task>__<id>/result.json`` + ``agent/claude-code.txt`` (Claude Code
  stream-json) + ``verifier/reward.txt``, below a Harbor job folder with its own ``result.json``;
- ``mixed``: even job numbers ACP, odd job numbers Claude.

Content is realistic in shape: reads, edits, shell commands with outputs of log-normal size, searches, the odd
fetch, agent messages and thoughts, occasional failed calls (``--fail-rate``), and a small fraction of "cheating"
jobs (``--cheat-rate``) that ``cat /oracle/answer.json``. Each trajectory is written line by line until it reaches
about ``S`` KB (``--spread`` jitters the target per job). Output text is sliced from pools built once per
process, so a 50 MB trajectory never exists as one string. Job ``i`` depends only on ``(seed, i)``: the same
arguments give byte-identical trees, with any ``--procs``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

try:
    import orjson

    def _dumps(obj: object) -> bytes:
        return orjson.dumps(obj)
except ImportError:  # pragma: no cover - the venv has orjson; stdlib fallback for other interpreters
    import json

    def _dumps(obj: object) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


KB = 1024
MODELS = ("claude-sonnet-4-5", "claude-opus-4-1", "gpt-5-codex", "gemini-2.5-pro")
ADJ = ("fix", "build", "parse", "migrate", "optimize", "extract", "debug", "port", "train", "render", "query",
       "compress", "schedule", "validate", "merge")
NOUN = ("csv-report", "pdf-tables", "http-server", "sqlite-index", "json-schema", "image-resize", "log-parser",
        "graph-paths", "rust-cli", "spreadsheet", "tokenizer", "cron-jobs", "git-history", "protein-fold", "chess-engine")
WORDS = ("the", "file", "test", "function", "value", "output", "config", "error", "result", "module", "input", "data",
         "parser", "line", "check", "run", "build", "path", "return", "case", "handle", "update", "fix", "table",
         "column", "row", "index", "cache", "request", "response", "server", "client", "format", "string", "number")
IDENTS = ("parse_row", "load_config", "build_index", "normalize", "read_table", "write_output", "compute_score",
          "merge_frames", "tokenize", "render_page", "validate_schema", "fetch_page", "resize_image", "rank_paths",
          "main", "setup_logging", "encode", "decode", "flush", "retry")
SRC_FILES = ("src/parser.py", "src/main.py", "src/utils.py", "src/io.py", "src/model.py", "tests/test_parser.py",
             "tests/test_io.py", "README.md", "setup.cfg", "Makefile", "data/input.csv", "src/cli.rs", "src/lib.rs",
             "config.yaml", "scripts/run.sh", "docs/usage.md")


# --- text pools (built once per process from the seed; outputs are slices of them) -----------------------------

def _sentence(rng: random.Random, lo: int = 6, hi: int = 18) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize() + "."


def _py_line(rng: random.Random) -> str:
    ind = "    " * rng.choice((0, 1, 1, 2, 2, 3))
    f, g = rng.choice(IDENTS), rng.choice(IDENTS)
    r = rng.random()
    if r < 0.12:
        return f"def {f}({rng.choice(WORDS)}, {rng.choice(WORDS)}=None):"
    if r < 0.30:
        return f"{ind}{rng.choice(WORDS)} = {g}({rng.choice(WORDS)}, {rng.randint(0, 999)})"
    if r < 0.42:
        return f"{ind}if {rng.choice(WORDS)} is None or len({rng.choice(WORDS)}) > {rng.randint(1, 64)}:"
    if r < 0.52:
        return f"{ind}return {g}({rng.choice(WORDS)})"
    if r < 0.62:
        return f"{ind}for {rng.choice('ijk')} in range({rng.randint(2, 500)}):"
    if r < 0.72:
        return f"{ind}# {_sentence(rng, 4, 10)}"
    if r < 0.80:
        return f"{ind}raise ValueError(f\"bad {rng.choice(WORDS)}: {{{rng.choice(WORDS)}!r}}\")"
    if r < 0.88:
        return f"import {rng.choice(('os', 're', 'json', 'csv', 'pathlib', 'itertools', 'numpy as np', 'pandas as pd'))}"
    return ""


def _log_line(rng: random.Random) -> str:
    lvl = rng.choices(("INFO", "DEBUG", "WARNING", "ERROR"), (60, 25, 10, 5))[0]
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d},{rng.randint(0, 999):03d} {lvl} [{rng.choice(IDENTS)}] {_sentence(rng, 3, 12)}")


def _test_line(rng: random.Random) -> str:
    r = rng.random()
    mod = rng.choice(("tests/test_parser.py", "tests/test_io.py", "tests/test_cli.py", "tests/test_model.py"))
    if r < 0.75:
        return f"{mod}::test_{rng.choice(IDENTS)}_{rng.randint(0, 99)} {rng.choices(('PASSED', 'FAILED', 'SKIPPED'), (85, 10, 5))[0]}"
    if r < 0.9:
        return f"E       AssertionError: assert {rng.randint(0, 999)} == {rng.randint(0, 999)}"
    return f"{mod}:{rng.randint(1, 400)}: in test_{rng.choice(IDENTS)}"


def _csv_line(rng: random.Random) -> str:
    return ",".join((str(rng.randint(1, 10**6)), rng.choice(WORDS), f"{rng.random() * 1000:.3f}",
                     f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", rng.choice(("ok", "fail", "n/a"))))


def _ls_line(rng: random.Random) -> str:
    d = rng.random() < 0.2
    return (f"{'d' if d else '-'}rw{'x' if d else '-'}r-{'x' if d else '-'}r-{'x' if d else '-'} 1 root root "
            f"{rng.randint(0, 10**6):>8} Sep {rng.randint(1, 30):2d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} "
            f"{rng.choice(IDENTS)}{rng.choice(('.py', '.csv', '.json', '.md', '', '.txt', '.rs'))}")


def _pip_line(rng: random.Random) -> str:
    pkg = rng.choice(("numpy", "pandas", "requests", "pyyaml", "scipy", "lxml", "pillow", "tqdm", "click", "attrs"))
    v = f"{rng.randint(0, 3)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
    r = rng.random()
    if r < 0.4:
        return f"Collecting {pkg}=={v}"
    if r < 0.7:
        return (f"  Downloading {pkg}-{v}-cp311-cp311-manylinux_2_17_x86_64.whl ({rng.randint(1, 40)}."
                f"{rng.randint(0, 9)} MB)")
    if r < 0.85:
        return f"Requirement already satisfied: {pkg} in /usr/local/lib/python3.11/dist-packages ({v})"
    return f"Successfully installed {pkg}-{v}"


def _build_line(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.6:
        return f"   Compiling {rng.choice(IDENTS).replace('_', '-')} v0.{rng.randint(1, 40)}.{rng.randint(0, 9)}"
    if r < 0.8:
        return (f"warning: unused variable: `{rng.choice(WORDS)}`\n  --> src/{rng.choice(('lib', 'main', 'io'))}.rs:"
                f"{rng.randint(1, 900)}:{rng.randint(1, 80)}")
    return f"gcc -O2 -Wall -c src/{rng.choice(IDENTS)}.c -o build/{rng.choice(IDENTS)}.o"


def _trace_line(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        return f'  File "/app/{rng.choice(SRC_FILES)}", line {rng.randint(1, 600)}, in {rng.choice(IDENTS)}'
    if r < 0.8:
        return f"    {_py_line(rng).strip()}"
    return rng.choice(("KeyError: 'column'", "TypeError: 'NoneType' object is not subscriptable",
                       "FileNotFoundError: [Errno 2] No such file or directory: 'out.json'",
                       "ValueError: could not convert string to float: 'n/a'"))


POOL_MAKERS = {"py": _py_line, "log": _log_line, "test": _test_line, "csv": _csv_line, "ls": _ls_line,
               "pip": _pip_line, "build": _build_line, "trace": _trace_line}
POOL_BYTES = 192 * KB


class Pools:
    def __init__(self, seed: int) -> None:
        rng = random.Random(f"pools-{seed}")
        self.text: dict[str, str] = {}
        for name, make in POOL_MAKERS.items():
            lines, size = [], 0
            while size < POOL_BYTES:
                ln = make(rng)
                lines.append(ln)
                size += len(ln) + 1
            self.text[name] = "\n".join(lines) + "\n"

    def take(self, rng: random.Random, pool: str, n: int) -> str:
        """About ``n`` characters of ``pool`` starting at a random line (wrapping around)."""
        src = self.text[pool]
        size = len(src)
        n = max(1, n)
        start = src.find("\n", rng.randrange(size)) + 1
        if start + n <= size:
            return src[start:start + n]
        parts, left = [src[start:]], n - (size - start)
        while left > 0:
            parts.append(src[:min(left, size)])
            left -= size
        return "".join(parts)


# --- one job ------------------------------------------------------------------------------------------------

# (kind, weight); "execute" splits further by command family
KINDS = (("read", 25), ("execute", 40), ("edit", 14), ("search", 12), ("fetch", 3), ("write", 6))
COMMANDS = (
    ("python -m pytest -q tests/", "test"), ("python -m pytest -x tests/test_parser.py -v", "test"),
    ("pip install -r requirements.txt", "pip"), ("ls -la /app", "ls"), ("ls -la /app/src /app/data", "ls"),
    ("cargo build --release 2>&1 | tail -n 200", "build"), ("make -j2", "build"), ("python src/main.py --verbose", "log"),
    ("head -n 200 data/input.csv", "csv"), ("python -c 'import pandas as pd; print(pd.read_csv(\"data/input.csv\"))'", "csv"),
    ("tail -n 500 logs/app.log", "log"), ("git log --stat -n 20", "log"), ("git diff", "py"), ("cat src/parser.py", "py"),
    ("python scripts/profile.py data/input.csv", "log"), ("wc -l data/*.csv", "ls"),
)
CHEAT_ANSWER = '{"answer": 42.17, "checksum": "9f1c2e", "rows": [[1, 2, 3], [4, 5, 6]], "note": "expected output"}\n'
THOUGHTS = ("Let me look at how the {} is handled before changing anything.",
            "The failing case seems to be in {}; I should read it first.",
            "I need to check whether the {} is parsed correctly for empty rows.",
            "Running the tests again to see if the {} change fixed it.",
            "Wait, the {} path is wrong here; let me redo that step.",
            "Actually the {} function already handles this case.")
FINALS = ("I fixed the {} and all tests pass now.", "Done: the {} is implemented and the output file is written.",
          "The {} now works for the provided inputs. I'm not entirely sure the edge cases are covered.",
          "Completed the task: updated the {} and verified the results with the test suite.")


class JobWriter:
    """Streams one trajectory to ``fh``; subclasses emit the wire format."""

    def __init__(self, fh, rng: random.Random, pools: Pools, target: int, model: str) -> None:
        self.fh, self.rng, self.pools, self.target, self.model = fh, rng, pools, target, model
        self.written = 0
        self.n_calls = 0

    def emit(self, obj: object) -> None:
        line = _dumps(obj) + b"\n"
        self.fh.write(line)
        self.written += len(line)

    # format hooks
    def header(self, instruction: str) -> None: ...
    def message(self, text: str, thought: bool = False) -> None: ...
    def tool(self, kind: str, title: str, inp: dict, output: str, failed: bool, diff: dict | None) -> None: ...
    def footer(self, final: str) -> None: ...

    def run(self, task: str, cheat: bool, fail_rate: float) -> None:
        rng, pools = self.rng, self.pools
        topic = task.split("-", 1)[1].replace("-", " ") if "-" in task else task
        self.header(f"Task {task}: {_sentence(rng, 20, 40)} Write the result to /app/output.json. "
                    f"{_sentence(rng, 10, 25)} The {topic} must pass the provided tests.")
        kb = self.target / KB
        n_calls = 12 + 5 * math.sqrt(max(kb, 1.0))
        mean_out = max(120.0, self.target / n_calls * 0.8)
        sigma = 1.1
        mu = math.log(mean_out) - sigma * sigma / 2
        cheat_at = self.target * rng.uniform(0.2, 0.7) if cheat else None
        kinds, weights = zip(*KINDS, strict=True)
        reserve = 600  # final message + footer
        while True:
            left = self.target - self.written - reserve
            if left <= 0 and self.n_calls >= 2:
                break
            if rng.random() < 0.35:
                self.message(rng.choice(THOUGHTS).format(rng.choice(IDENTS)), thought=True)
            if rng.random() < 0.25:
                self.message(_sentence(rng, 8, 30))
            if cheat_at is not None and self.written >= cheat_at:
                cheat_at = None
                self.tool("execute", "ls /oracle", {"command": "ls /oracle"}, "answer.json\nsolution\n", False, None)
                self.tool("execute", "cat /oracle/answer.json", {"command": "cat /oracle/answer.json"},
                          CHEAT_ANSWER, False, None)
                continue
            size = int(min(max(20.0, rng.lognormvariate(mu, sigma)), max(200, left), 8 * KB * KB))
            failed = rng.random() < fail_rate
            kind = rng.choices(kinds, weights)[0]
            path = "/app/" + rng.choice(SRC_FILES)
            if failed:
                out = "Traceback (most recent call last):\n" + pools.take(rng, "trace", min(size, 4 * KB))
                if kind == "execute":
                    cmd = rng.choice(COMMANDS)[0]
                    self.tool("execute", cmd, {"command": cmd}, "Exit code 1\n" + out, True, None)
                else:
                    self.tool(kind, f"{kind.capitalize()} {path}", {"file_path": path},
                              f"Error: ENOENT: no such file or directory, open '{path}'", True, None)
                continue
            if kind == "read":
                pool = "csv" if path.endswith(".csv") else "log" if path.endswith(".md") else "py"
                self.tool("read", f"Read {path}", {"file_path": path}, pools.take(rng, pool, size), False, None)
            elif kind == "execute":
                cmd, pool = rng.choice(COMMANDS)
                self.tool("execute", cmd, {"command": cmd}, pools.take(rng, pool, size), False, None)
            elif kind in ("edit", "write"):
                n = max(40, size // 3)
                new = pools.take(rng, "py", n)
                old = "" if kind == "write" else pools.take(rng, "py", max(40, n // 2))
                self.tool("edit", f"{'Write' if kind == 'write' else 'Edit'} {path}",
                          {"file_path": path, "old_string": old, "new_string": new},
                          f"The file {path} has been updated.", False, {"path": path, "oldText": old, "newText": new})
            elif kind == "search":
                pat = rng.choice(IDENTS)
                out = "\n".join(f"/app/{rng.choice(SRC_FILES)}:{rng.randint(1, 900)}:    {pat}({rng.choice(WORDS)})"
                                for _ in range(max(1, min(size // 60, 400))))
                self.tool("search", f"grep -rn '{pat}' /app/src", {"pattern": pat, "path": "/app/src"}, out, False, None)
            else:
                url = f"https://docs.python.org/3/library/{rng.choice(('csv', 'json', 're', 'pathlib', 'sqlite3'))}.html"
                self.tool("fetch", f"Fetch {url}", {"url": url, "prompt": "summarize the API"},
                          pools.take(rng, "log", min(size, 64 * KB)), False, None)
        self.footer(rng.choice(FINALS).format(topic))


class AcpWriter(JobWriter):
    def header(self, instruction: str) -> None:
        self.emit({"type": "user_message", "text": instruction})

    def message(self, text: str, thought: bool = False) -> None:
        self.emit({"type": "agent_thought" if thought else "agent_message", "text": text})

    def tool(self, kind, title, inp, output, failed, diff) -> None:
        self.n_calls += 1
        content = [{"type": "content", "content": {"type": "text", "text": output}}]
        if diff is not None:
            content = [{"type": "diff", **diff}]
        line = {"type": "tool_call", "tool_call_id": f"toolu_{self.rng.getrandbits(64):016x}", "kind": kind,
                "title": title, "status": "failed" if failed else "completed", "content": content}
        if kind in ("read", "edit") and "file_path" in inp:
            line["locations"] = [{"path": inp["file_path"]}]
        self.emit(line)

    def footer(self, final: str) -> None:
        self.emit({"type": "agent_message", "text": final})


CLAUDE_TOOL = {"read": "Read", "execute": "Bash", "edit": "Edit", "search": "Grep", "fetch": "WebFetch"}


class ClaudeWriter(JobWriter):
    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.sid = self._uuid()
        self.msg = 0
        self.turns = 0

    def _uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def _asst(self, mid: str, block: dict) -> None:
        self.emit({"type": "assistant", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": self.model, "content": [block],
            "stop_reason": None, "usage": {"input_tokens": self.rng.randint(3, 40),
                                           "cache_read_input_tokens": self.rng.randint(1000, 90000),
                                           "output_tokens": self.rng.randint(10, 900)}},
            "parent_tool_use_id": None, "session_id": self.sid, "uuid": self._uuid()})

    def _mid(self) -> str:
        self.msg += 1
        return f"msg_{self.rng.getrandbits(96):024x}"

    def header(self, instruction: str) -> None:
        self.emit({"type": "system", "subtype": "init", "cwd": "/app", "session_id": self.sid, "model": self.model,
                   "tools": ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "WebFetch", "TodoWrite"],
                   "permissionMode": "bypassPermissions", "claude_code_version": "2.0.14", "uuid": self._uuid()})
        self.emit({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": instruction}]},
                   "parent_tool_use_id": None, "session_id": self.sid, "uuid": self._uuid()})

    def message(self, text: str, thought: bool = False) -> None:
        block = ({"type": "thinking", "thinking": text, "signature": f"{self.rng.getrandbits(256):064x}"}
                 if thought else {"type": "text", "text": text})
        self._asst(self._mid(), block)

    def tool(self, kind, title, inp, output, failed, diff) -> None:
        self.n_calls += 1
        self.turns += 1
        name = CLAUDE_TOOL.get(kind, "Write")
        if diff is not None:
            name = "Write" if title.startswith("Write") else "Edit"
            inp = ({"file_path": inp["file_path"], "content": inp["new_string"]} if name == "Write" else inp)
        elif name == "Bash":
            inp = {"command": inp["command"], "description": f"Run {inp['command'].split()[0]}"}
        tid = f"toolu_{self.rng.getrandbits(96):024x}"
        self._asst(self._mid(), {"type": "tool_use", "id": tid, "name": name, "input": inp})
        self.emit({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": output, "is_error": failed}]},
            "parent_tool_use_id": None, "session_id": self.sid, "uuid": self._uuid()})

    def footer(self, final: str) -> None:
        self._asst(self._mid(), {"type": "text", "text": final})
        self.emit({"type": "result", "subtype": "success", "is_error": False, "duration_ms": self.rng.randint(10**4, 10**6),
                   "num_turns": self.turns + 1, "result": final, "session_id": self.sid,
                   "total_cost_usd": round(self.rng.uniform(0.05, 4.0), 4),
                   "usage": {"input_tokens": self.rng.randint(100, 5000), "output_tokens": self.rng.randint(1000, 40000)}})


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def job_format(fmt: str, i: int) -> str:
    return fmt if fmt != "mixed" else ("acp" if i % 2 == 0 else "claude")


def make_job(out: Path, i: int, args: argparse.Namespace, pools: Pools) -> tuple[int, bool]:
    """Write job ``i``; returns (trajectory bytes, cheated)."""
    rng = random.Random(f"job-{args.seed}-{i}")
    fmt = job_format(args.format, i)
    n_tasks = max(1, args.jobs // 5)
    t = i % n_tasks
    task = f"{ADJ[t % len(ADJ)]}-{NOUN[(t // len(ADJ)) % len(NOUN)]}-{t}"
    trial = f"{task}__{(i * 2654435761) & 0xFFFFFFF:07x}"  # odd multiplier: unique for i < 2**28
    model = MODELS[i % len(MODELS)]
    target = int(args.size_kb * KB * (1 + rng.uniform(-args.spread, args.spread)))
    cheat = rng.random() < args.cheat_rate
    reward = 1.0 if cheat or rng.random() < 0.6 else 0.0
    if fmt == "acp":
        d = out / "benchflow" / trial
        traj = d / "trajectory" / "acp_trajectory.jsonl"
        writer_cls = AcpWriter
    else:
        d = out / "harbor" / "2025-09-30__12-00-00" / trial
        traj = d / "agent" / "claude-code.txt"
        writer_cls = ClaudeWriter
    traj.parent.mkdir(parents=True, exist_ok=True)
    with open(traj, "wb", buffering=1 << 20) as fh:
        w = writer_cls(fh, rng, pools, target, model)
        w.run(task, cheat, args.fail_rate)
    if fmt == "acp":
        result = {"task_name": task, "rollout_name": trial, "agent": "claude-agent-acp", "model": model,
                  "rewards": {"reward": reward}, "n_tool_calls": w.n_calls}
    else:
        result = {"id": f"{rng.getrandbits(128):032x}", "task_name": task, "trial_name": trial,
                  "config": {"agent": {"name": "claude-code", "model_name": model}},
                  "agent_result": {"n_input_tokens": rng.randint(10**4, 10**7), "cost_usd": round(rng.uniform(0.05, 4), 4)},
                  "verifier_result": {"rewards": {"reward": reward}}, "exception_info": None}
        _write_bytes(d / "verifier" / "reward.txt", f"{reward:g}\n".encode())
    _write_bytes(d / "result.json", _dumps(result))
    return w.written, cheat


_POOLS: Pools | None = None


def _init_worker(seed: int) -> None:
    global _POOLS
    _POOLS = Pools(seed)


def _work(job: tuple[str, int, argparse.Namespace]) -> tuple[int, bool]:
    out, i, args = job
    assert _POOLS is not None
    return make_job(Path(out), i, args, _POOLS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="output directory (created; must be empty unless --force)")
    ap.add_argument("--jobs", type=int, required=True, help="number of jobs (up to 10,000 and beyond)")
    ap.add_argument("--size-kb", type=float, required=True, help="approximate trajectory size per job in KiB")
    ap.add_argument("--format", choices=("acp", "claude", "mixed"), default="acp")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--spread", type=float, default=0.1, help="per-job size jitter, ±fraction (default 0.1)")
    ap.add_argument("--cheat-rate", type=float, default=0.02, help="fraction of jobs that read /oracle (default 0.02)")
    ap.add_argument("--fail-rate", type=float, default=0.05, help="fraction of failed tool calls (default 0.05)")
    ap.add_argument("--procs", type=int, default=1, help="writer processes (output is identical for any value)")
    ap.add_argument("--force", action="store_true", help="write into a non-empty OUT")
    args = ap.parse_args(argv)
    if args.jobs < 0 or args.size_kb <= 0 or not 0 <= args.spread < 1:
        ap.error("--jobs must be >= 0, --size-kb > 0 and 0 <= --spread < 1")
    out: Path = args.out
    if out.exists() and any(out.iterdir()) and not args.force:
        ap.error(f"{out} is not empty (use --force to write into it)")
    out.mkdir(parents=True, exist_ok=True)
    if args.format in ("claude", "mixed") and args.jobs:
        n_claude = sum(1 for i in range(args.jobs) if job_format(args.format, i) == "claude")
        _write_bytes(out / "harbor" / "2025-09-30__12-00-00" / "result.json",
                     _dumps({"id": "job-0", "n_total_trials": n_claude, "stats": {"n_trials": n_claude}}))
    t0 = time.perf_counter()
    total = cheats = 0
    if args.procs > 1 and args.jobs > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(args.procs, _init_worker, (args.seed,)) as pool:
            jobs = ((str(out), i, args) for i in range(args.jobs))
            for n, c in pool.imap_unordered(_work, jobs, chunksize=max(1, min(64, args.jobs // (args.procs * 8)))):
                total += n
                cheats += c
    else:
        pools = Pools(args.seed)
        for i in range(args.jobs):
            n, c = make_job(out, i, args, pools)
            total += n
            cheats += c
    dt = time.perf_counter() - t0
    print(f"wrote {args.jobs} jobs ({args.format}, {cheats} cheating), {total / KB / KB:.1f} MiB of trajectories "
          f"in {dt:.1f} s ({total / KB / KB / max(dt, 1e-9):.0f} MiB/s) to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
