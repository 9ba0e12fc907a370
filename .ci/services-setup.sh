#!/usr/bin/env bash
# CI, before the tests: Debian's redis-server and postgresql for tests/test_distributed.py, installed when
# missing. It never fails the run: where they cannot be installed (not root, no apt-get, no registry), it says
# so and exits 0, and those tests skip with the reason.
set -u

have_services() {
    command -v redis-server >/dev/null 2>&1 && compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}

if have_services; then
    echo "services-setup: redis-server and postgresql are installed"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "services-setup: no apt-get here; the tests that need redis-server and postgresql will skip"
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
        echo "services-setup: not root and no sudo; the tests that need redis-server and postgresql will skip"
        exit 0
    fi
fi

# The packages' own services are not wanted (the tests start throwaway ones): keep apt from starting them.
POLICY=/usr/sbin/policy-rc.d
ADDED_POLICY=""
if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null && $SUDO chmod 755 "$POLICY" && ADDED_POLICY=1
fi
export DEBIAN_FRONTEND=noninteractive
if $SUDO apt-get update -qq >/dev/null 2>&1 &&
   $SUDO apt-get install -y -qq --no-install-recommends redis-server postgresql >/dev/null 2>&1; then
    echo "services-setup: installed redis-server and postgresql"
else
    echo "services-setup: could not install redis-server and postgresql; the tests that need them will skip"
fi
[ -n "$ADDED_POLICY" ] && $SUDO rm -f "$POLICY"
exit 0
