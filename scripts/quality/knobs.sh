#!/usr/bin/env bash
# The measurements of the judge-design knobs (issue #13, seeds 001-004) for one judge:
#   scripts/quality/knobs.sh JUDGE [extra flags for every run, e.g. --threads 2 or --backend webgpu]
# Inputs (made here when missing):
#   - human pairs: LLMBar's MT-Bench pairs with their human verdict (prepare.py --human-pairs N), as
#     the pseudo-models answer_a / answer_b; KNOBS_PAIRS pairs (default 30);
#   - MT-Bench: the 5 GPT-4-judged models bundled in benchmarks/mt-bench/gpt4-judged, first turns of the
#     demo's 8 questions (40 responses; GPT-4's single-answer scores are the labels).
# Every run is resumable (re-run to continue). Outputs in .cache/quality/knobs-JUDGE/; then
#   python3 scripts/quality/knobs.py JUDGE  writes docs/quality/knobs-JUDGE.{json,md}.
set -euo pipefail
cd "$(dirname "$0")/../.."
judge="$1"; shift
rj=${RJ:-./target/release/rocketjudge}
in=.cache/quality/knobs-inputs
out=.cache/quality/knobs-$judge
mt=benchmarks/mt-bench
if [ ! -f "$in/human-pairs.json" ]; then
  python3 scripts/quality/prepare.py --questions 81 --fork-models 0 --human-pairs "${KNOBS_PAIRS:-30}" --gallery-pairs 0 --out "$in"
fi
if [ ! -d "$in/mt" ]; then
  mkdir -p "$in/mt"
  for f in "$mt"/gpt4-judged/*.jsonl; do
    case "$f" in *gpt-4_single.jsonl) continue ;; esac
    grep '_turn1"' "$f" > "$in/mt/$(basename "$f")"
  done
fi
mkdir -p "$out"
step() { echo "== $* ($(date -u +%T))" >&2; }
hq=(--queries "$in/human-queries.jsonl" --responses "$in/human")
mq=(--queries "$mt/queries.jsonl" --responses "$in/mt")
# KNOBS_ONLY=human-pairs: only seed 001's base and 5-point runs on the human pairs, reported to
# .cache/quality/knobs-JUDGE-human-pairs.json/.md (the recorded tables in docs/ are left as they are).
if [ "${KNOBS_ONLY:-}" = human-pairs ]; then
  $rj grade --model "$judge" "${hq[@]}" --type pairwise --checklist never --out "$out/human-pair-never" "$@"
  $rj grade --model "$judge" "${hq[@]}" --type pairwise-5point --out "$out/human-pair-5point" "$@"
  KNOBS_OUT="$out-human-pairs.json" python3 scripts/quality/knobs.py "$judge"
  exit
fi
# Seed 004: instruction levels and perplexity; seed 003: criteria given or not (generic vs rubric).
# Then on the papers' 1-5 scale, with seed 003's "Score 1 & 5" (rubric-ends).
direct_levels() {
  for level in rocketeval generic criteria rubric perplexity; do
    step "MT-Bench, direct --instruction $level"
    $rj direct --model "$judge" "${mq[@]}" --instruction "$level" --out "$out/mt-direct-$level" "$@"
  done
  direct_likert "$@"
}
direct_likert() {
  for level in generic rubric rubric-ends; do
    step "MT-Bench, direct --instruction $level --scale 1-5"
    $rj direct --model "$judge" "${mq[@]}" --instruction "$level" --scale 1-5 --out "$out/mt-direct-$level-1-5" "$@"
  done
}
# KNOBS_ONLY=direct: only those (reported to .cache/quality/knobs-JUDGE-direct.json/.md);
# KNOBS_ONLY=likert: only the 1-5 runs.
if [ "${KNOBS_ONLY:-}" = direct ] || [ "${KNOBS_ONLY:-}" = likert ]; then
  if [ "$KNOBS_ONLY" = direct ]; then direct_levels "$@"; else direct_likert "$@"; fi
  KNOBS_OUT="$out-direct.json" python3 scripts/quality/knobs.py "$judge"
  exit
fi
# Seed 002 pairwise setting / seed 001 instance level: plain and checklist-guided comparisons, both orders.
for use in never always; do
  step "human pairs, pairwise, checklist $use"
  $rj grade --model "$judge" "${hq[@]}" --type pairwise --checklist "$use" --out "$out/human-pair-$use" "$@"
done
# Seed 001: the 5-point scale (Arena-Hard's) against base pairwise, on the same human pairs.
step "human pairs, pairwise on the 5-point scale"
$rj grade --model "$judge" "${hq[@]}" --type pairwise-5point --out "$out/human-pair-5point" "$@"
# Seed 001 system level: pointwise checklist grading and all-pairs comparisons of the 5 models.
step "MT-Bench, pointwise checklist grading"
$rj grade --model "$judge" "${mq[@]}" --out "$out/mt-grade" "$@"
step "MT-Bench, pairwise, all pairs"
$rj grade --model "$judge" "${mq[@]}" --type pairwise --out "$out/mt-pair" "$@"
direct_levels "$@"
# Seed 002 direct-scoring setting on the human pairs.
for use in never always; do
  step "human pairs, direct, checklist $use"
  $rj direct --model "$judge" "${hq[@]}" --checklist "$use" --out "$out/human-direct-$use" "$@"
done
step "done"
python3 scripts/quality/knobs.py "$judge"
