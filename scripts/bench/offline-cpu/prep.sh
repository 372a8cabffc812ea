#!/usr/bin/env bash
# The bundle for a machine with no network (a lent GPU machine's CPU: our engine against a CPU-only
# llama.cpp on random-weight twins of the judges), from the repo root, with network for the pip steps:
#   bash scripts/bench/offline-cpu/prep.sh [DEST]      (DEST defaults to .cache/gpu-run; ~36 MB)
# There: `bash DEST/run.sh` (see its header); `bash DEST/diag.sh` when llama.cpp's build crashes.
# Needs scikit-build-core importable for `pip download --no-build-isolation` (it prepares metadata):
# e.g. pip install --target /tmp/drytools numpy scikit-build-core cmake ninja; PYTHONPATH=/tmp/drytools.
set -euo pipefail
DEST=${1:-.cache/gpu-run}
mkdir -p "$DEST"
tmp=$(mktemp -d)
# 1. the llama-cpp-python sdist, stripped to what a CPU-only build needs (76 MB -> ~3 MB)
pip download llama-cpp-python==0.3.36 --no-deps --no-binary :all: --no-build-isolation -d "$tmp/sdist"
tar xzf "$tmp/sdist/llama_cpp_python-0.3.36.tar.gz" -C "$tmp"
(
  cd "$tmp/llama_cpp_python-0.3.36"
  rm -rf .git .github docker docs examples tests scripts mkdocs.yml Makefile .readthedocs.yaml llama_cpp/server
  cd vendor/llama.cpp
  rm -rf .git docs models media examples benches tests tools gguf-py conversion scripts pocs app ci grammars skills \
    requirements requirements.txt convert_*.py .devops .github Makefile build-xcframework.sh flake.nix AGENTS.md CLAUDE.md \
    CODEOWNERS CONTRIBUTING.md SECURITY.md README.md mypy.ini pyrightconfig.json ty.toml pyproject.toml CMakePresets.json AUTHORS
  cd ggml/src
  for d in ggml-*/; do [ "$d" = ggml-cpu/ ] || rm -rf "$d"; done
)
tar czf "$DEST/llama_cpp_python-0.3.36.tar.gz" -C "$tmp" llama_cpp_python-0.3.36
# 2. skeletons of the judges (header + tensor table; the twins are filled there)
for m in qwen2.5-coder-0.5b qwen2.5-coder-1.5b; do
  python3 scripts/bench/twin_gguf.py skeleton ~/.cache/rocketjudge/models/$m.gguf "$DEST/$m.skel"
done
cp scripts/bench/twin_gguf.py scripts/bench/offline-cpu/{run.sh,llama_smoke.py,diag.sh} "$DEST/"
# 3. the binary, debug info stripped (symbols kept for backtraces)
objcopy --strip-debug target/release/rocketjudge "$DEST/rocketjudge"
# 4. pure-Python fallbacks for llama_cpp's imports (used only where python3 lacks them)
rm -rf "$DEST/pydeps"
pip install --no-deps --target "$DEST/pydeps" diskcache jinja2 markupsafe typing_extensions
find "$DEST/pydeps" -name '*.so' -delete
rm -rf "$DEST/pydeps/bin"
find "$DEST/pydeps" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$tmp"
du -sh "$DEST"
