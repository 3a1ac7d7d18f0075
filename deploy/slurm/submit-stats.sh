#!/bin/bash
# Submits the statistics of a folder as a Slurm job array of SHARDS tasks
# and the merge that runs once all of them succeeded:
#
#   IMAGES=/shared/real PARTS=/shared/parts/real OUT=/shared/real_stats.npz \
#   GENLENS_WEIGHTS=/shared/pt_inception-2015-12-05-6726825d.pth \
#   SHARDS=16 ./submit-stats.sh
set -euo pipefail
: "${IMAGES:?}" "${PARTS:?}" "${OUT:?}"
SHARDS=${SHARDS:-16}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$PARTS" logs
array=$(sbatch --parsable --array=0-$((SHARDS - 1)) --export=ALL,SHARDS="$SHARDS" "$here/stats-array.sbatch")
sbatch --dependency=afterok:"$array" --export=ALL "$here/stats-merge.sbatch"
echo "array job $array: $SHARDS shards; the merge writes $OUT"
