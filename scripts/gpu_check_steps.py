"""The steps of the GPU host's check (scripts/gpu_check.py): what each runs, and how its output becomes a status
("pass", "fail" or "skip") and the key figures of its summary line.

  doctor             nvidia-smi, nvcc, ncu and `grader doctor`: the GPU, the tools the other steps need, the sandbox
  tests-adversarial  `pytest -m gpu tests/adversarial`: every hostile CUDA and Python-track submission gets the
                     verdict its header states
  tests-timing       `pytest -m gpu tests/test_forged_timers.py`: forged timers of every kind and length against the
                     judge's clock
  tests-rest         `pytest -m gpu` over the rest of tests/: the judge's clock, the profiler, the ladders
  selftest           `grader selftest [PROBLEMS]`: every reference rung accepted, every null answer rejected
  validate-timing    `grader validate-timing [PROBLEMS]`: each top rung timed by kerneljudge, by do_bench and by
                     Nsight Compute; fails where kerneljudge is off ncu by more than 3% on a call of 50 us or more
  profile            `grader profile PROBLEM --reference --json`: Nsight Compute inside the sandbox, on one call of
                     the top rung of softmax (or of the first of PROBLEMS)
  container          where a Docker engine answers: the CUDA image (made from this host's CUDA when missing), one
                     grading in the container against the local sandbox, and the CUDA fixtures' verdicts in both
"""

from __future__ import annotations

import glob
import json
import re
import shutil
import tempfile
from pathlib import Path

TIMER_TOLERANCE = 0.03  # kerneljudge's median against ncu's duration (docs/timing.md)
TIMER_JUDGED_FROM_US = 50.0  # shorter calls are reported, not judged: launch jitter dominates them
CONTAINER_PROBLEM = "attention"  # the grading compared between the container and the local sandbox
PROFILE_PROBLEM = "softmax"  # the top rung profiled in the sandbox
CHECK_IMAGE = "kerneljudge-cuda:check"  # the image made from this host's CUDA when the configured one is missing


def tool(name: str, *candidates: str) -> str | None:
    """A command on PATH, else the first of the usual install places that exists."""
    found = shutil.which(name)
    return found or next((c for p in candidates for c in sorted(glob.glob(p), reverse=True)), None)


def failure(ran) -> str:
    """Why a command gave nothing to judge: its exit status (or the time limit) and the last line it printed."""
    how = "time limit" if ran.timed_out else f"exit {ran.rc}"
    return f"{how}: {ran.last[:300]}" if ran.last else how


def doctor(ctx) -> tuple[str, str]:
    figures, missing = [], []
    gpu = ctx.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"])
    if gpu.rc == 0 and gpu.out.strip():
        name, driver, memory = (f.strip() for f in (gpu.out.splitlines()[0].split(",") + ["", ""])[:3])
        figures.append(f"{name}, driver {driver}, {memory}")
    else:
        missing.append("no GPU visible (nvidia-smi)")
    nvcc = tool("nvcc", "/usr/local/cuda/bin/nvcc")
    said = ctx.run([nvcc, "--version"]).out if nvcc else ""
    release = re.search(r"release [\d.]+, (V[\d.]+)", said)
    figures.append(f"nvcc {release.group(1)}" if release else "")
    missing += [] if release else ["nvcc not found (CUDA toolkit)"]
    ncu = tool("ncu", "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda/bin/ncu")
    said = ctx.run([ncu, "--version"]).out if ncu else ""
    version = re.search(r"Version ([\d.]+)", said)
    figures.append(f"ncu {version.group(1)}" if version else "")
    missing += [] if version else ["ncu not found (validate-timing needs Nsight Compute)"]
    doctor = ctx.run(ctx.grader("doctor"))
    if doctor.rc != 0:
        missing.append(f"grader doctor failed (exit {doctor.rc})")
    sandbox = table_row(doctor.out, "sandbox")
    figures.append(f"sandbox: {sandbox[:160]}" if sandbox else "")
    figures = [f for f in figures if f]
    return ("fail", "; ".join(missing + figures)) if missing else ("pass", "; ".join(figures))


def table_row(text: str, key: str) -> str:
    """The value of a row of a borderless two-column table (grader doctor's), its wrapped lines joined."""
    lines, value = text.splitlines(), []
    for i, line in enumerate(lines):
        found = re.match(rf"^\s*{re.escape(key)}\s{{2,}}(\S.*)$", line)
        if found:
            indent = line.index(found.group(1))
            value.append(found.group(1).strip())
            for more in lines[i + 1 :]:
                if more[:indent].strip() or not more.strip():
                    break
                value.append(more.strip())
            break
    return " ".join(value)


FORGED_TIMERS = "tests/test_forged_timers.py"  # its own step: with them, tests-rest outgrows a 10-minute call


def pytest_step(*paths: str):
    def step(ctx) -> tuple[str, str]:
        # -v: each test's outcome reaches the step's log as it ends, so a step cut short by the budget still says
        # which tests it reached
        shard = ["--shard", ctx.options.shard] if ctx.options.shard else []
        ran = ctx.run(
            [ctx.python, "-m", "pytest", "-v", "-m", "gpu", "-p", "no:cacheprovider", "-ra", "--durations=10"]
            + [*shard, *paths]
        )
        status, said = judge_pytest(ran.rc, ran.out)
        return status, said if "no test summary" not in said else f"{said}: {failure(ran)}"

    return step


def judge_pytest(rc: int, out: str) -> tuple[str, str]:
    """pytest's own last line (counts) and the tests that failed; no test run at all is a failure too."""
    counts = {}
    for line in reversed(out.splitlines()):
        found = re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)", line)
        if found:
            counts = {word.rstrip("s") if word.startswith("error") else word: int(n) for n, word in found}
            break
    said = ", ".join(f"{n} {word}" for word, n in counts.items()) or f"no test summary (exit {rc})"
    failures = [line.split(" - ")[0] for line in out.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    if failures:
        said += ": " + ", ".join(failures[:4]) + (f" and {len(failures) - 4} more" if len(failures) > 4 else "")
    if rc == 0 and counts.get("passed", 0) == 0:
        return "fail", f"{said}: no GPU test ran (is a GPU visible?)"
    return ("pass" if rc == 0 else "fail"), said


def selftest(ctx) -> tuple[str, str]:
    ran = ctx.run(ctx.grader("selftest", *ctx.options.problems))
    tally = re.findall(r"^(\d+) ok, (\d+) failed$", ran.out, re.MULTILINE)
    said = f"{tally[-1][0]} ok, {tally[-1][1]} failed" if tally else f"no tally: {failure(ran)}"
    failures = [line[5:] for line in ran.out.splitlines() if line.startswith("FAIL ")]
    if failures:
        said += f"; first: {failures[0][:200]}"
    return ("pass" if ran.rc == 0 and tally else "fail"), said


def validate_timing(ctx) -> tuple[str, str]:
    ran = ctx.run(ctx.grader("validate-timing", "--json", *ctx.options.problems))
    start = ran.out.find("[")
    try:
        rows = json.loads(ran.out[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        rows = None
    if ran.rc != 0 or not isinstance(rows, list) or not rows:
        return "fail", f"no timings: {failure(ran)}"
    return judge_timings(rows, ctx.log.line)


def judge_timings(rows: list[dict], say) -> tuple[str, str]:
    """Each row's ratios into the log; the top rungs' kerneljudge/ncu over the judged calls into the summary."""
    ratios, clock_ratios, off, no_ncu = [], [], [], 0
    for r in rows:
        kj, ncu, do_bench = r.get("kerneljudge_us"), r.get("ncu_us"), r.get("do_bench_us")
        kj_ncu = kj / ncu if kj and ncu else None
        clock_ncu = r["bound_us"] / ncu if r.get("bound_us") and ncu else None
        say(
            f"{r['problem']} {r['benchmark']} {r['who']}: kerneljudge {kj} us, do_bench {do_bench} us, ncu {ncu} us"
            + (f", kj/ncu {kj_ncu:.3f}" if kj_ncu else "")
            + (f", judge's clock {r['bound_us']:.2f} us, clock/ncu {clock_ncu:.3f}" if clock_ncu else "")
        )
        if clock_ncu is not None and ncu >= TIMER_JUDGED_FROM_US:
            clock_ratios.append(clock_ncu)
        if r.get("who") == "pytorch":
            continue
        if kj_ncu is None:
            no_ncu += 1
        elif ncu >= TIMER_JUDGED_FROM_US:
            ratios.append(kj_ncu)
            if abs(kj_ncu - 1) > TIMER_TOLERANCE:
                off.append(f"{r['problem']} {r['benchmark']} {kj_ncu:.3f}")
    problems = len({r["problem"] for r in rows})
    said = f"{problems} problems, {len(ratios)} top-rung timings of 50 us or more"
    if ratios:
        said += f": kj/ncu {min(ratios):.3f}-{max(ratios):.3f}"
    if clock_ratios:  # reported, not judged: the supervisor's own clock, which a forged timer cannot move
        said += f"; judge's clock/ncu {min(clock_ratios):.3f}-{max(clock_ratios):.3f}"
    if off:
        said += f"; off by more than 3%: {', '.join(off)}"
    if no_ncu:
        said += f"; {no_ncu} without an ncu figure"
    return ("fail" if off or no_ncu or not ratios else "pass"), said


def profile(ctx) -> tuple[str, str]:
    problem = next(iter(ctx.options.problems), PROFILE_PROBLEM)
    ran = ctx.run(ctx.grader("profile", problem, "--reference", "--json"))
    try:
        found = json.loads(ran.out[ran.out.find("{") :])
    except json.JSONDecodeError:
        found = {}
    if ran.rc != 0 or not found.get("kernels"):
        why = found.get("message") or failure(ran)
        return "fail", f"{problem}: no profile: {why}"[:400]
    totals = found.get("totals", {})
    sol = totals.get("sol")
    return "pass", (
        f"{problem} {found.get('benchmark')}: {len(found['kernels'])} kernels, {totals.get('duration_us', 0):.1f} us"
        + (f", SOL {sol:.0%}" if sol else "")
        + f", in the sandbox; ncu {found.get('ncu_version')}"
    )


def container(ctx) -> tuple[str, str]:
    engine = ctx.run([ctx.python, "-c", "import docker; print(docker.from_env(timeout=10).version()['Version'])"])
    if engine.rc != 0:
        return "skip", "no Docker engine answers (docker.from_env(); DOCKER_HOST): no container check"
    figures = [f"Docker {engine.out.strip()}"]
    image = pick_image(ctx)
    if image is None:
        return "fail", f"Docker {engine.out.strip()}; no image: making {CHECK_IMAGE} from this host's CUDA failed"
    figures.append(f"image {image}")
    env = {"KERNELJUDGE_IMAGE": image}
    ctx.run(ctx.grader("doctor"), env=env)
    problem = next(iter(ctx.options.problems), CONTAINER_PROBLEM)
    scores, ok = {}, True
    for sandbox in ("docker", "local"):
        ran = ctx.run(ctx.grader("submit", problem, "--reference", "--sandbox", sandbox, "--json"), env=env)
        try:
            verdict = json.loads(ran.out[ran.out.find("{") :])
        except json.JSONDecodeError:
            verdict = {"status": f"no verdict ({failure(ran)})"}
        scores[sandbox] = verdict.get("score_us")
        ok &= verdict.get("status") == "accepted"
        figures.append(f"{problem} in {sandbox}: {verdict.get('status')} {verdict.get('score_us') or ''}")
    if scores["docker"] and scores["local"]:
        figures.append(f"docker/local {scores['docker'] / scores['local']:.3f}")
    left = ctx.left_s()
    budget = ctx.options.fixture_budget if left is None else min(ctx.options.fixture_budget, left - 120)
    if budget > 0:
        with tempfile.TemporaryDirectory() as scratch:
            out = str(Path(scratch) / "fixtures.jsonl")
            argv = [ctx.python, "scripts/compare_sandboxes.py", "--budget", f"{budget:.0f}", "--out", out]
            ran = ctx.run(argv, env=env)
        tally = re.findall(r"^(\d+) same, (\d+) differ", ran.out, re.MULTILINE)
        not_graded = re.findall(r"(\d+) fixtures not graded", ran.out)
        said = f"CUDA fixtures {tally[-1][0]} same, {tally[-1][1]} differ" if tally else f"fixtures: {failure(ran)}"
        figures.append(said + (f" ({not_graded[-1]} not graded in {budget:.0f} s)" if not_graded else ""))
        ok &= ran.rc == 0 and bool(tally)
    else:
        figures.append("fixtures not compared (no time left)")
    return ("pass" if ok else "fail"), "; ".join(figures)


def pick_image(ctx) -> str | None:
    """KERNELJUDGE_IMAGE (default kerneljudge:latest) if the engine has it, else CHECK_IMAGE, made here if missing."""
    has = "import docker, sys; docker.from_env().images.get(sys.argv[1])"
    configured = ctx.env.get("KERNELJUDGE_IMAGE") or "kerneljudge:latest"
    for image in (configured, CHECK_IMAGE):
        if ctx.run([ctx.python, "-c", has, image]).rc == 0:
            return image
    made = ctx.run([ctx.python, "scripts/host_image.py", "--tag", CHECK_IMAGE])
    return CHECK_IMAGE if made.rc == 0 else None


ALL = {
    "doctor": doctor,
    "tests-adversarial": pytest_step("tests/adversarial"),
    "tests-timing": pytest_step(FORGED_TIMERS),
    "tests-rest": pytest_step("tests", "--ignore=tests/adversarial", f"--ignore={FORGED_TIMERS}"),
    "selftest": selftest,
    "validate-timing": validate_timing,
    "profile": profile,
    "container": container,
}
SHARDED = {"tests-adversarial", "tests-timing", "tests-rest"}  # the steps --shard K/N splits (their tests')
