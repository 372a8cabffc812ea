#!/usr/bin/env bash
# Run every test of rocketjudge. Installs what it needs first (idempotent), so it works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

setup_rust
echo "== cargo test (workspace)"
cargo test --workspace --locked 2>&1
