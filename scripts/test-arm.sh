#!/usr/bin/env bash
# The CPU engine's ARM kernels (NEON with and without the dotprod extension) on an x86 machine: the
# engine's unit tests cross-compiled for aarch64 and run under qemu, once as a CPU with dotprod
# (`-cpu max`) and once as one without (`-cpu cortex-a72`). scripts/test.sh runs this.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

need=()
command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
[ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
rust_target aarch64-unknown-linux-gnu
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
log "cross-compiling the engine's unit tests for aarch64"
# The engine (its kernels) as released; its dependencies (tokenizers, minijinja, gemm, …) at opt-level 1:
# they compile faster, and the unit tests need no more of them.
out=$(cargo test --release --locked -p rocketjudge-engine --lib --target aarch64-unknown-linux-gnu --no-run --message-format=json \
  --config 'profile.release.package."*".opt-level=1' 2>/dev/null \
  | python3 -c 'import sys,json; [print(m["executable"]) for m in map(json.loads, sys.stdin) if m.get("executable")]' | tail -1)
for cpu in max cortex-a72; do
  log "engine unit tests on qemu-aarch64 -cpu $cpu"
  qemu-aarch64 -cpu "$cpu" -L /usr/aarch64-linux-gnu "$out" --nocapture 2>&1
done
