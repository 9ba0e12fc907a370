#!/usr/bin/env bash
# Sets kerneljudge up on a GPU host with no network, in the folder `make offline-bundle` made (docs/deploy.md,
# "An offline GPU host"): the venv from wheelhouse/ (make setup, which installs from it alone), then, where
# docker-debs/ is there and the host has no Docker engine yet, the engine from those packages (as root, through apt,
# which installs only the packages the host lacks). It ends with `grader doctor`; next: make gpu-check REPORT=...
#   bash scripts/offline_install.sh [PYTHON]        (PYTHON: the interpreter to build on; default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}
wanted=$(cat wheelhouse/python-version 2> /dev/null || true)
have=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ -n "$wanted" ] && [ "$wanted" != "$have" ]; then
  echo "wheelhouse/ holds wheels for Python $wanted and $python is $have: give a Python $wanted, e.g." \
    "bash $0 python$wanted (or make the bundle with WHEELHOUSE_PY=$have)" >&2
  exit 1
fi
make setup PYTHON="$python"

if [ -d docker-debs ] && ! command -v dockerd > /dev/null; then
  [ "$(id -u)" = 0 ] || { echo "docker-debs/: run this as root to install the Docker engine" >&2; exit 1; }
  repo=$(realpath docker-debs)
  # a local package repository: its index made here with dpkg-deb alone, then apt resolves and installs from it
  for deb in "$repo"/*.deb; do
    dpkg-deb -f "$deb"
    echo "Filename: ./$(basename "$deb")"
    echo "Size: $(stat -c %s "$deb")"
    echo "SHA256: $(sha256sum "$deb" | cut -d' ' -f1)"
    echo
  done > "$repo/Packages"
  # apt sees that repository alone (its own lists folder) beside what dpkg has installed: the host's own package
  # lists, stale or missing on a host with no network, play no part
  apt_state=$(mktemp -d)
  trap 'rm -rf "$apt_state"' EXIT
  mkdir "$apt_state/lists"
  echo "deb [trusted=yes] file:$repo ./" > "$apt_state/sources.list"
  apt=(apt-get -o Dir::Etc::SourceList="$apt_state/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$apt_state/lists" -o APT::Sandbox::User=root)
  "${apt[@]}" update
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends docker.io
  if [ -d /run/systemd/system ]; then
    systemctl enable --now docker
  else
    echo "no systemd here: start the engine with  dockerd > /var/log/dockerd.log 2>&1 &  (docs/deploy.md)"
  fi
fi
.venv/bin/grader doctor
echo "next: make gpu-check REPORT=gpu-check-report (docs/deploy.md, \"Checking a GPU host\")"
