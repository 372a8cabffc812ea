# Shared setup steps for scripts/app.sh and scripts/test.sh. Each step is idempotent and says what it does.
# shellcheck shell=bash

log() { printf '== %s\n' "$*" >&2; }

setup_rust() {
  if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo is not installed: install Rust from https://rustup.rs first" >&2
    exit 1
  fi
}
