#!/usr/bin/env bash
# Peak resident memory of the commands that read user files, on large valid inputs (~10 MB each),
# above the same command on a 40-line file: the figures in SECURITY.md ("Memory of large valid
# inputs"). Usage: scripts/bench/memory.sh [BINARY] (default target/release/rocketjudge).
set -euo pipefail
bin=$(realpath "${1:-target/release/rocketjudge}")
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mb=${MEMORY_BENCH_MB:-10}
python3 - "$d" "$mb" <<'PY'
import sys, os
d, mb = sys.argv[1], int(sys.argv[2])
big = mb << 20
def write(name, line, limit):
    with open(os.path.join(d, name), "w") as f:
        n = k = 0
        while n < limit:
            l = line(k); f.write(l + "\n"); n += len(l) + 1; k += 1
for suffix, limit in (("", big), ("-small", 1)):
    write(f"scores{suffix}.jsonl", lambda k: '{"session_id":"q%d","model_test":"model%d","score":%d.%d}' % (k // 20, k % 20, k % 9 + 1, k % 7), limit if suffix == "" else 40 * 60)
    write(f"battles{suffix}.jsonl", lambda k: '{"model_a":"model%d","model_b":"model%d","winner":"model_a","question_id":"q%d"}' % (k % 20, (k * 7 + 1) % 20 + 20, k % 5000), limit if suffix == "" else 40 * 90)
    write(f"judgments{suffix}.jsonl", lambda k: '{"session_id":"q%d","model_test":"model%d","judge":"t","norm_probability":[0.%d,0.5,0.25],"judgment":["Yes","No","No"]}' % (k // 20, k % 20, k % 9 + 1), limit if suffix == "" else 40 * 120)
    write(f"queries{suffix}.jsonl", lambda k: '{"session_id":"q%d","conversation_input":[{"role":"user","content":"%s"}],"checklist":["Is it right?"]}' % (k, "x" * 200), limit if suffix == "" else 40 * 260)
PY
peak() { /usr/bin/time -f %M -o "$d/rss" "$bin" "$@" >/dev/null 2>"$d/err" || { echo "failed: $*" >&2; cat "$d/err" >&2; }; cat "$d/rss"; }
printf '| command | input | peak (small input) | peak | above the small run, per byte of input |\n|---|---|---|---|---|\n'
row() { # name big-file args... (the word FILE stands for the input)
  local name=$1 file=$2; shift 2
  local small_args=() big_args=()
  for a in "$@"; do small_args+=("${a//FILE/$d/${file%.jsonl}-small.jsonl}"); big_args+=("${a//FILE/$d/$file}"); done
  local s b size
  s=$(peak "${small_args[@]}"); rm -rf "$d/out"; b=$(peak "${big_args[@]}"); rm -rf "$d/out"
  size=$(stat -c %s "$d/$file")
  python3 -c "import sys; s,b,n=map(int,sys.argv[1:]); print(f'| $name | {n/1e6:.1f} MB | {s/1024:.0f} MB | {b/1024:.0f} MB | {(b-s)*1024/n:.1f} |')" "$s" "$b" "$size"
}
row 'rank --scores' scores.jsonl rank --scores FILE --bootstrap 20
row 'rank --battles' battles.jsonl rank --battles FILE --bootstrap 20
row 'rank --judgments' judgments.jsonl rank --judgments FILE --bootstrap 20
row 'score --judgments' judgments.jsonl score --judgments FILE --out "$d/out"
row 'export battles' judgments.jsonl export battles --judgments FILE --out "$d/out"
row 'checklist prompt' queries.jsonl checklist prompt --queries FILE --session q0
