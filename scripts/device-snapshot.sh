#!/usr/bin/env bash
# The folder a device call carries: a lent GPU machine has no network and receives only the working tree, so
# .snap/ holds the committed tree of a ref (default HEAD), wheelhouse/ for the GPU image's Python (3.12) without
# the dev tools (mypy, ruff: set EXTRAS=test,distributed there), and with --engine the Docker engine bundle for
# scripts/device-docker.sh (make debs). --add REF:PATH copies one more file from another ref, e.g. a branch's rung
# to bench beside main's ladder. The wheelhouse and the engine bundle are made once and kept under /tmp.
# Prints the size and fails above what a call can carry (64 MiB). Used by developers, e.g.
#   bash scripts/device-snapshot.sh --engine --add my-branch:solutions/gemm-fp16/06_new_rung.cu
#   device run, carry [".snap"]: cd .snap && export EXTRAS=test,distributed && OUT=$OUT bash scripts/device-run.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
ref=HEAD engine=0 added=()
while [ $# -gt 0 ]; do
  case $1 in
    --ref) ref=$2; shift 2 ;;
    --engine) engine=1; shift ;;
    --add) added+=("$2"); shift 2 ;;
    *) echo "usage: $0 [--ref REF] [--engine] [--add REF:PATH]..." >&2; exit 2 ;;
  esac
done
wheels=${SNAPSHOT_WHEELHOUSE:-/tmp/kj-wheelhouse-3.12}
bundle=${SNAPSHOT_ENGINE:-/tmp/kj-engine}
[ -s "$wheels/python-version" ] || make wheelhouse WHEELHOUSE="$wheels" WHEELHOUSE_PY=3.12
rm -rf .snap && mkdir .snap
git archive "$ref" | tar -x -C .snap
cp -r "$wheels" .snap/wheelhouse && rm -f .snap/wheelhouse/mypy-* .snap/wheelhouse/ruff-*
for spec in ${added[@]+"${added[@]}"}; do
  mkdir -p ".snap/$(dirname "${spec#*:}")"
  git show "$spec" > ".snap/${spec#*:}"
  echo "added ${spec#*:} from ${spec%%:*}"
done
if [ "$engine" = 1 ]; then
  [ -s "$bundle/docker-engine.tar.xz" ] || make debs ENGINE="$bundle"
  mkdir -p .snap/.engine && cp "$bundle/docker-engine.tar.xz" .snap/.engine/
fi
size=$(du -sm .snap | cut -f1)
echo ".snap: $(git rev-parse --short "$ref") of $ref, $size MiB"
[ "$size" -lt 64 ] || { echo "over the 64 MiB a device call carries" >&2; exit 1; }
