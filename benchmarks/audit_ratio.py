"""The full audit against ``orjson.loads`` over the same directory jobs, in one interpreter, no pytest.

    python benchmarks/audit_ratio.py [TREE] [--jobs 20] [--size-kb 2048] [--format mixed] [--repeat 3]
                                     [--parts] [--profile 25] [--work DIR] [--vs-loading]

Without ``TREE`` it generates one with ``gen_runs.py`` (``--jobs`` × ``--size-kb``, ``--format``). Then, after one
warm-up job, it times (CPU seconds, best of ``--repeat``):

- the audit: ``engine.audit_job`` of every job with every principle the plugin makes an item of for it (all
  families, precise mode, the default settings; the advisor family only for a job whose privileged material is
  known, as at collection): loading the job and running each principle, what the job's pytest items compute
  beyond the items' own overhead;
- ``orjson.loads`` of the same jobs' trajectories, line by line, and of their ``result.json``;

and prints the ratio (target ≤ 1.5×). ``--vs-loading`` takes loading the jobs as the baseline instead, for a tree of
any format (the real corpus: ``python benchmarks/audit_ratio.py ../shared/corpus --vs-loading --parts``).
``--parts`` then times the audit's parts the same way (CPU, best of ``--repeat``, each part alone, in the audit's
order, outside any profiler): loading the jobs, each principle (the most expensive first, the others summed), and
the verifier-gaming principle's own steps (reconstructing the delivered code, collecting the visible test cases, the
agent's words, analysing the code); each figure is also printed as a multiple of ``orjson.loads``. ``--profile N``
runs the audit once more under cProfile and prints the N functions with the most time of their own, and the N with
the most cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRAJ_NAMES = ("acp_trajectory.jsonl", "claude-code.txt")


def _trajectory_files(tree: Path) -> list[Path]:
    return sorted(f for f in tree.rglob("*") if f.is_file() and (f.name in TRAJ_NAMES or f.name == "result.json"))


def orjson_time(files: list[Path]) -> float:
    """CPU seconds of ``orjson.loads`` of every trajectory line, read from the file line by line as section (b) of
    ``measure.py`` reads them (a whole file split into lines at once costs up to twice as much: every line's bytes
    are held together), and of each ``result.json`` whole."""
    import orjson

    t0 = time.process_time()
    for f in files:
        with open(f, "rb") as fh:
            if f.name == "result.json":
                orjson.loads(fh.read())
                continue
            for line in fh:
                if line.strip():
                    orjson.loads(line)
    return time.process_time() - t0


def loading_time(refs: list, cfg: object) -> float:
    """CPU seconds to load every job (a job the loaders refuse costs what its refusal costs)."""
    from pytest_trajaudit.loaders.job import load_job

    t0 = time.process_time()
    for r in refs:
        try:
            load_job(r, cfg)
        except Exception:  # noqa: BLE001 - an unusable job: its refusal is its load
            pass
    return time.process_time() - t0


def parts(plan: list, cfg: object, repeat: int, t_orj: float, base: str = "orjson.loads") -> None:
    """CPU seconds of each part of the audit (best of ``repeat``): loading, each principle on the loaded job in the
    audit's order (a principle reuses what an earlier one left in the job's cache, as in the audit), and the
    verifier-gaming principle's steps on a fresh load."""
    from pytest_trajaudit.loaders.job import load_job
    from pytest_trajaudit.principles import gaming
    from pytest_trajaudit.principles._shell import forget

    best: dict[str, float] = {}
    steps: dict[str, float] = {}
    for _ in range(max(1, repeat)):
        acc: dict[str, float] = {}
        sub = dict.fromkeys(("reconstruction", "visible test cases", "agent's words", "code analysis"), 0.0)
        for ref, ps in plan:
            c0 = time.process_time()
            try:
                job = load_job(ref, cfg)
            except Exception:  # noqa: BLE001 - an unusable job (a real corpus): no principle runs on it
                continue
            acc["loading"] = acc.get("loading", 0.0) + time.process_time() - c0
            for p in ps:
                c0 = time.process_time()
                try:
                    p.func(job, cfg)
                except Exception:  # noqa: BLE001 - the engine would record it as the item's error; timed the same
                    pass
                acc[p.code] = acc.get(p.code, 0.0) + time.process_time() - c0
            forget()
            job = load_job(ref, cfg)
            if job.trajectory is not None and not cfg.literal:
                c0 = time.process_time()
                d = gaming.reconstruct(job.trajectory)
                c1 = time.process_time()
                cases = gaming.collect(gaming._visible_texts(job))
                c2 = time.process_time()
                words = gaming._agent_words(job, cfg)
                c3 = time.process_time()
                gaming._analyse_all(job, cfg, d, cases, words)
                c4 = time.process_time()
                for k, v in zip(sub, (c1 - c0, c2 - c1, c3 - c2, c4 - c3), strict=True):
                    sub[k] += v
            forget()
            del job
        for k, v in acc.items():
            best[k] = min(best.get(k, v), v)
        for k, v in sub.items():
            steps[k] = min(steps.get(k, v), v)
    load = best.pop("loading", 0.0)
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    print(f"\n--- parts (CPU s, best of {max(1, repeat)}; x = multiple of {base} {t_orj:.3f} s)")
    print(f"  {'loading':28} {load:7.3f}  {load / t_orj:5.2f}x")
    for code, t in ranked[:4]:
        print(f"  {code:28} {t:7.3f}  {t / t_orj:5.2f}x")
    rest = sum(t for _, t in ranked[4:])
    print(f"  {f'the other {len(ranked[4:])} principles':28} {rest:7.3f}  {rest / t_orj:5.2f}x")
    print(f"  {'sum':28} {load + sum(best.values()):7.3f}  {(load + sum(best.values())) / t_orj:5.2f}x")
    print("  verifier gaming, by step:")
    for k, v in steps.items():
        print(f"    {k:26} {v:7.3f}  {v / t_orj:5.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree", nargs="?", type=Path)
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--size-kb", type=int, default=2048)
    ap.add_argument("--format", default="mixed")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--parts", action="store_true")
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--vs-loading", action="store_true",
                    help="the baseline is loading the jobs (any format: a real corpus), not orjson.loads")
    a = ap.parse_args()

    tree = a.tree
    if tree is None:
        work = a.work or Path(tempfile.mkdtemp(prefix="audit-ratio-"))
        tree = work / f"tree-{a.jobs}x{a.size_kb}k-{a.format}"
        if not tree.exists():
            cmd = [sys.executable, str(Path(__file__).with_name("gen_runs.py")), str(tree), "--jobs", str(a.jobs),
                   "--size-kb", str(a.size_kb), "--format", a.format]
            print("$ " + " ".join(cmd), flush=True)
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

    from pytest_trajaudit.advisor.collect import advisor_known
    from pytest_trajaudit.discover.jobs import find_jobs
    from pytest_trajaudit.principles import registry
    from pytest_trajaudit.principles.engine import audit_job
    from pytest_trajaudit.settings import Settings

    refs = find_jobs(tree.resolve())
    files = _trajectory_files(tree)
    cfg = Settings()
    everything = list(registry().values())
    no_adv = [p for p in everything if p.family != "advisor"]
    # the advisor family's items exist only for a job whose privileged material is known (advisor/collect.py)
    plan = [(r, everything if advisor_known(r, cfg.privileged_roots, cfg.tasks_dirs) else no_adv) for r in refs]
    principles = everything
    mib = sum(f.stat().st_size for f in files) / 2**20
    if refs:
        audit_job(refs[0], cfg, principles)  # imports, compiled patterns

    def audit() -> None:
        for r, ps in plan:
            audit_job(r, cfg, ps)

    t_audit = t_orj = float("inf")
    for _ in range(max(1, a.repeat)):
        c0 = time.process_time()
        audit()
        t_audit = min(t_audit, time.process_time() - c0)
        t_orj = min(t_orj, loading_time(refs, cfg) if a.vs_loading else orjson_time(files))
    if a.vs_loading:
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(f"{tree}: {len(refs)} jobs (load {' '.join(load)})")
        print(f"audit {t_audit:.3f} s CPU, loading the jobs {t_orj:.3f} s: audit / loading = {t_audit / t_orj:.2f}x")
        if a.parts:
            parts(plan, cfg, a.repeat, t_orj, "loading the jobs")
    else:
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(f"{tree}: {len(refs)} jobs, {mib:.1f} MiB, {len(no_adv)} principles + the advisor family's "
              f"{len(everything) - len(no_adv)} for {sum(ps is everything for _, ps in plan)} jobs "
              f"(load {' '.join(load)})")
        print(f"audit {t_audit:.3f} s CPU ({mib / t_audit:.1f} MiB/s), orjson.loads {t_orj:.3f} s "
              f"({mib / t_orj:.1f} MiB/s): audit / orjson.loads = {t_audit / t_orj:.2f}x (target <= 1.5x)")
        if a.parts:
            parts(plan, cfg, a.repeat, t_orj)
    if a.profile:
        prof = cProfile.Profile()
        prof.runcall(audit)
        for key in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats(key).print_stats(a.profile)
            print(f"\n--- top {a.profile} by {key}\n" + out.getvalue().split("\n", 6)[-1].rstrip())


if __name__ == "__main__":
    main()
