#!/usr/bin/env bash
# One batch of GPU work for a lent GPU machine (no network): set up offline from wheelhouse/, then run the
# steps named as arguments, logging each to $LOGS/<step>.log (default /tmp/kj-device-run); after every step all of
# $LOGS is packed into $OUT/device-run-logs.tgz, since a device call brings back 8 files at most (and a call cut off
# at its time limit still brings back the last pack). Steps: grade (make grade PROBLEM=attention), doctor,
# cli-timings, fixtures, ladder, submit, test-gpu (or its halves test-gpu-adversarial, test-gpu-rest),
# gpu-supervisor, selftest, bench-solutions, leaderboard, site,
# validate, repeat, grade-many, cold-submit, startup, warm-timings, and for the Python tracks python-selftest, python-bench,
# python-overhead, python-validate, python-ladders, triton-batch. PROBLEMS limits the problem-wise steps (PYTHON_PROBLEMS,
# PYTHON_VALIDATE the Python ones). Used by developers; the project's own commands do the work. With a
# wheelhouse made without the dev tools (mypy, ruff), set EXTRAS=test,distributed.
set -uo pipefail
OUT=${OUT:-$PWD/.out}
LOGS=${LOGS:-/tmp/kj-device-run}
mkdir -p "$OUT" "$LOGS"
pack() { tar -czf "$OUT/device-run-logs.tgz" -C "$LOGS" . 2> /dev/null; }
export PYTHONUNBUFFERED=1 KERNELJUDGE_DATA=${KERNELJUDGE_DATA:-/tmp/kj-data} COLUMNS=${COLUMNS:-200}
make setup PYTHON=python3 >"$LOGS/setup.log" 2>&1 || { tail -30 "$LOGS/setup.log"; exit 1; }
G=.venv/bin/grader
step() { local name=$1; shift; echo "== $name"; local t0=$SECONDS;
  "$@" 2>&1 | tee "$LOGS/$name.log" | tail -${TAIL:-25}; echo "== $name took $((SECONDS - t0)) s"; pack; }
PROBLEMS=${PROBLEMS:-$(ls problems | grep -v '^ORDER$')}
top_rung() { ls solutions/"$1"/0*.cu | tail -1; }  # the last CUDA rung of a problem's ladder
now_ns() { date +%s%N; }
ms_since() { echo $(( ($(now_ns) - $1) / 1000000 )); }  # milliseconds since a now_ns reading
# grade-many over FOLDER on TRACK, kept as $LOGS/NAME.jsonl and NAME-summary.json: throughput, and every
# grading that was not accepted. An earlier output is removed first: grade-many resumes from it (on a machine
# kept warm between calls, session 7's Triton batch "graded" 20 files in 0.03 s from the previous call's jsonl).
grade_folder() {
  local name=$1 track=$2 folder=$3
  rm -f "$LOGS/$name.jsonl" "$LOGS/$name-summary.json"
  $G grade-many "$folder" --track "$track" --no-db -q -o "$LOGS/$name.jsonl" --summary-json "$LOGS/$name-summary.json"
  python3 -c "
import json; s = json.load(open('$LOGS/$name-summary.json')); print(s['statuses'], s['wall_s'], 's', s['gradings_per_hour'], 'per hour')
for line in open('$LOGS/$name.jsonl'):
    v = json.loads(line)
    if v.get('status') != 'accepted': print(v.get('file'), v.get('message'))
    for b in v.get('benchmarks') or []:  # the claim beside the supervisor's clock bound (docs/timing.md)
        bound = (b.get('mode') or '').partition('clock bound ')[2].split(' us')[0]
        if bound: print(f\"  {v.get('file')} {b['name']}: claim {b['median_us']:.1f} us, bound {bound} us, bound/claim {float(bound) / b['median_us']:.3f}\")"
}
# grader submit PROBLEM FILE --json into $LOGS/NAME.json, with its wall time, verdict, score and stages.
timed_submit() {
  local problem=$1 file=$2 name=$3 t0; t0=$(now_ns)
  $G submit "$problem" "$file" --json > "$LOGS/$name.json"
  echo "$name: $(ms_since "$t0") ms wall for: grader submit $problem $file --json"
  python3 -c "import json; v = json.load(open('$LOGS/$name.json')); print('  ', v['status'], v.get('score_us'), v['stages_s'], v.get('message', '')[:200])"
}
# Every CUDA rung of PROBLEMS graded at once, as a batch grader would (throughput, and no honest rung refused).
grade_many() {
  local folder=/tmp/kj-ladders; rm -rf "$folder"
  for slug in $PROBLEMS; do mkdir -p "$folder/$slug"; cp solutions/"$slug"/*.cu "$folder/$slug/" 2>/dev/null; done
  grade_folder grade-many cuda "$folder"
}
# The flash-attention submit with its build removed from the cache, then again with the build cached.
cold_submit() {
  local f; f=$(top_rung attention)
  for run in uncached cached; do
    [ $run = uncached ] && rm -rf "${KERNELJUDGE_CACHE:-$HOME/.cache/kerneljudge}/builds"
    timed_submit attention "$f" "$run"
  done
}
# Wall time of each quick command (three runs each), then of a cached submit of the attention top rung (three runs).
cli_timings() {
  local f; f=$(top_rung attention)
  $G submit attention "$f" --json > /dev/null  # builds and caches it, and measures the ceilings once
  for command in "--help" "--version" "list" "show softmax" "init softmax --track cuda -o /tmp/kj-init.cu" \
      "doctor" "leaderboard attention" "history" "submit attention $f --json"; do
    for run in 1 2 3; do
      local t0; t0=$(now_ns); $G $command > /dev/null 2>&1; local rc=$?; local ms; ms=$(ms_since "$t0")
      echo "grader $command: $ms ms (exit $rc)"
    done
  done
}
# Where a cached submit's wall time goes (issue 13): its profile by function, Python's import times, and what
# PyTorch's import and CUDA start cost alone on this machine.
startup() {
  local f; f=$(top_rung attention)
  $G submit attention "$f" --json > /dev/null  # built and cached; ceilings measured
  local t0; t0=$(now_ns)
  .venv/bin/python -m cProfile -o "$LOGS/submit.prof" -m grader.cli.main submit attention "$f" --json > "$LOGS/startup.json"
  echo "profiled cached submit: $(ms_since "$t0") ms wall"
  .venv/bin/python -c "
import json, pstats; print('stages', json.load(open('$LOGS/startup.json'))['stages_s'])
pstats.Stats('$LOGS/submit.prof').sort_stats('cumulative').print_stats(40)" | cut -c1-160
  .venv/bin/python -X importtime -c "import grader.cli.main" 2> "$LOGS/importtime.txt"
  sort -t'|' -k2 -n "$LOGS/importtime.txt" | tail -15
  t0=$(now_ns); .venv/bin/python -c "import torch"; echo "import torch: $(ms_since "$t0") ms"
  t0=$(now_ns); .venv/bin/python -c "import torch; torch.zeros(1, device='cuda')"
  echo "import torch + CUDA start + exit: $(ms_since "$t0") ms"
}
# Issue 13's warm path: a cached attention submit handed to `grader warm` (PyTorch and CUDA loaded once) beside the
# same submit graded in its own process (--in-process); each with its wall time, status and stages.
warm_timings() {
  local f worker t0 run; f=$(top_rung attention)
  $G submit attention "$f" --json > /dev/null  # built and cached; ceilings measured
  $G warm --idle-exit 10 > "$LOGS/warm-worker.log" 2>&1 & worker=$!
  for _ in $(seq 600); do grep -q "grading on" "$LOGS/warm-worker.log" && break; sleep 0.1; done
  for how in warm in-process; do for run in 1 2 3; do
    local flag=""; [ "$how" = in-process ] && flag=--in-process
    t0=$(now_ns); $G submit attention "$f" --json $flag > "$LOGS/$how-$run.json"; local ms; ms=$(ms_since "$t0")
    echo "$how submit $run: $ms ms wall, $(python3 -c "import json; v = json.load(open('$LOGS/$how-$run.json')); print(v['status'], v.get('score'), v.get('stages_s'))")"
  done; done
  $G doctor 2>&1 | grep -i warm
  kill -TERM "$worker"; wait "$worker"; cat "$LOGS/warm-worker.log"
}
PYTHON_PROBLEMS=${PYTHON_PROBLEMS:-vector-add softmax matmul attention}
PYTHON_VALIDATE=${PYTHON_VALIDATE:-softmax attention}  # validate-timing of the Python tracks' top rungs
# Per-grading overhead of each track: softmax's top CUDA, Triton and CuPy rungs, each submitted twice (the second
# finds the CUDA build cached; the Python tracks JIT again, their caches being private to a run).
python_overhead() {
  for f in solutions/softmax/04_online.cu solutions/softmax/02_triton_online.py solutions/softmax/02_cupy_block_per_row.py; do
    for run in 1 2; do timed_submit softmax "$f" "overhead-$(basename "$f")-$run"; done
  done
}
# Every Triton and CuPy rung of PYTHON_PROBLEMS graded as a batch, one track at a time: no honest rung refused,
# and each benchmark's claim beside the supervisor's clock bound.
python_ladders() {
  for t in triton cupy; do local folder=/tmp/kj-$t-ladders; rm -rf "$folder"
    for slug in $PYTHON_PROBLEMS; do mkdir -p "$folder/$slug"; cp solutions/"$slug"/0*_"$t"_*.py "$folder/$slug/" 2>/dev/null; done
    grade_folder "$t-ladders" "$t" "$folder"; done
}
# grade-many over a folder of Triton submissions (TRITON_COPIES copies of each Triton rung of softmax, default 10:
# at ~20 s a grading, 20 files take ~7 minutes): throughput.
triton_batch() {
  local folder=/tmp/kj-triton-batch; rm -rf "$folder"; mkdir -p "$folder/softmax"
  # each copy differs by a comment: grade-many grades identical sources once
  for i in $(seq "${TRITON_COPIES:-10}"); do for f in solutions/softmax/0*_triton_*.py; do
    { cat "$f"; echo "# copy $i"; } > "$folder/softmax/r$i-$(basename "$f")"; done; done
  grade_folder triton-batch triton "$folder"
}
for s in "$@"; do case $s in
  grade)    step grade make grade PROBLEM=attention ;;
  cli-timings) step cli-timings cli_timings ;;
  doctor)   step doctor $G doctor; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv ;;
  fixtures) step fixtures .venv/bin/python -m pytest -q -m gpu tests/test_fixtures.py -p no:cacheprovider ;;
  ladder)   for slug in $PROBLEMS; do for f in solutions/$slug/0*.cu; do
              step "test-$slug-$(basename "$f" .cu)" $G test "$slug" "$f"; done; done ;;
  submit)   for slug in $PROBLEMS; do f=$(top_rung "$slug");
              step "submit-$slug" bash -c "time $G submit $slug $f --json > $LOGS/submit-$slug.json; tail -c 1500 $LOGS/submit-$slug.json"; done ;;
  test-gpu) step test-gpu make test-gpu ;;
  # make test-gpu took 565 s in session 9, near a device call's 600: its two halves, for one call each
  test-gpu-adversarial) step test-gpu-adversarial .venv/bin/python -m pytest -q -m gpu tests/adversarial -p no:cacheprovider ;;
  test-gpu-rest) step test-gpu-rest .venv/bin/python -m pytest -q -m gpu tests --ignore=tests/adversarial -p no:cacheprovider ;;
  gpu-supervisor) step gpu-supervisor .venv/bin/python -m pytest -q -s -p no:cacheprovider tests/test_gpu_supervisor.py ;;
  grade-many) step grade-many grade_many ;;
  selftest) step selftest $G selftest ;;
  bench-solutions) step bench-solutions $G bench-solutions $PROBLEMS ;;
  leaderboard) for slug in $PROBLEMS; do step "leaderboard-$slug" $G leaderboard $slug; done ;;
  site)     step site $G render --out /tmp/kj-site && tar -C /tmp -czf "$LOGS/site.tar.gz" kj-site; pack ;;
  validate) step validate $G validate-timing $PROBLEMS ;;
  repeat)   for slug in $PROBLEMS; do step "repeat-$slug" $G bench $slug "$(top_rung "$slug")" --repeat 5; done ;;
  cold-submit) step cold-submit cold_submit ;;
  startup)  TAIL=80 step startup startup ;;
  warm-timings) step warm-timings warm_timings ;;
  python-selftest) TAIL=60 step python-selftest $G selftest $PYTHON_PROBLEMS --track triton --track cupy ;;
  python-bench) for t in cuda triton cupy; do step "bench-$t" $G bench-solutions $PYTHON_PROBLEMS --track $t; done ;;
  python-overhead) step python-overhead python_overhead ;;
  python-validate) for t in triton cupy; do step "validate-$t" $G validate-timing $PYTHON_VALIDATE --track $t; done ;;
  triton-batch) step triton-batch triton_batch ;;
  python-ladders) step python-ladders python_ladders ;;
  *) echo "unknown step $s" ;;
esac; done
