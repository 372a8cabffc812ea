#!/usr/bin/env bash
# Judge-quality report for one judge (issue #6): grade the prepared MT-Bench inputs, then measure.
#   scripts/quality/run.sh JUDGE [extra grade flags, e.g. --backend webgpu --threads 2]
# Inputs: scripts/quality/prepare.py (subset options there) into $QUALITY_INPUTS (default
# .cache/quality/inputs). Output: .cache/quality/<judge>[-<QUALITY_TAG>]/ and
# docs/quality/<judge>[-<QUALITY_TAG>].json + .md (the numbers docs/measurements/judge-quality.md and the README's judge table quote).
# The full set: python3 scripts/quality/prepare.py --questions all --human-pairs 1000 --out .cache/quality/inputs-full
#   QUALITY_INPUTS=.cache/quality/inputs-full QUALITY_TAG=full scripts/quality/run.sh JUDGE --backend webgpu
# QUALITY_DIRECT=0 skips the Direct baseline, QUALITY_HUMAN=0 the human-labelled pairs; RJ=PATH uses another rocketjudge binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
judge="$1"; shift
in=${QUALITY_INPUTS:-.cache/quality/inputs}
out=.cache/quality/$judge${QUALITY_TAG:+-$QUALITY_TAG}
rj=${RJ:-./target/release/rocketjudge}
[ -f "$in/queries.jsonl" ] || python3 scripts/quality/prepare.py --out "$in"
mkdir -p "$out"
start=$(date +%s)
# Checklist grading (resumable: re-running continues where it stopped).
$rj grade --model "$judge" --queries "$in/queries.jsonl" --responses "$in/lmsys" "$in/forks" --out "$out/judgments" "$@"
[ "${QUALITY_HUMAN:-1}" = 1 ] && $rj grade --model "$judge" --queries "$in/human-queries.jsonl" --responses "$in/human" --out "$out/human" "$@"
pass="grade $(( $(date +%s) - start )) s"
# The paper's Direct baseline (no checklist; resumable like grade).
if [ "${QUALITY_DIRECT:-1}" = 1 ]; then
  direct_start=$(date +%s)
  $rj direct --model "$judge" --queries "$in/queries.jsonl" --responses "$in/lmsys" "$in/forks" --out "$out/direct" "$@"
  [ "${QUALITY_HUMAN:-1}" = 1 ] && $rj direct --model "$judge" --queries "$in/human-queries.jsonl" --responses "$in/human" --out "$out/direct-human" "$@"
  pass="$pass, direct $(( $(date +%s) - direct_start )) s"
fi
# One line per pass (a resumed run adds one); report.py sums them.
echo "$pass ($(date -u +%FT%TZ))" >> "$out/timing.txt"
QUALITY_INPUTS="$in" python3 scripts/quality/report.py "$judge"
