#!/usr/bin/env bash
# CI, after docker-setup.sh: the CUDA grader image built here with no registry (make docker-cuda-local: the locally
# made Debian base, nvcc, its headers and the CUDA runtime from NVIDIA's wheels on PyPI), then every CUDA ladder rung
# and every CUDA fixture compiled by the image's nvcc in containers of it, a compile error's diagnostics compared with
# the host's, and the harness's link to the image's CUDA runtime checked (tests/test_container_cuda.py; no GPU needed).
# Where no Docker engine answers it says so and exits 0 (docker-setup.sh said why); a failed build or compile fails.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "docker-cuda: $*"; }
if ! timeout 10 docker version --format '{{.Server.Version}}' > /dev/null 2>&1; then
    say "no Docker engine: the CUDA image is not built and its tests skip"
    exit 0
fi
export KERNELJUDGE_TEST_CUDA_IMAGE=${KERNELJUDGE_TEST_CUDA_IMAGE:-kerneljudge-cuda:test}
make setup > /dev/null
started=$SECONDS
build() { make --no-print-directory -f docker.mk docker-cuda-local CUDA_IMAGE="$KERNELJUDGE_TEST_CUDA_IMAGE" > /tmp/docker-cuda-build.log 2>&1; }
# once more after a failure: on a shared engine another user's cleanup can remove a cached layer mid-build
# ("COPY failed: lstat /var/lib/docker/overlay2/...: no such file or directory"), and the next build succeeds
build || { tail -5 /tmp/docker-cuda-build.log; say "the build failed; building once more"; build; } \
    || { tail -40 /tmp/docker-cuda-build.log; say "building $KERNELJUDGE_TEST_CUDA_IMAGE failed"; exit 1; }
say "$(tail -1 /tmp/docker-cuda-build.log) (built in $((SECONDS - started)) s)"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/test_container_cuda.py
