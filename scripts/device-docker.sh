#!/usr/bin/env bash
# The container sandbox on a GPU node with no Docker engine and no network (issue 19), from the repo root. It
#   setup     make setup offline from wheelhouse/ (which must hold the docker SDK: make wheelhouse), unless done
#   engine    starts dockerd from Debian's packages carried here (make debs on a machine with apt: the bundle
#             .engine/docker-engine.tar.xz, else the .debs in $DEBS), in a private prefix, without network or iptables
#   image     builds the CUDA grader image from this host's own g++ and CUDA install (scripts/host_image.py)
#   doctor    grader doctor with that image: which sandbox and which GPU path, and why
#   submit    grader submit attention <top rung> --sandbox docker --json, then local, each twice (the second cached):
#             the per-grading overhead of the container
#   fixtures  the CUDA fixtures (tests/fixtures, tests/adversarial) graded in both sandboxes, verdicts compared
#   validate  grader validate-timing VT_PROBLEMS with the container, then with the local sandbox
# Steps are the arguments (default: all, in that order); each is time-limited and logged to $LOGS/<step>.log, so one
# failure hides nothing of the rest. All of them take about 6-8 min of a GPU machine; in two calls of a warm machine:
#   bash scripts/device-docker.sh setup engine image doctor submit      then      bash scripts/device-docker.sh engine image fixtures validate
# (engine and image are kept under /tmp and reused while the machine is the same: dockerd runs in its own session, so
# a device call that returns does not end it).
set -uo pipefail
OUT=${OUT:-$PWD/.out}
LOGS=${LOGS:-/tmp/kj-docker-logs}  # every step's log; $OUT gets them as one tar.gz (a device call returns 8 files at most)
mkdir -p "$OUT" "$LOGS"
ENGINE=${ENGINE:-.engine}
DEBS=${DEBS:-.debs}
PREFIX=${PREFIX:-/tmp/kj-docker}
TAG=${TAG:-kerneljudge-cuda:host}
VT_PROBLEMS=${VT_PROBLEMS:-attention}
FIXTURE_BUDGET_S=${FIXTURE_BUDGET_S:-180}
G=.venv/bin/grader
PY=.venv/bin/python
export PYTHONUNBUFFERED=1 KERNELJUDGE_DATA=${KERNELJUDGE_DATA:-/tmp/kj-data} DOCKER_HOST=unix://$PREFIX/docker.sock
export KERNELJUDGE_IMAGE=$TAG

step() {  # step NAME SECONDS COMMAND...: run it under a time limit, log it, say how long it took and how it ended
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit} s)"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" bash -c '"$@"' _ "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  tail -n "${TAIL:-20}" "$LOGS/$name.log"
  echo "== $name: exit $rc$([ $rc = 124 ] && echo ' (time limit)') after $((SECONDS - t0)) s"
  return $rc
}

engine_up() { "$PY" -c 'import docker; print(docker.from_env(timeout=5).version()["Version"])' 2> /dev/null; }

start_engine() {
  if engine_up > /dev/null; then echo "an engine already answers at $DOCKER_HOST"; info; return 0; fi
  local root=$PREFIX/root
  mkdir -p "$root"
  if [ -s "$ENGINE/docker-engine.tar.xz" ]; then
    tar -C "$root" -xJf "$ENGINE/docker-engine.tar.xz" 2> /dev/null \
      || "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$ENGINE/docker-engine.tar.xz" "$root" \
      || return 1
  elif ls "$DEBS"/*.deb > /dev/null 2>&1; then
    for deb in "$DEBS"/*.deb; do dpkg-deb -x "$deb" "$root" || return 1; done
  else
    echo "no $ENGINE/docker-engine.tar.xz and no .debs in $DEBS: run 'make debs ENGINE=$ENGINE' on a machine with apt"
    return 1
  fi
  export PATH=$root/usr/sbin:$root/usr/bin:$PATH
  local libs=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu
  echo "kernel $(uname -r); cgroup: $(stat -fc %T /sys/fs/cgroup); /tmp on $(stat -fc %T /tmp); uid $(id -u);" \
    "AppArmor: $(cat /sys/module/apparmor/parameters/enabled 2> /dev/null || echo none)$(command -v apparmor_parser > /dev/null && echo ', apparmor_parser there')"
  ls -l /dev/nvidia* 2> /dev/null | head -8
  echo "missing libraries of dockerd on this host (carried ones are used): $(ldd "$root/usr/sbin/dockerd" | grep -c 'not found')"
  for driver in overlay2:"$PREFIX/data" overlay2:/dev/shm/kj-docker-data vfs:"$PREFIX/data-vfs"; do
    local name=${driver%%:*} data=${driver#*:}
    echo "-- dockerd --storage-driver=$name --data-root $data"
    mkdir -p "$data" "$PREFIX/exec"
    LD_LIBRARY_PATH=$libs setsid nohup dockerd --host "$DOCKER_HOST" --data-root "$data" --exec-root "$PREFIX/exec" \
      --pidfile "$PREFIX/dockerd.pid" --storage-driver "$name" --iptables=false --ip-masq=false --bridge=none \
      --exec-opt native.cgroupdriver=cgroupfs --init-path "$root/usr/bin/tini-static" --log-level warn \
      > "$LOGS/dockerd-$name.log" 2>&1 < /dev/null &
    local pid=$!
    for _ in $(seq 60); do
      engine_up > /dev/null && { echo "dockerd $pid is up ($name at $data)"; info; return 0; }
      kill -0 $pid 2> /dev/null || break
      sleep 1
    done
    echo "dockerd with $name did not come up; its log:"; tail -n 15 "$LOGS/dockerd-$name.log"
    kill $pid 2> /dev/null; wait $pid 2> /dev/null
  done
  cat << 'EOF'
The engine could not run here. An operator's GPU host needs: a kernel with cgroups (v1 or v2) and overlayfs (or
room for vfs), root (or rootless Docker with user namespaces), dockerd + containerd + runc, and either the NVIDIA
container toolkit (then `--gpus` / device requests) or the /dev/nvidia* nodes and the driver's libcuda.so and
libnvidia-*.so (the grader binds them read-only). docs/container.md, "A GPU host".
EOF
  return 1
}

info() {
  "$PY" - << 'EOF'
import docker
info = docker.from_env().info()
for key in ("ServerVersion", "Driver", "CgroupDriver", "CgroupVersion", "Runtimes", "SecurityOptions", "KernelVersion"):
    print(f"{key}: {info.get(key)}")
EOF
}

build_image() {
  if [ -z "${REBUILD:-}" ] && "$PY" -c "import docker; docker.from_env().images.get('$TAG')" 2> /dev/null; then
    echo "$TAG is there (REBUILD=1 makes it again)"
  else
    "$PY" scripts/host_image.py --tag "$TAG" || return 1
  fi
  "$PY" -c "import docker; i = docker.from_env().images.get('$TAG'); print('$TAG', i.id[:19], round(i.attrs['Size'] / 2**20), 'MiB')"
}

submit_both() {  # the top rung in each sandbox, twice each (the first compiles, the second is cached)
  local f=solutions/attention/03_flash_split_kv.cu
  [ -f $f ] || f=$(ls solutions/attention/0*.cu | tail -1)
  local n=0
  for sandbox in docker local docker local; do
    n=$((n + 1))
    local t0 t1 json=$LOGS/submit-$n-$sandbox.json; t0=$(date +%s%N)
    $G submit attention "$f" --sandbox $sandbox --json > "$json"; local rc=$?
    t1=$(date +%s%N)
    echo "$n. grader submit attention $f --sandbox $sandbox --json: exit $rc, $(( (t1 - t0) / 1000000 )) ms wall"
    "$PY" -c "import json; v = json.load(open('$json')); print('  ', v['status'], v.get('score_us'), v.get('stages_s'), v.get('toolchain'), v.get('message', '')[:300])"
  done
}

validate_both() {
  KERNELJUDGE_SANDBOX=docker $G validate-timing $VT_PROBLEMS --json > "$LOGS/validate-docker.json"; echo "docker: exit $?"
  KERNELJUDGE_SANDBOX=local $G validate-timing $VT_PROBLEMS --json > "$LOGS/validate-local.json"; echo "local: exit $?"
  "$PY" - "$LOGS/validate-docker.json" "$LOGS/validate-local.json" << 'EOF'
import json, sys
docker, local = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: (r["problem"], r["benchmark"], r["who"])
base = {key(r): r for r in local}
for r in docker:
    l = base.get(key(r), {})
    a, b = r.get("kerneljudge_us"), l.get("kerneljudge_us")
    print(*key(r), f"docker {a} us, local {b} us, docker/local {a / b:.4f}" if a and b else f"docker {a}, local {b}")
EOF
}

export -f engine_up start_engine info build_image submit_both validate_both
export OUT LOGS ENGINE DEBS PREFIX TAG VT_PROBLEMS G PY
for s in ${@:-setup engine image doctor submit fixtures validate}; do case $s in
  setup)    [ -x $G ] && "$PY" -c 'import docker' 2> /dev/null && echo "== setup: already done" \
              || step setup 180 make setup PYTHON=${PYTHON:-python3} ;;
  engine)   step engine 120 start_engine ;;
  image)    step image 300 build_image ;;
  doctor)   step doctor 60 $G doctor ;;
  submit)   step submit 240 submit_both ;;
  fixtures) step fixtures $((FIXTURE_BUDGET_S + 60)) "$PY" scripts/compare_sandboxes.py --budget "$FIXTURE_BUDGET_S" --skip "${FIXTURE_SKIP:-0}" --out "$LOGS/fixtures-from-${FIXTURE_SKIP:-0}.jsonl" ;;
  validate) step validate 300 validate_both ;;
  *) echo "unknown step $s" ;;
esac; done
tar -czf "$OUT/device-docker-logs.tar.gz" -C "$LOGS" . && echo "logs: $OUT/device-docker-logs.tar.gz ($(ls "$LOGS" | wc -l) files)"
