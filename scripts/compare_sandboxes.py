"""The CUDA fixtures (tests/fixtures, tests/adversarial) graded in the local sandbox and in the container, their
verdicts compared (`make gpu-check`, step container). Every fixture is first compiled in both sandboxes at
once (a thread pool), then graded in both, one fixture after another, local then docker, until --budget seconds
are spent: a cut-off still leaves pairs. One JSON line per fixture in --out, and a summary.

    .venv/bin/python scripts/compare_sandboxes.py --budget 150 --out fixtures.jsonl [--skip N] [NAME_PART ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from conftest import read_fixture  # noqa: E402

from grader.build import compiler  # noqa: E402
from grader.judge import pipeline  # noqa: E402
from grader.problems.catalog import load_problem  # noqa: E402
from grader.sandbox import container  # noqa: E402

SANDBOXES = ("local", "docker")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=150.0)
    parser.add_argument("--out", required=True, help="a JSON line per fixture: both verdicts and their times")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N (a cut-off run graded them)")
    parser.add_argument("names", nargs="*", help="only fixtures whose path contains one of these")
    args = parser.parse_args()
    started = time.monotonic()
    paths = sorted(p for f in ("tests/fixtures", "tests/adversarial") for p in (REPO / f).rglob("*.cu"))
    paths = [p for p in paths if not args.names or any(n in str(p) for n in args.names)][args.skip :]
    fixtures = [read_fixture(p) for p in paths]
    backends = {kind: container.choose(kind, "cuda")[0] for kind in SANDBOXES}
    print(f"{len(fixtures)} CUDA fixtures; {backends['docker'].description}", flush=True)

    def build(job):
        fixture, kind = job
        problem = load_problem(fixture.problem)
        return compiler.build_submission(problem, fixture.path.read_bytes(), fixture.path.name, "cuda", backends[kind])

    jobs = [(f, k) for f in fixtures for k in SANDBOXES]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        list(pool.map(build, jobs))
    print(f"compiled {len(jobs)} in {time.monotonic() - started:.0f} s", flush=True)

    same = differ = 0
    differing: list[str] = []
    with open(args.out, "w") as out:
        for fixture in fixtures:
            if time.monotonic() - started > args.budget:
                print(f"budget of {args.budget:.0f} s spent: {len(fixtures) - same - differ} fixtures not graded")
                break
            row = {"fixture": str(fixture.path.relative_to(REPO)), "expect": fixture.expect}
            for kind in SANDBOXES:
                t0 = time.monotonic()
                verdict = pipeline.grade(
                    load_problem(fixture.problem),
                    fixture.path.read_bytes(),
                    fixture.path.name,
                    track="cuda",
                    mode=fixture.mode,
                    time_limit_s=fixture.time_limit_s,
                    sandbox_kind=kind,
                )
                row[kind] = str(verdict.status)
                row[f"{kind}_s"] = round(time.monotonic() - t0, 2)
                row[f"{kind}_message"] = verdict.message[:200]
            agree = row["local"] == row["docker"]
            same, differ = same + agree, differ + (not agree)
            out.write(json.dumps(row) + "\n")
            mark = "same" if agree else "DIFFER"
            if not agree:
                differing.append(
                    f"DIFFER {row['fixture']}: local {row['local']}, docker {row['docker']}: {row['docker_message'][:150]}"
                )
            print(
                f"{mark:6} {row['fixture']}: local {row['local']} ({row['local_s']} s), docker {row['docker']} ({row['docker_s']} s)",
                flush=True,
            )
    for line in differing:
        print(line)
    print(f"{same} same, {differ} differ, in {time.monotonic() - started:.0f} s")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
