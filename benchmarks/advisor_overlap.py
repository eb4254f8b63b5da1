"""Throughput of the advisor audit's mechanical checks (ADV-3 patterns + ADV-4 privileged overlap).

    python benchmarks/advisor_overlap.py [--mb 5 20] [--lines 5000] [--repeat 3]

For each size it writes a synthetic attempt (a JSON Lines trajectory of ACP-like events whose tool calls carry
JSON-encoded arguments, so the haystack includes decoded strings one and two layers deep) and a task whose
``solution/`` and ``tests/`` hold ``--lines`` distinct privileged lines (≥ 40 characters); three of them are planted
in the trajectory (one inside a doubly encoded argument). It prints MB/s of the trajectory for:
- ``scan``: the mechanical checks alone (:func:`pytest_trajaudit.advisor.core.prepare`: haystack + Aho–Corasick
  + mention patterns + the judges' clipped copies), the task already loaded;
- ``audit``: ``run_audit(..., no_judge=True)`` end to end (read, strict decode and parse, reward, scan);
- ``orjson``: ``orjson.loads`` of each line, a floor for anything that decodes the file.
Only figures are printed; nothing asserts a time. Deterministic content (seeded).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_trajaudit.advisor.core import prepare, read_trajectory, run_audit, task_side  # noqa: E402
from pytest_trajaudit.advisor.layout import DEFAULT_LAYOUT  # noqa: E402

WORDS = ("rows", "txn", "commit_ts", "current_wts", "result", "value", "index", "parse", "config", "buffer",
         "handler", "request", "response", "session", "update", "select", "where", "return", "import", "assert")


def privileged(n: int, rng: random.Random) -> list[str]:
    return [f"    check_{i:05d} = " + " ".join(rng.choice(WORDS) for _ in range(8)) + f"  # case {i}"
            for i in range(n)]


def write_task(root: Path, lines: list[str]) -> Path:
    task = root / "task"
    (task / "solution").mkdir(parents=True)
    (task / "tests").mkdir()
    half = len(lines) // 2
    (task / "instruction.md").write_text("Compute the answer and write it to /root/out.json.\n")
    (task / "solution" / "solve.py").write_text("\n".join(lines[:half]) + "\n")
    (task / "tests" / "test_outputs.py").write_text("\n".join(lines[half:]) + "\n")
    return task


def write_attempt(root: Path, mb: float, lines: list[str], rng: random.Random) -> Path:
    att = root / "attempt"
    (att / "agent").mkdir(parents=True)
    target = int(mb * 1024 * 1024)
    size = 0
    i = 0
    plants = {50: lines[7], 200: lines[len(lines) // 2 + 3], 400: lines[-1]}
    with open(att / "agent" / "trajectory.jsonl", "w", encoding="utf-8") as fh:
        while size < target:
            body = "\n".join(" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(rng.randint(5, 60)))
            if i in plants:
                body += "\n" + plants[i]
            cmd = {"command": f"grep -n {rng.choice(WORDS)} src/*.py", "cwd": "/app"}
            args = json.dumps({"tool": "bash", "input": json.dumps(cmd)})
            ev = {"type": "tool_call", "tool_call_id": f"t{i}", "kind": "execute", "title": "Terminal",
                  "status": "completed", "rawInput": args,
                  "content": [{"type": "content", "content": {"type": "text", "text": body}}]}
            line = json.dumps(ev) + "\n"
            fh.write(line)
            size += len(line)
            i += 1
    (att / "result.json").write_text(json.dumps({"verifier_result": {"rewards": {"reward": 1.0}}}))
    return att


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, nargs="+", default=[5.0, 20.0])
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rng = random.Random(0)
    plines = privileged(args.lines, rng)
    print(f"privileged lines: {args.lines}; best of {args.repeat}")
    print(f"{'MiB':>6} {'scan MB/s':>10} {'audit MB/s':>11} {'orjson MB/s':>12} {'hits':>5}")
    for mb in args.mb:
        root = Path(tempfile.mkdtemp(prefix="trajaudit-advbench-"))
        try:
            task = write_task(root, plines)
            att = write_attempt(root, mb, plines, rng)
            traj = att / "agent" / "trajectory.jsonl"
            size = traj.stat().st_size / 1e6
            side = task_side(task, DEFAULT_LAYOUT)
            text, _kind, _events = read_trajectory(traj)
            hits = prepare(text, side, judged=False, reward=1.0, reward_source="result.json").state["mechanical"]
            t_scan = best(lambda text=text, side=side: prepare(text, side, judged=False, reward=1.0,
                                                              reward_source="result.json"), args.repeat)
            t_audit = best(lambda att=att, task=task, traj=traj: run_audit(att, task, trajectory=traj,
                                                                           no_judge=True), args.repeat)
            t_orjson = best(lambda text=text: [orjson.loads(ln) for ln in text.split("\n") if ln], args.repeat)
            print(f"{size / 1.048576:6.1f} {size / t_scan:10.1f} {size / t_audit:11.1f} {size / t_orjson:12.1f} "
                  f"{hits['n_verbatim_privileged_lines']:>5}")
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
