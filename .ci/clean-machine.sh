#!/usr/bin/env bash
# CI: the README's setup, proven on a clean machine rather than on this one. Each run is a fresh container of the
# local Debian base (`make docker-base`: debootstrap minbase, no registry needed) with nothing on it but the system
# packages that README.md's `sudo apt-get install ...` line names, and a clean copy of HEAD (git archive).
#
#   bash .ci/clean-machine.sh fresh     README's first command, `make grade PROBLEM=softmax`, then a fast part of the
#                                       tests (specs, CLI, results, checker messages), with the network on
#                                       (PyPI and Debian)
#   bash .ci/clean-machine.sh offline   `make wheelhouse` for the container's Python on a clean copy (network on),
#                                       then, with no network at all (--network none), `make setup` from that
#                                       wheelhouse on a machine whose python3 is a venv holding PyTorch, numpy and
#                                       matplotlib (as on the GPU image), `pip check`, `make grade PROBLEM=softmax`
#                                       and `grader list`
#
# PyTorch: PyPI's Linux wheel is a CUDA build of several GB, so the CPU wheel for the base's Python (bookworm: 3.11)
# is taken from KJ_TORCH_WHEELS (default /opt/wheels), mounted read-only, with a pip constraint pinning it.
# A failing step fails CI. The run is skipped, saying why, only where no Docker engine answers, no base image can be
# made, or no such PyTorch wheel is there. Containers and the wheelhouse volume are removed on exit; the images
# kerneljudge-ci-fresh:bookworm and kerneljudge-ci-gpulike:bookworm are kept to be reused (`docker image rm` them).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case $mode in fresh | offline) ;; *) echo "usage: $0 fresh|offline" >&2; exit 2 ;; esac
say() { echo "clean-machine $mode: $*"; }
skip() { say "SKIPPED: $*"; exit 0; }
started=$SECONDS

BASE=${KJ_CI_BASE:-kerneljudge-base:bookworm}
FRESH=kerneljudge-ci-fresh:bookworm
GPULIKE=kerneljudge-ci-gpulike:bookworm
TORCH_WHEELS=${KJ_TORCH_WHEELS:-/opt/wheels}

timeout 10 docker version --format '{{.Server.Version}}' > /dev/null 2>&1 \
    || skip "no Docker engine answers (.ci/docker-setup.sh installs and starts one)"
tarball=$(make -s -f docker.mk --eval 'kj-tarball:; @echo $(BASE_TARBALL)' kj-tarball)
if ! docker image inspect "$BASE" > /dev/null 2>&1 && [ ! -s "$tarball" ] && ! command -v debootstrap > /dev/null; then
    skip "no $BASE image, no cached $tarball and no debootstrap to make one"
fi
make -s --no-print-directory -f docker.mk docker-base LOCAL_BASE="$BASE"

# What a user installs first, read from README.md so that the two cannot drift apart.
packages=$(sed -n 's/^sudo apt-get install \([a-z0-9 .+-]*\).*/\1/p' README.md | head -1 | xargs)
[ -n "$packages" ] || { say "README.md has no 'sudo apt-get install PACKAGES' line"; exit 1; }

tmp=$(mktemp -d)
run_id=kj-ci-$mode-$$
volume=$run_id-wheelhouse
cleanup() {
    docker ps -aq --filter "name=^$run_id" | xargs -r docker rm -f > /dev/null 2>&1 || true
    docker volume rm -f "$volume" > /dev/null 2>&1 || true
    rm -rf "$tmp"
}
finish() {
    local rc=$?
    cleanup
    [ "$rc" = 0 ] || say "FAILED (exit $rc) after $((SECONDS - started)) s"
    exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

git archive --format=tar -o "$tmp/src.tar" HEAD
git diff --quiet HEAD 2> /dev/null || say "note: the working tree differs from HEAD; this tests HEAD"
# Behind a TLS-inspecting proxy pip must trust its CA: the bundle pip here trusts ($PIP_CERT), if any.
pip_env=(-e PIP_DISABLE_PIP_VERSION_CHECK=1 -e PIP_NO_CACHE_DIR=1 -e PYTHONUNBUFFERED=1)
if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
    cp "$PIP_CERT" "$tmp/ca.pem"
    pip_env+=(-e PIP_CERT=/ci/ca.pem)
fi
mounts=(-v "$tmp:/ci:ro")
# A clean copy of HEAD in /src (no build output, no venv, no wheelhouse of this machine).
unpack='mkdir /src && tar -x -C /src -f /ci/src.tar && cd /src'

# An image made once and kept while its inputs are the same: a container of FROM runs SCRIPT, then is committed with
# the docker commit options that follow; its label kj.key is a hash of FROM's id, SCRIPT and those options.
image() {
    local tag=$1 from=$2 script=$3; shift 3
    local key
    key=$(printf '%s\n' "$(docker image inspect -f '{{.Id}}' "$from")" "$script" "$@" | sha256sum | cut -c1-16)
    if [ "$(docker image inspect -f '{{index .Config.Labels "kj.key"}}' "$tag" 2> /dev/null)" = "$key" ]; then
        say "$tag is there"
        return
    fi
    local t0=$SECONDS
    docker run --name "$run_id-image" --network host "${mounts[@]}" "${pip_env[@]}" "$from" bash -euo pipefail -c "$script"
    docker commit --change "LABEL kj.key=$key" --change 'CMD ["/bin/bash"]' "$@" "$run_id-image" "$tag" > /dev/null
    docker rm "$run_id-image" > /dev/null
    say "made $tag in $((SECONDS - t0)) s"
}

# The fresh machine: the base and what README.md says to install, nothing else.
image "$FRESH" "$BASE" "
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $packages > /dev/null
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb"

# PyTorch for the fresh machine's Python.
pytag=$(docker run --rm --network none "$FRESH" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
torch_wheel=$(ls "$TORCH_WHEELS"/torch-*-cp${pytag/./}-cp${pytag/./}-manylinux*_x86_64.whl 2> /dev/null | head -1 || true)
[ -n "$torch_wheel" ] || skip "no CPU PyTorch wheel for Python $pytag in $TORCH_WHEELS (KJ_TORCH_WHEELS): PyPI's is a CUDA build of several GB"
echo "torch==$(basename "$torch_wheel" | cut -d- -f2)" > "$tmp/constraints.txt"
mounts+=(-v "$torch_wheel:/ci-wheels/$(basename "$torch_wheel"):ro")

if [ "$mode" = fresh ]; then
    say "make grade PROBLEM=softmax and a fast part of the tests on a fresh machine (apt-get install $packages)"
    docker run --rm --name "$run_id" --network host "${mounts[@]}" "${pip_env[@]}" \
        -e PIP_FIND_LINKS=/ci-wheels -e PIP_CONSTRAINT=/ci/constraints.txt "$FRESH" bash -euo pipefail -c "
        $unpack
        make grade PROBLEM=softmax
        .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_problems.py tests/test_cli_results.py \
            tests/test_cli_usage.py tests/test_spec_errors.py tests/test_check_messages.py"
else
    # As on the GPU image: python3 is a venv that holds PyTorch, numpy and matplotlib (which the wheelhouse leaves out).
    image "$GPULIKE" "$FRESH" "
        python3 -m venv /opt/torch/.venv
        PIP_CONSTRAINT=/ci/constraints.txt PIP_NO_COMPILE=1 /opt/torch/.venv/bin/pip install -q /ci-wheels/$(basename "$torch_wheel") numpy matplotlib" \
        --change 'ENV PATH=/opt/torch/.venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    docker volume create "$volume" > /dev/null
    say "make wheelhouse WHEELHOUSE_PY=$pytag on a fresh machine"
    t0=$SECONDS
    docker run --rm --name "$run_id-wheelhouse" --network host "${mounts[@]}" "${pip_env[@]}" -v "$volume:/out" \
        "$FRESH" bash -euo pipefail -c "$unpack; make wheelhouse WHEELHOUSE=/out/wheelhouse WHEELHOUSE_PY=$pytag"
    say "wheelhouse made in $((SECONDS - t0)) s"
    say "make setup from the wheelhouse with no network, python3 = /opt/torch/.venv/bin/python3"
    docker run --rm --name "$run_id" --network none "${mounts[@]}" "${pip_env[@]}" -v "$volume:/out:ro" \
        "$GPULIKE" bash -euo pipefail -c "
        $unpack
        cp -r /out/wheelhouse wheelhouse
        make setup
        .venv/bin/python -m pip check
        make grade PROBLEM=softmax
        .venv/bin/grader list"
fi
say "passed in $((SECONDS - started)) s"
