#!/usr/bin/env bash
# The README's grading-order measurements (issue #26): complete runs replayed in each order with
# `rocketjudge replay` (nothing is graded twice; the gradings below are resumable).
#   scripts/replay/measure.sh            (needs data/, from python3 scripts/data/fetch.py, for the MT-Bench answers and GPT-4 grades,
#                                         and matplotlib for the plots: pip install matplotlib)
# 1. GPT-4's own single-answer grades of 12 FastChat-fork models on all 160 MT-Bench turns (a strong
#    judge's complete run: 1,920 responses, no grading needed).
# 2. The bundled demo (4 models x 16 turns) graded by Qwen2.5-Coder-0.5B.
# 3. The same 4 models on all 160 turns (640 responses) graded by Qwen2.5-Coder-0.5B (about an hour
#    on 2 cores; REPLAY_FULL=0 skips it).
# Output: docs/replay/<set>.txt (the replay's table) and <set>.png (the curves).
set -euo pipefail
cd "$(dirname "$0")/../.."
rj=${RJ:-./target/release/rocketjudge}
work=${REPLAY_WORK:-.cache/replay}
out=docs/replay
mkdir -p "$work" "$out"
[ -f "$work/inputs/queries.jsonl" ] || python3 scripts/quality/prepare.py --questions all --out "$work/inputs"
q="$work/inputs/queries.jsonl"

replay() { # name title replay-args...
  local name=$1 title=$2; shift 2
  "$rj" replay "$@" --queries "$q" --csv "$work/$name.csv" | tee "$out/$name.txt"
  python3 scripts/replay/plot.py "$work/$name.csv" "$title" "$out/$name.png"
}

replay gpt4-forks-160 "GPT-4's grades: 12 models x 160 MT-Bench turns (1,920 responses)" --scores "$work/inputs/forks-labels.jsonl" --seeds 10

"$rj" grade --model qwen2.5-coder-0.5b --queries "$q" --responses benchmarks/mt-bench/demo --out "$work/demo-0.5b"
replay demo-0.5b "Qwen2.5-Coder-0.5B: the demo, 4 models x 16 turns (64 responses)" --judgments "$work/demo-0.5b" --seeds 10

if [ "${REPLAY_FULL:-1}" = 1 ]; then
  mkdir -p "$work/four"
  for m in gpt-4 gpt-3.5-turbo vicuna-13b-v1.3 llama-13b; do cp "$work/inputs/lmsys/$m.jsonl" "$work/four/"; done
  "$rj" grade --model qwen2.5-coder-0.5b --queries "$q" --responses "$work/four" --out "$work/four-0.5b"
  replay four-0.5b "Qwen2.5-Coder-0.5B: 4 models x 160 MT-Bench turns (640 responses)" --judgments "$work/four-0.5b" --seeds 10
fi
