#!/usr/bin/env bash
# Render the Kubernetes manifests of one sharded rocketjudge run into a folder:
#
#   scripts/cluster/k8s/render.sh --run mtbench --shards 16 --model qwen2.5-coder-1.5b \
#       --queries inputs/queries.jsonl --responses inputs/responses --out k8s-mtbench \
#       [--checklists inputs/checklists.jsonl] [--parallelism 16] [--cpus 4] [--memory 4Gi] \
#       [--image debian:bookworm-slim] [--pvc NAME] [--storage 20Gi]
#
# Writes volume.yaml (the shared ReadWriteMany claim; left out with --pvc), loader.yaml (a pod to
# copy files on and off the volume), grade.yaml (the Indexed Job: one pod per shard) and merge.yaml
# (merge and rank). Paths are inside the volume (mounted at /data); --model is a packaged judge's
# name (looked up in /data/cache) or a GGUF path inside the volume. The image needs /bin/sh, tar (for
# kubectl cp) and the C library the binary was built against: debian:bookworm-slim for a binary
# built on Debian 12. See the README, "A tab, one machine or a cluster", for the kubectl commands.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "render.sh: $*" >&2; exit 2; }

RUN="" SHARDS="" PARALLELISM="" MODEL="" QUERIES="" RESPONSES="" CHECKLISTS="" CPUS=4 MEMORY=4Gi
IMAGE=debian:bookworm-slim PVC="" STORAGE=20Gi out=""
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || [ "$1" = -h ] || [ "$1" = --help ] || die "$1 needs a value"
  case "$1" in
    --run) RUN=$2 ;; --shards) SHARDS=$2 ;; --parallelism) PARALLELISM=$2 ;; --model) MODEL=$2 ;;
    --queries) QUERIES=$2 ;; --responses) RESPONSES=$2 ;; --checklists) CHECKLISTS=$2 ;;
    --cpus) CPUS=$2 ;; --memory) MEMORY=$2 ;; --image) IMAGE=$2 ;; --pvc) PVC=$2 ;;
    --storage) STORAGE=$2 ;; --out) out=$2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift 2
done
for v in RUN SHARDS MODEL QUERIES RESPONSES out; do
  [ -n "${!v}" ] || die "--run, --shards, --model, --queries, --responses and --out are required (see --help)"
done

# Every value lands in YAML and in a shell command line: only plain names and paths are taken.
[[ "$RUN" =~ ^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$ ]] || die "--run $RUN: lower-case letters, digits and '-', at most 42 (a Kubernetes name)"
[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || die "--shards $SHARDS: expected a whole number >= 1"
PARALLELISM=${PARALLELISM:-$SHARDS}
[[ "$PARALLELISM" =~ ^[1-9][0-9]*$ ]] || die "--parallelism $PARALLELISM: expected a whole number >= 1"
[[ "$CPUS" =~ ^[1-9][0-9]*$ ]] || die "--cpus $CPUS: expected a whole number of CPUs (it is also the thread count)"
[[ "$MEMORY" =~ ^[1-9][0-9]*(Mi|Gi)$ ]] || die "--memory $MEMORY: expected e.g. 4Gi or 3500Mi"
[[ "$STORAGE" =~ ^[1-9][0-9]*(Mi|Gi|Ti)$ ]] || die "--storage $STORAGE: expected e.g. 20Gi"
[[ "$IMAGE" =~ ^[A-Za-z0-9][A-Za-z0-9._/:@-]*$ ]] || die "--image $IMAGE: not an image reference"
pvc_given=$PVC
PVC=${PVC:-$RUN-data}
[[ "$PVC" =~ ^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$ ]] || die "--pvc $PVC: not a Kubernetes name"
path_ok() { [[ "$2" =~ ^[A-Za-z0-9_][A-Za-z0-9._/-]*$ ]] && [[ "$2" != *..* ]] || die "$1 $2: expected a path inside the volume (letters, digits, . _ - /; no ..)"; }
path_ok --queries "$QUERIES"
path_ok --responses "$RESPONSES"
path_ok --model "$MODEL"
[ -z "$CHECKLISTS" ] || { path_ok --checklists "$CHECKLISTS"; CHECKLISTS=" --checklists /data/$CHECKLISTS"; }
# A GGUF path is inside the volume; a name is a packaged judge, found in /data/cache.
case "$MODEL" in *.gguf) MODEL=/data/$MODEL ;; esac

export RUN SHARDS PARALLELISM MODEL QUERIES RESPONSES CHECKLISTS CPUS MEMORY IMAGE PVC STORAGE
vars='${RUN} ${SHARDS} ${PARALLELISM} ${MODEL} ${QUERIES} ${RESPONSES} ${CHECKLISTS} ${CPUS} ${MEMORY} ${IMAGE} ${PVC} ${STORAGE}'
command -v envsubst >/dev/null || die "envsubst is not installed (Debian: apt-get install gettext-base)"
mkdir -p "$out"
files=(loader grade merge)
[ -n "$pvc_given" ] || files=(volume "${files[@]}")  # no claim given: render one
for f in "${files[@]}"; do envsubst "$vars" <"$here/$f.yaml" >"$out/$f.yaml"; done
echo "wrote ${files[*]/%/.yaml} into $out"
