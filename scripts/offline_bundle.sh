#!/usr/bin/env bash
# `make offline-bundle`: one tarball for a GPU host with no network. It holds one folder, kerneljudge-<commit>/: the
# repository at HEAD (git archive: committed files only), wheelhouse/ (make wheelhouse) and, when DEBS is given,
# docker-debs/ (make debs). On the host, scripts/offline_install.sh in that folder sets it up (docs/deploy.md).
#   bash scripts/offline_bundle.sh BUNDLE.tar.gz WHEELHOUSE [DEBS]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BUNDLE.tar.gz WHEELHOUSE [DEBS]" >&2; exit 2; }
bundle=$(realpath -m "$1") wheels=$(realpath -m "$2") debs=${3:+$(realpath -m "$3")}
cd "$(dirname "$0")/.."
name=kerneljudge-$(git rev-parse --short=10 HEAD)
ls "$wheels"/*.whl > /dev/null 2>&1 || { echo "no wheels in $wheels: make wheelhouse first" >&2; exit 1; }
[ -z "$debs" ] || ls "$debs"/docker.io_*.deb > /dev/null 2>&1 || { echo "no docker.io .deb in $debs: make debs first" >&2; exit 1; }
git diff --quiet HEAD -- || echo "note: uncommitted changes are not in the bundle, which holds HEAD ($name)" >&2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
git archive HEAD | tar -x -C "$stage/$name"
cp -r "$wheels" "$stage/$name/wheelhouse"
rm -f "$stage/$name/wheelhouse/requirements.txt"
if [ -n "$debs" ]; then mkdir "$stage/$name/docker-debs" && cp "$debs"/*.deb "$stage/$name/docker-debs/"; fi
mkdir -p "$(dirname "$bundle")"
tar -C "$stage" -czf "$bundle.part" "$name"
mv "$bundle.part" "$bundle"
(cd "$(dirname "$bundle")" && sha256sum "$(basename "$bundle")" > "$(basename "$bundle").sha256")
echo "$bundle: $name, $(du -h "$bundle" | cut -f1): $(ls "$stage/$name/wheelhouse"/*.whl | wc -l) wheels for Python" \
  "$(cat "$stage/$name/wheelhouse/python-version" 2> /dev/null || echo '?')$([ -z "$debs" ] || echo ", $(ls "$debs"/*.deb | wc -l) .debs")"
echo "on the GPU host: tar -xzf $(basename "$bundle") && cd $name && bash scripts/offline_install.sh"
