# Compiled dependencies kept between runs, as the models and toolchains are: a fresh clone's first
# build starts from the `target/` folder a run left in the cache (native, both wasm builds, the ARM
# cross-build), so it compiles our own crates and only those dependencies whose inputs changed.
# Cargo decides what is fresh as always (the compiler, flags, features and versions of each unit
# are in its fingerprint; a build script's OUT_DIR paths are rewritten where the folder moved). Our
# own crates are always rebuilt: their fingerprints are dropped from the copy, because cargo hashes a
# workspace crate by its path relative to the workspace, so another checkout's build would
# otherwise look fresh to a clone whose files are older than it.
# shellcheck shell=bash

build_cache_dir() { echo "${ROCKETJUDGE_BUILD_CACHE:-${ROCKETJUDGE_CACHE:-$HOME/.cache/rocketjudge}/build}"; }

# What decides which dependencies are built, and how (versions, features, profiles, flags, the
# toolchains): a new stamp means a new copy is worth keeping.
build_cache_stamp() {
  local inputs=(Cargo.lock Cargo.toml crate/*/Cargo.toml .cargo/config.toml scripts/lib/wasm-threads-toolchain
    scripts/build-web.sh scripts/test-arm.sh scripts/test.sh)
  { cat "${inputs[@]}" 2>/dev/null || true; rustc -vV; } | sha256sum | cut -c1-16
}

# Drop the fingerprints of our own crates (every unit of the packages named rocketjudge*).
forget_workspace_units() { # TARGET_DIR
  find "$1" -type d -name .fingerprint -prune -exec sh -c \
    'for f in "$@"; do rm -rf "$f"/rocketjudge-*; done' sh {} +
}

# A checkout with no target/ yet starts from the cached one; any other is left as it is.
seed_build_cache() {
  local cached
  cached=$(build_cache_dir)/target
  if [[ -e target ]]; then return 0; fi
  if [[ ! -d $cached ]]; then
    log "no compiled dependencies in $(build_cache_dir) yet: building every crate (kept there after a passing run)"
    return 0
  fi
  log "starting from the compiled dependencies in $(build_cache_dir) (our own crates are rebuilt)"
  if ! cp -a "$cached" target; then
    log "could not copy them: building every crate"
    rm -rf target
    return 0
  fi
  forget_workspace_units target
}

# Keep this checkout's target/ for the next fresh clone, unless the cache already holds one built
# from the same inputs, with every build folder this one has (native, wasm, wasm-threads, aarch64).
# Never fails the caller: a cache that cannot be written is only slower.
save_build_cache() {
  local dir stamp tmp size sub cap=$((12 * 1024 * 1024 * 1024)) complete=1
  dir=$(build_cache_dir)
  stamp=$(build_cache_stamp)
  for sub in target/*/; do [[ $sub == target/tmp/ || -d $dir/$sub ]] || complete=0; done
  if ((complete)) && [[ $(cat "$dir/stamp" 2>/dev/null) == "$stamp" ]]; then return 0; fi
  size=$(du -sb target | cut -f1)
  if ((size > cap)); then
    log "not keeping the compiled dependencies: target/ holds $((size >> 30)) GiB (cap $((cap >> 30)))"
    return 0
  fi
  log "keeping the compiled dependencies ($((size >> 20)) MiB) in $dir for the next fresh clone"
  mkdir -p "$dir" && tmp=$(mktemp -d "$dir/.new.XXXXXX") || return 0
  if cp -a target "$tmp/target" && rm -rf "$tmp/target/tmp" && forget_workspace_units "$tmp/target"; then
    echo "$stamp" >"$tmp/stamp"
    rm -rf "$dir/target.old"
    if [[ -d $dir/target ]]; then mv "$dir/target" "$dir/target.old"; fi
    mv "$tmp/target" "$dir/target" && mv "$tmp/stamp" "$dir/stamp"
    rm -rf "$dir/target.old"
  else
    log "could not keep them (disk full?): the next fresh clone builds every crate"
  fi
  rm -rf "$tmp"
}
