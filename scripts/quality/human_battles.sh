#!/usr/bin/env bash
# Seed 001's setting 3 on the human verdicts we have: MT-Bench's human judgments gallery (60 pairs of
# 6 models, 11 questions, with GPT-4's verdict on the same pairs; ../shared/data, see ENV.md) as Arena
# battles, each ranked by Bradley–Terry (`rank --battles`), and the two rankings compared (`meta`).
#   scripts/quality/human_battles.sh [GALLERY_JSON]
# Writes .cache/quality/human-battles/{human,gpt4}.json and their rankings.
set -euo pipefail
cd "$(dirname "$0")/../.."
rj=${RJ:-./target/release/rocketjudge}
gallery=${1:-../shared/data/mt_bench/human_judgments/judgelab_gallery.json}
out=.cache/quality/human-battles
mkdir -p "$out"
python3 - "$gallery" "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
for who in ("human", "gpt4"):
    battles = [{"model_a": r["model_a"], "model_b": r["model_b"], "winner": r[who], "question_id": r["question_id"]} for r in rows]
    json.dump(battles, open(f"{sys.argv[2]}/{who}.json", "w"))
PY
for who in human gpt4; do
  echo "== Bradley–Terry over the $who verdicts"
  $rj rank --battles "$out/$who.json" --method bt
  $rj rank --battles "$out/$who.json" --method bt --format json > "$out/$who-bt.json"
done
echo "== the human ranking against GPT-4's (intervals resample the 6 models)"
$rj meta --ranking "$out/gpt4-bt.json" --reference "$out/human-bt.json"
