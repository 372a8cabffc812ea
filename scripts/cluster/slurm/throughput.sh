#!/usr/bin/env bash
# Grading throughput of one node under Slurm, beside a plain `rocketjudge grade` on the same node in
# the same run: a subset of the bundled MT-Bench demo answers is graded through submit.sh for each
# layout (shards x CPUs per shard), from submission to the ranking, then once without Slurm.
#
#   scripts/cluster/slurm/throughput.sh --model qwen2.5-coder-0.5b [--queries 2] [--layouts "2x1 1x2"]
#
# Uses the cluster of $SLURM_CONF, or starts a local single-node one (local-cluster.sh; needs root).
# Prints a table: layout, responses, seconds to the last judgment and to the ranking, responses per
# minute, and the ratio to plain grade.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
model="" queries=2 layouts="2x1 1x$(nproc)"
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2 ;; --queries) queries=$2 ;; --layouts) layouts=$2 ;;
    *) echo "usage: throughput.sh --model M [--queries Q] [--layouts \"2x1 1x2\"]" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$model" ] || { echo "throughput.sh: --model is required" >&2; exit 2; }
bin=${RJ_BIN:-$root/target/release/rocketjudge}
[ -x "$bin" ] || { echo "throughput.sh: build rocketjudge first (cargo build --release -p rocketjudge)" >&2; exit 2; }
model=$("$bin" models path "$model")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${SLURM_CONF:-}" ]; then
  "$here/local-cluster.sh" start "$work/cluster" >/dev/null
  trap '"$here/local-cluster.sh" stop "$work/cluster"; rm -rf "$work"' EXIT
  export SLURM_CONF=$work/cluster/slurm.conf
fi

# Q turn-1 queries and every demo model's answers to them.
python3 - "$root/benchmarks/mt-bench" "$work" "$queries" <<'PY'
import json, os, sys
bench, out, q = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [json.loads(l) for l in open(f"{bench}/queries.jsonl")]
# The demo answers a few queries: take the first Q turn-1 ones that every demo model answered.
demo = [[json.loads(l)["session_id"] for l in open(f"{bench}/demo/{n}")] for n in sorted(os.listdir(f"{bench}/demo"))]
ids = [i for i in demo[0] if i.endswith("_turn1") and all(i in d for d in demo)][:q]
with open(f"{out}/queries.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows if r["session_id"] in ids)
os.makedirs(f"{out}/responses")
for name in sorted(os.listdir(f"{bench}/demo")):
    lines = [l for l in open(f"{bench}/demo/{name}") if json.loads(l)["session_id"] in ids]
    open(f"{out}/responses/{name}", "w").writelines(lines)
PY
n=$(cat "$work"/responses/*.jsonl | wc -l)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
# run, seconds to the last judgment, seconds to the ranking
row() {
  awk -v run="$1" -v n="$n" -v g="$2" -v t="$3" -v plain="$plain" \
    'BEGIN { printf "%-26s %9d %8.1f %8.1f %13.2f %15.2fx\n", run, n, g, t, n * 60 / g, plain / g }'
}

results=()
for layout in $layouts; do
  shards=${layout%x*} cpus=${layout#*x}
  start=$(date +%s.%N)
  said=$(RJ_BIN=$bin "$here/submit.sh" --shards "$shards" --model "$model" --queries "$work/queries.jsonl" \
    --responses "$work/responses" --out "$work/run-$layout" --threads "$cpus" -- --cpus-per-task="$cpus")
  array=$(sed -n 's/.*array job \([0-9]*\).*/\1/p' <<<"$said")
  while [ -n "$(squeue -h -j "$array" -o %i 2>/dev/null)" ]; do sleep 0.2; done
  graded=$(since "$start")
  while [ -n "$(squeue -h -n "rocketjudge-run-$layout" -o %i)" ]; do sleep 0.2; done
  [ -s "$work/run-$layout/ranking.json" ] || { echo "throughput.sh: layout $layout did not finish; logs:" >&2; tail -n 5 "$work/run-$layout"/logs/* >&2; exit 1; }
  results+=("$layout $graded $(since "$start")")
done
start=$(date +%s.%N)
"$bin" grade --model "$model" --queries "$work/queries.jsonl" --responses "$work/responses" --out "$work/plain" --threads "$(nproc)" 2>/dev/null
plain=$(since "$start")

echo "model $(basename "$model"), $n MT-Bench demo responses, one node: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
# graded: submission to the last judgment (every grading task ended); ranked: to ranking.json (the
# merge job too). responses/min and the ratio are of the grading.
printf '%-26s %9s %8s %8s %13s %16s\n' "run" responses graded ranked "responses/min" "vs plain grade"
for r in "${results[@]}"; do
  set -- $r
  row "slurm ${1%x*} shard(s) x ${1#*x} CPU" "$2" "$3"
done
row "plain grade, $(nproc) threads" "$plain" "$plain"
