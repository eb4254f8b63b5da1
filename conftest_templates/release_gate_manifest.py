"""Print the job ids a release gate lets through: CLEAN verdict, reward recorded, no failed task group.

    python release_gate_manifest.py trajaudit-gate/summary.json > clean-jobs.txt

Reads only the gate's own summary.json (never the audited tree). Exit 1 when the summary says nothing may ship.
"""

from __future__ import annotations

import json
import sys


def clean_jobs(summary: dict) -> list[str]:
    blocked = {m for g in summary.get("groups", []) if g["code"] == "PASSK" and g["status"] != "PASS"
               for m in g["members"]}
    return [j["job"] for j in summary["jobs"]
            if j["verdict"] == "CLEAN" and j.get("reward") is not None and j["job"] not in blocked]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        jobs = clean_jobs(json.load(fh))
    for job in jobs:
        print(job)
    return 0 if jobs else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
