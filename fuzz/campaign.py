"""Long fuzz campaign over every loader and the strict decoder.

    python fuzz/campaign.py --minutes 10 --seed 1                 # all targets, equal time each
    python fuzz/campaign.py --minutes 2 --targets trajectory,job  # some targets
    python fuzz/campaign.py --replay fuzz-findings/job-crash-1a2b3c4d.bin   # re-run one reproducer

Inputs are generated in this process (``fuzz/gen.py``, reproducible from ``--seed``) and run one at a time in a
worker process (``fuzz/targets.py``), so a hang (an input running longer than ``--timeout``) or a dying worker
(segfault, memory) is caught and recorded like an exception. The only permitted outcomes are success and the
documented unusable-input error; anything else is a finding. Each distinct finding (target, kind, exception type,
innermost project frame) is written once to ``--out`` as ``<target>-<kind>-<hash>.bin`` (the smallest input seen)
with a ``.txt`` beside it (traceback, generator, replay command). At the end a table gives the inputs tried per
target; ``--out/stats.json`` holds the same numbers. Exit status 1 when there are findings, else 0. A "slow"
finding (an input that succeeded or was refused, but took longer than ``--slow`` seconds) is a finding like a
crash: hostile input must be handled in bounded time, so a slow input fails the campaign too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz import gen, seeds  # noqa: E402

TARGET_NAMES = ("safeio", "trajectory", "multi", "job")
FAILING_KINDS = ("crash", "hang", "died", "slow")  # every kind of finding fails the campaign


# --------------------------------------------------------------------------- worker


def _location(exc: BaseException) -> str:
    """The innermost frame inside the project (or the innermost frame) of an exception: its dedup key."""
    frames = traceback.extract_tb(exc.__traceback__)
    for f in reversed(frames):
        if "pytest_trajaudit" in f.filename:
            return f"{f.filename.split('pytest_trajaudit/')[-1]}:{f.lineno}"
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"


def run_one(target: str, data: bytes, name: str, work: Path) -> dict[str, Any]:
    from fuzz import targets
    from pytest_trajaudit.model import UnusableInput

    t0 = time.perf_counter()
    try:
        out: dict[str, Any] = {"outcome": targets.TARGETS[target](data, name, work)}
    except UnusableInput as exc:
        out = {"outcome": "unusable"}
        if "\n" in exc.reason or "\r" in exc.reason:
            out = {"outcome": "crash", "exc": "Violation", "loc": _location(exc),
                   "msg": f"multi-line unusable-input reason: {exc.reason[:300]!r}", "tb": traceback.format_exc()}
    except targets.Violation as exc:
        out = {"outcome": "crash", "exc": "Violation", "loc": str(exc)[:60], "msg": str(exc)[:500],
               "tb": traceback.format_exc()}
    except RecursionError as exc:  # noqa: B014 - listed apart: the campaign counts them
        out = {"outcome": "crash", "exc": "RecursionError", "loc": _location(exc), "msg": str(exc)[:300],
               "tb": traceback.format_exc()[-4000:]}
    except Exception as exc:  # everything else is a crash
        out = {"outcome": "crash", "exc": type(exc).__name__, "loc": _location(exc), "msg": str(exc)[:500],
               "tb": traceback.format_exc()[-8000:]}
    out["secs"] = time.perf_counter() - t0
    return out


def worker(conn: Any, base: str) -> None:
    work = Path(tempfile.mkdtemp(dir=base))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        target, name, data = msg
        conn.send(run_one(target, data, name, work))


class Worker:
    def __init__(self) -> None:
        self.ctx = mp.get_context("spawn")
        self.base = tempfile.mkdtemp(prefix="trajaudit-fuzz-")  # the workers' scratch job directories
        self.start()

    def start(self) -> None:
        self.parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=worker, args=(child, self.base), daemon=True)
        self.proc.start()
        child.close()

    def run(self, target: str, name: str, data: bytes, timeout: float) -> dict[str, Any]:
        t0 = time.perf_counter()
        try:
            self.parent.send((target, name, data))
            if self.parent.poll(timeout):
                return self.parent.recv()
            kind, msg = "hang", f"no answer within {timeout:g} s"
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError) as exc:
            kind, msg = "died", f"worker died: {type(exc).__name__} (exit code {self.proc.exitcode})"
        self.restart()
        return {"outcome": kind, "exc": kind, "loc": "-", "msg": msg, "tb": "", "secs": time.perf_counter() - t0}

    def restart(self) -> None:
        try:
            self.proc.kill()
            self.proc.join(10)
        except (OSError, ValueError):
            pass
        self.start()

    def close(self) -> None:
        try:
            self.parent.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
        shutil.rmtree(self.base, ignore_errors=True)


# --------------------------------------------------------------------------- campaign


def _names(target: str, seed_names: list[str], r: random.Random) -> str:
    from fuzz.targets import JOB_SLOTS, LOOSE_NAMES

    if target == "multi":
        return r.choice(LOOSE_NAMES)
    if target == "job":
        return r.choice(JOB_SLOTS)
    return r.choice(seed_names)


def campaign(args: argparse.Namespace) -> int:
    chosen = [t.strip() for t in args.targets.split(",") if t.strip()] if args.targets else list(TARGET_NAMES)
    unknown = [t for t in chosen if t not in TARGET_NAMES]
    if unknown:
        print(f"unknown target(s): {', '.join(unknown)}; known: {', '.join(TARGET_NAMES)}", file=sys.stderr)
        return 2
    all_seeds = seeds.all_seeds(corpus=not args.no_corpus)
    gen.set_seeds([b for _, b in all_seeds.values()])
    seed_names = sorted({n for n, _ in all_seeds.values()})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    r = random.Random(args.seed)
    w = Worker()
    share = args.minutes * 60 / len(chosen)
    stats: dict[str, dict[str, Any]] = {}
    findings: dict[tuple[str, ...], dict[str, Any]] = {}
    print(f"fuzz campaign: seed {args.seed}, {len(all_seeds)} seed files "
          f"({sum(1 for k in all_seeds if k.startswith('corpus:'))} from the corpus), "
          f"{args.minutes:g} min over {', '.join(chosen)}; findings -> {out}", flush=True)
    try:
        for target in chosen:
            st = stats.setdefault(target, {"inputs": 0, "ok": 0, "unusable": 0, "crash": 0, "hang": 0, "died": 0,
                                           "slow": 0, "bytes": 0, "max_input": 0, "max_secs": 0.0,
                                           "by_generator": {}})
            end = time.monotonic() + share
            while time.monotonic() < end:
                gname, data = gen.generate(r)
                name = _names(target, seed_names, r)
                res = w.run(target, name, data, args.timeout)
                st["inputs"] += 1
                st["bytes"] += len(data)
                st["max_input"] = max(st["max_input"], len(data))
                st["max_secs"] = max(st["max_secs"], round(res["secs"], 2))
                st["by_generator"][gname] = st["by_generator"].get(gname, 0) + 1
                st[res["outcome"]] += 1
                kind = res["outcome"]
                if kind in ("ok", "unusable") and res["secs"] > args.slow:
                    st["slow"] += 1
                    kind = "slow"
                    res = {**res, "exc": "slow", "loc": f"{len(data) >> 20} MiB" if len(data) > 1 << 20 else "-",
                           "msg": f"{res['secs']:.1f} s on {len(data)} bytes", "tb": ""}
                if kind in ("ok", "unusable"):
                    continue
                key = (target, kind, res["exc"], res["loc"])
                prev = findings.get(key)
                if prev is None or len(data) < prev["size"]:
                    findings[key] = _record(out, key, res, gname, name, data, prev)
                else:
                    prev["count"] += 1
            print(f"  {target:<11} {st['inputs']:>8} inputs  {st['unusable']:>7} unusable  "
                  f"{st['crash'] + st['hang'] + st['died']:>3} crash/hang  {st['slow']:>3} slow", flush=True)
    finally:
        w.close()
    _report(args, out, stats, findings)
    return 1 if any(k[1] in FAILING_KINDS for k in findings) else 0


def _record(out: Path, key: tuple[str, ...], res: dict[str, Any], gname: str, name: str, data: bytes,
            prev: dict[str, Any] | None) -> dict[str, Any]:
    target, kind = key[0], key[1]
    h = hashlib.sha256("|".join(key).encode()).hexdigest()[:8]
    stem = f"{target}-{kind}-{h}"
    if prev is not None:
        for suffix in (".bin", ".txt"):
            (out / (prev["stem"] + suffix)).unlink(missing_ok=True)
    (out / f"{stem}.bin").write_bytes(data)
    (out / f"{stem}.txt").write_text(
        f"target: {target}\nkind: {kind}\nexception: {res['exc']} at {res['loc']}\nmessage: {res['msg']}\n"
        f"generator: {gname}\nname hint: {name}\nsize: {len(data)} bytes\nseconds: {res['secs']:.2f}\n"
        f"replay: python fuzz/campaign.py --replay {out / (stem + '.bin')}\n\n{res.get('tb', '')}\n")
    (out / f"{stem}.json").write_text(json.dumps({"target": target, "name": name}))
    return {"stem": stem, "size": len(data), "count": (prev["count"] + 1) if prev else 1, "exc": res["exc"],
            "loc": res["loc"], "msg": res["msg"]}


def _report(args: argparse.Namespace, out: Path, stats: dict[str, Any], findings: dict[tuple[str, ...], Any]) -> None:
    total = sum(s["inputs"] for s in stats.values())
    print(f"\n{'target':<11} {'inputs':>9} {'ok':>8} {'unusable':>9} {'crash':>6} {'hang':>5} {'died':>5} "
          f"{'slow':>5} {'MiB':>8} {'max s':>7}")
    for t, s in stats.items():
        print(f"{t:<11} {s['inputs']:>9} {s['ok']:>8} {s['unusable']:>9} {s['crash']:>6} {s['hang']:>5} "
              f"{s['died']:>5} {s['slow']:>5} {s['bytes'] / 2**20:>8.1f} {s['max_secs']:>7.1f}")
    print(f"{'total':<11} {total:>9}")
    print(f"\n{len(findings)} distinct finding(s)")
    for key, f in sorted(findings.items()):
        print(f"  {key[0]}/{key[1]}: {f['exc']} at {f['loc']} x{f['count']} (smallest {f['size']} B) "
              f"-> {out / (f['stem'] + '.bin')}\n      {f['msg'][:200]}")
    (out / "stats.json").write_text(json.dumps({
        "seed": args.seed, "minutes": args.minutes, "stats": stats,
        "findings": [{"target": k[0], "kind": k[1], "exception": k[2], "location": k[3], **v}
                     for k, v in sorted(findings.items())]}, indent=2))


def replay(path: Path) -> int:
    meta_file = path.with_suffix(".json")
    meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
    target = meta.get("target") or path.name.split("-", 1)[0]
    name = meta.get("name") or "input.json"
    with tempfile.TemporaryDirectory(prefix="trajaudit-replay-") as work:
        res = run_one(target, path.read_bytes(), name, Path(work))
    print(f"{target} ({name}): {res['outcome']} in {res['secs']:.2f} s")
    if res.get("tb"):
        print(res["tb"])
    return 0 if res["outcome"] in ("ok", "unusable") else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0, help="total run time, split equally over the targets")
    ap.add_argument("--seed", type=int, default=0, help="random seed (the same seed gives the same inputs)")
    ap.add_argument("--targets", default="", help=f"comma-separated subset of {', '.join(TARGET_NAMES)}")
    ap.add_argument("--out", default="fuzz-findings", help="directory for reproducers and stats.json")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before an input counts as a hang")
    ap.add_argument("--slow", type=float, default=20.0, help="seconds above which a passing input is reported")
    ap.add_argument("--no-corpus", action="store_true", help="do not seed from ../shared/corpus")
    ap.add_argument("--replay", type=Path, default=None, help="re-run one reproducer (.bin) and print the result")
    args = ap.parse_args(argv)
    if args.replay is not None:
        return replay(args.replay)
    return campaign(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
