#!/usr/bin/env bash
# Judge-quality report for one judge (issue #6): grade the prepared MT-Bench inputs, then measure.
#   scripts/quality/run.sh JUDGE [extra grade flags, e.g. --backend webgpu --threads 2]
# Inputs: scripts/quality/prepare.py (subset options there). Output: .cache/quality/<judge>/ and
# docs/quality/<judge>.json + .md (the numbers the README's table quotes).
set -euo pipefail
cd "$(dirname "$0")/../.."
judge="$1"; shift
in=.cache/quality/inputs
out=.cache/quality/$judge
rj=./target/release/rocketjudge
[ -f "$in/queries.jsonl" ] || python3 scripts/quality/prepare.py
mkdir -p "$out"
start=$(date +%s)
# Checklist grading (resumable: re-running continues where it stopped).
$rj grade --model "$judge" --queries "$in/queries.jsonl" --responses "$in/lmsys" "$in/forks" --out "$out/judgments" "$@"
$rj grade --model "$judge" --queries "$in/human-queries.jsonl" --responses "$in/human" --out "$out/human" "$@"
# The paper's Direct baseline (no checklist).
if [ ! -d "$out/direct" ]; then
  $rj direct --model "$judge" --queries "$in/queries.jsonl" --responses "$in/lmsys" "$in/forks" --out "$out/direct.partial" "$@"
  $rj direct --model "$judge" --queries "$in/human-queries.jsonl" --responses "$in/human" --out "$out/direct-human.partial" "$@"
  mv "$out/direct-human.partial" "$out/direct-human"
  mv "$out/direct.partial" "$out/direct"
fi
echo "graded in $(( $(date +%s) - start )) s" > "$out/timing.txt"
python3 scripts/quality/report.py "$judge"
