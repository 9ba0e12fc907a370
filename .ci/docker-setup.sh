#!/usr/bin/env bash
# CI, before the tests: a Docker engine and debootstrap for tests/test_container.py (docs/container.md).
# Installs docker.io and debootstrap where they are missing, starts dockerd where it is installed and not running,
# and waits for it. Never fails the run: where Docker cannot be had, it says why and exits 0, and the container
# tests skip themselves with that reason.
set -uo pipefail

say() { echo "docker-setup: $*"; }
give_up() { say "$* -- the container tests will be skipped"; exit 0; }

engine_up() { timeout 10 docker version --format '{{.Server.Version}}' > /dev/null 2>&1; }

if command -v docker > /dev/null && engine_up; then
    say "Docker engine $(docker version --format '{{.Server.Version}}') already running"
else
    missing=()
    command -v dockerd > /dev/null || missing+=(docker.io)
    command -v debootstrap > /dev/null || missing+=(debootstrap)
    if ((${#missing[@]})); then
        [ "$(id -u)" = 0 ] || give_up "not root, cannot install ${missing[*]}"
        command -v apt-get > /dev/null || give_up "no apt-get to install ${missing[*]}"
        say "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq > /tmp/docker-setup-apt.log 2>&1 \
            && apt-get install -y -qq --no-install-recommends "${missing[@]}" >> /tmp/docker-setup-apt.log 2>&1 \
            || { tail -5 /tmp/docker-setup-apt.log; give_up "apt-get install ${missing[*]} failed"; }
    fi
    command -v dockerd > /dev/null || give_up "no dockerd after installing docker.io"
    [ "$(id -u)" = 0 ] || give_up "not root, cannot start dockerd"
    start_dockerd() {  # the grader needs no bridge: runs use --network none, builds --network host
        say "starting dockerd${*:+ $*} (log: /tmp/dockerd.log)"
        nohup dockerd "$@" >> /tmp/dockerd.log 2>&1 < /dev/null &
        for _ in $(seq 60); do
            engine_up && return 0
            kill -0 $! 2> /dev/null || return 1
            sleep 1
        done
        return 1
    }
    if command -v pgrep > /dev/null && pgrep -x dockerd > /dev/null; then
        say "dockerd is running; waiting for it"
        for _ in $(seq 60); do engine_up && break; sleep 1; done
    else
        # Where the kernel or the sandbox refuses iptables, the default start fails: then without a bridge.
        start_dockerd || start_dockerd --iptables=false --bridge=none || true
    fi
    engine_up || { tail -5 /tmp/dockerd.log 2> /dev/null; give_up "dockerd did not answer within 60 s"; }
    say "Docker engine $(docker version --format '{{.Server.Version}}') is up"
fi

if ! command -v debootstrap > /dev/null && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    say "installing debootstrap"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap) > /dev/null 2>&1 \
        || say "could not install debootstrap: only a cached base image or tarball can be used"
fi
exit 0
