#!/usr/bin/env bash
# Build the app as a folder any static host serves as is (GitHub Pages, a bucket, `python3 -m
# http.server`): page, wasm engine, bundled MT-Bench with demo answers, and the judge models cut
# into parts of at most 95 MB that the page joins and checks against SHA-256.
#   scripts/static-site.sh OUT [rocketjudge site options]
# e.g. scripts/static-site.sh site                                   # the 1.5B and 0.5B judges copied in
#      scripts/static-site.sh site --models qwen2.5-coder-0.5b       # one judge (GitHub Pages: sites <= 1 GB)
#      scripts/static-site.sh site --model-base https://host/models/ # models hosted elsewhere (CORS)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/static-site.sh OUT [rocketjudge site options]" >&2; exit 2; }
out="$1"; shift
source scripts/lib/setup.sh
setup_wasm
setup_node
build_cli
./scripts/build-web.sh
exec ./target/release/rocketjudge site --out "$out" "$@"
