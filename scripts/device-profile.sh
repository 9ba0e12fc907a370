#!/usr/bin/env bash
# Issue 18 on a lent GPU machine (no network): Nsight Compute profiles of every CUDA rung, checked against a direct
# ncu run of the same binary, recorded fixtures, fair PyTorch baselines, and the site with profiles.
# Run from the repository root after `make setup` (it runs setup itself, offline from wheelhouse/), with OUT set:
#   OUT=$OUT bash scripts/device-profile.sh [STEP...]        (default: every step, in this order)
# Steps (each logs to $LOGS/<step>.log, default /tmp/kj-device-profile; after each, $LOGS is packed into
# $OUT/device-profile-logs.tgz, the .ncu-rep files left out but for the fixtures' (a device call returns 8 files of
# 16 MiB at most); each fits one 10-minute command on its own):
#   check     ncu's version, the driver's profiling permission, ncu in the sandbox on one rung (and why not)
#   ladders   grader profile --json --raw --export-run for every CUDA rung of PROBLEMS (default: all), sandboxed,
#             or --unsandboxed where `check` found the sandbox refusing ncu; then the table of each (--show).
#             Split it over calls with PROBLEMS="softmax matmul" etc. if one call would pass 10 minutes
#   direct    ncu run by hand on the top rungs' exported harness+library, compared with grader profile's figures
#   fixtures  one naive and one top rung's .ncu-rep, CSV and JSON copied to $LOGS/fixtures/ (test fixtures)
#   baselines PyTorch's first benchmark per problem: CUDA-graph replay against the eager call; the gpu tests
#   site      grader submit --profile of the softmax ladder's naive and top rungs, then grader render to $LOGS/site
set -uo pipefail
OUT=${OUT:-$PWD/.out}
LOGS=${LOGS:-/tmp/kj-device-profile}
mkdir -p "$OUT" "$LOGS"
pack() { tar -czf "$OUT/device-profile-logs.tgz" --exclude='./profiles/*.ncu-rep' --exclude='./profiles/*.run/*.ncu-rep' \
  --exclude='./profiles/*.run/out' --exclude='./site' -C "$LOGS" . 2> /dev/null; }  # the direct runs' reports and outputs too (session 10's pack held 3.9 GB of outputs)
export PYTHONUNBUFFERED=1 KERNELJUDGE_DATA=${KERNELJUDGE_DATA:-/tmp/kj-profile-data} COLUMNS=${COLUMNS:-160}
make setup PYTHON=python3 >"$LOGS/setup.log" 2>&1 || { tail -30 "$LOGS/setup.log"; exit 1; }
G=.venv/bin/grader
PY=.venv/bin/python
PROBLEMS=${PROBLEMS:-$(ls problems | grep -v '^ORDER$')}
# Profiles are kept outside $LOGS while the machine stays warm, so a later call's steps reuse them; any step that
# finds one missing makes it itself. Each step copies what it made to $LOGS/profiles.
PROFILES=${PROFILE_WORK:-/tmp/kj-profile}
MODE_FILE=$PROFILES/mode  # "" (sandboxed) or "--unsandboxed", decided by `check` (else decided on first use)
mkdir -p "$PROFILES" "$LOGS/profiles"
keep() { cp -r "$PROFILES"/. "$LOGS/profiles/" 2>/dev/null; rm -rf "$LOGS"/profiles/*.run/runner "$LOGS"/profiles/*.run/lib.so; }
ncu_bin() {
  local found; found=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort | tail -1)
  echo "${found:-/usr/local/cuda/bin/ncu}"
}
step() { local name=$1; shift; echo "== $name"; local t0=$SECONDS
  "$@" 2>&1 | tee "$LOGS/$name.log" | tail -"${TAIL:-40}"; echo "== $name took $((SECONDS - t0)) s"; pack; }
rungs() { for slug in $PROBLEMS; do ls solutions/"$slug"/0*.cu 2>/dev/null; done; }
top_rungs() { for slug in $PROBLEMS; do ls solutions/"$slug"/0*.cu 2>/dev/null | tail -1; done; }

check() {
  local ncu; ncu=$(ncu_bin); echo "ncu: $ncu"; "$ncu" --version | tail -1
  echo "uid: $(id)"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  grep -i -E 'RmProfilingAdminOnly|RestrictProfiling' /proc/driver/nvidia/params 2>/dev/null || echo "(no profiling parameter in /proc/driver/nvidia/params)"
  $G doctor | grep -i -E 'sandbox|isolation' || true
  echo "-- ncu inside the sandbox, on softmax/01_naive.cu:"
  if timeout 300 $G profile softmax solutions/softmax/01_naive.cu --benchmark square_8k; then
    echo "SANDBOXED PROFILING WORKS"; : >"$MODE_FILE"
  else
    echo "SANDBOXED PROFILING REFUSED (the message above says why); the ladders use --unsandboxed"
    echo "--unsandboxed" >"$MODE_FILE"
    echo "-- the same rung without the sandbox:"; timeout 300 $G profile softmax solutions/softmax/01_naive.cu --unsandboxed --benchmark square_8k
  fi
}

mode() {  # the sandbox question, answered once: sandboxed if ncu works there, else --unsandboxed (ladders only)
  [ -f "$MODE_FILE" ] || check >"$LOGS/check.log" 2>&1
  cat "$MODE_FILE"
}

profile_one() {  # profile_one FILE: JSON, .ncu-rep and the exported run under $PROFILES, then its table
  local f=$1 slug rung; slug=$(basename "$(dirname "$f")"); rung=$(basename "$f" .cu); local name=$slug-$rung
  local mode; mode=$(mode); local t0=$SECONDS
  timeout 400 $G profile "$slug" "$f" $mode --json --raw "$PROFILES/$name.ncu-rep" --export-run "$PROFILES/$name.run" \
    >"$PROFILES/$name.json" 2>"$PROFILES/$name.err"
  local rc=$?
  echo "==== $name (exit $rc, $((SECONDS - t0)) s) ${mode:-sandboxed}"
  if [ $rc -eq 0 ]; then $G profile --show "$PROFILES/$name.json"; else cat "$PROFILES/$name.err"; rm -f "$PROFILES/$name.json"; fi
}

ensure() { local name; name=$(basename "$(dirname "$1")")-$(basename "$1" .cu); [ -s "$PROFILES/$name.json" ] || profile_one "$1"; }

ladders() {
  for f in $(rungs); do profile_one "$f"; done
  keep
}

# grader profile's figures for each submission kernel beside a direct ncu run on the same runner + lib.so + request
compare() {
  "$PY" - "$1" "$2" <<'EOF'
import json, sys
from grader.profile import parse
profile = json.load(open(sys.argv[1]))
direct = parse.submissions(parse.launches(open(sys.argv[2]).read()))
print(f"{'kernel':40} {'kj us':>10} {'ncu us':>10} {'ratio':>7} {'kj mem%':>8} {'ncu mem%':>8} {'kj DRAM GB/s':>12} {'ncu DRAM GB/s':>13}")
for mine, theirs in zip(profile["kernels"], direct):
    d = (theirs.get("gpu__time_duration.sum") or 0) * 1e6
    m = theirs.get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
    g = (theirs.get("dram__bytes.sum.per_second") or 0) / 1e9
    ratio = mine["duration_us"] / d if d else float("nan")
    print(f"{mine['name'].split('(')[0][:40]:40} {mine['duration_us']:10.1f} {d:10.1f} {ratio:7.3f} "
          f"{mine['memory_sol_pct'] or 0:8.1f} {m or 0:8.1f} {mine['dram_gbps'] or 0:12.0f} {g:13.0f}")
if len(profile["kernels"]) != len(direct):
    print(f"MISMATCH: {len(profile['kernels'])} kernels in grader profile, {len(direct)} in the direct run")
EOF
}

direct() {
  local ncu; ncu=$(ncu_bin)
  export LD_LIBRARY_PATH; LD_LIBRARY_PATH=$("$PY" -c "from grader.toolchain import detect; print(detect().cuda_lib_dir)")
  for f in $(top_rungs); do
    local slug rung; slug=$(basename "$(dirname "$f")"); rung=$(basename "$f" .cu); local run=$PROFILES/$slug-$rung.run
    ensure "$f" >/dev/null
    [ -f "$run/runner" ] || { echo "==== $slug-$rung: could not be profiled (see $slug-$rung.err)"; continue; }
    echo "==== $slug-$rung: direct ncu on $run/runner (outside kerneljudge, same options)"
    (cd "$run" && mkdir -p out && timeout 400 "$ncu" --target-processes all --set full --cache-control all --clock-control none \
        --export direct.ncu-rep --force-overwrite ./runner <request.txt >direct.log 2>&1; tail -3 direct.log
     "$ncu" --import direct.ncu-rep --csv --page raw --print-units base >direct.csv)
    compare "$PROFILES/$slug-$rung.json" "$run/direct.csv"
  done
  keep
}

fixtures() {
  mkdir -p "$LOGS/fixtures"
  for name in softmax-01_naive softmax-04_online matmul-01_naive matmul-04_tf32x3_mma; do
    local run=$PROFILES/$name.run
    ensure "solutions/${name%%-0*}/0${name#*-0}.cu"
    [ -f "$run/raw.csv" ] || { echo "no $name (see $name.err)"; continue; }
    local bench; bench=$("$PY" -c "import json; print(json.load(open('$PROFILES/$name.json'))['benchmark'])")
    cp "$run/raw.csv" "$LOGS/fixtures/$name-$bench.csv"
    cp "$PROFILES/$name.ncu-rep" "$LOGS/fixtures/$name-$bench.ncu-rep"
    cp "$PROFILES/$name.json" "$LOGS/fixtures/$name-$bench.json"
    ls -la "$LOGS/fixtures/$name-$bench".*
  done
}

baselines() {
  "$PY" - $PROBLEMS <<'EOF'
import sys
from grader.study import bench
from grader.problems.spec import load_problem
print(f"{'problem':18} {'benchmark':14} {'graph us':>10} {'eager us':>10} {'eager/graph':>11}  mode")
for slug in sys.argv[1:]:
    problem = load_problem(slug)
    for size_set in problem.benchmarks_for("cuda")[:1]:
        r = bench.time_baseline(problem, size_set)
        ratio = r.eager_us / r.median_us if r.eager_us else float("nan")
        print(f"{slug:18} {size_set.name:14} {r.median_us:10.2f} {r.eager_us or 0:10.2f} {ratio:11.3f}  {r.mode}")
EOF
  "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/test_profile_baseline.py
}

site() {
  for f in solutions/softmax/01_naive.cu solutions/softmax/04_online.cu; do
    echo "==== grader submit softmax $f --profile"
    timeout 500 $G submit softmax "$f" --profile | tail -25
  done
  echo "==== PyTorch's softmax baseline (graph replay and eager), stored as the board's baseline row"
  "$PY" - <<'EOF'
from grader.toolchain import detect
from grader.study import bench
from grader.problems.spec import load_problem
from grader.records import storage
problem, gpu = load_problem("softmax"), detect().gpu
timed = [bench.time_baseline(problem, b) for b in problem.benchmarks_for("cuda")]
device = {"name": gpu.name, "driver": gpu.driver, "compute_capability": gpu.compute_capability}
storage.save_baseline("softmax", device, "cuda", timed, source="problems/softmax/reference.py: baseline")
for r in timed:
    print(f"{r.name:12} graph {r.median_us:10.2f} us  eager {r.eager_us or 0:10.2f} us  {r.mode}")
EOF
  $G leaderboard softmax
  $G leaderboard softmax --by sol
  $G render --out "$LOGS/site" && tar -C "$LOGS" -czf "$LOGS/site.tar.gz" site && ls "$LOGS/site/submissions" | head
}

for s in "${@:-check ladders direct fixtures baselines site}"; do for one in $s; do case $one in
  check|ladders|direct|fixtures|baselines|site) step "$one" "$one" ;;
  *) echo "unknown step $one (steps: check ladders direct fixtures baselines site)" ;;
esac; done; done
