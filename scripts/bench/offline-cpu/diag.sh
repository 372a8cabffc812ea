#!/usr/bin/env bash
# Why a CPU-only llama-cpp-python build dies at load on the lent machine: one build, the 0.5B twin,
# verbose loads with variations (mmap off, 1 thread), each in a subprocess with its last lines printed.
set -uo pipefail
B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=.cache/gpu-run-work; S=$W/llama-site; mkdir -p $W/twins
python3 $B/twin_gguf.py fill $B/qwen2.5-coder-0.5b.skel $W/twins/q.gguf || exit 1
if [ ! -f $S/llama_cpp/__init__.py ]; then
  CMAKE_ARGS="-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF -DGGML_CUDA=OFF -DGGML_NATIVE=ON -DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' -DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'" \
  CMAKE_BUILD_PARALLEL_LEVEL=16 python3 -m pip install --disable-pip-version-check --no-build-isolation --no-deps --no-index --no-cache-dir --target $S $B/llama_cpp_python-0.3.36.tar.gz > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
fi
PP=$S:$B/pydeps # llama_cpp imports diskcache and jinja2, which the machine's python3 may lack
cat > $W/d.py <<'PY'
import sys, faulthandler; faulthandler.enable()
from llama_cpp import Llama
mmap, threads = sys.argv[2] == '1', int(sys.argv[3])
llm = Llama(model_path=sys.argv[1], n_ctx=1024, n_batch=512, n_threads=threads, n_gpu_layers=0, use_mmap=mmap, verbose=True)
print('LOADED', flush=True)
llm.eval(list(range(100, 164)))
print('EVAL OK', flush=True)
PY
for v in "1 16" "0 16" "1 1"; do
  echo "=== use_mmap/threads: $v"
  PYTHONPATH=$PP timeout 120 python3 $W/d.py $W/twins/q.gguf $v > $W/d.log 2>&1; echo "rc=$?"
  grep -v "^llama_model_loader: - kv\|^llama_model_loader: - type\|print_info" $W/d.log | tail -25 | cut -c1-300
done
if command -v gdb >/dev/null; then
  echo "=== gdb"
  PYTHONPATH=$PP timeout 120 gdb -q -batch -iex 'set debuginfod enabled off' -ex run -ex bt --args $(python3 -c "import sys;print(sys.executable)") $W/d.py $W/twins/q.gguf 1 16 2>&1 | grep -E "^#|SIG" | head -25
  echo "(gdb args note: run with python path above)"
fi
