#!/bin/bash
# Submits the statistics of a folder as a Slurm job array of SHARDS tasks
# and the merge that runs once all of them succeeded:
#
#   IMAGES=/shared/real PARTS=/shared/parts/real OUT=/shared/real_stats.npz \
#   GENLENS_WEIGHTS=/shared/pt_inception-2015-12-05-6726825d.pth \
#   SHARDS=16 ./submit-stats.sh
#
# Each task asks for CPUS_PER_TASK cores (default 4) and MEM_PER_TASK of
# memory (default 4G); PARTITION picks a partition other than the default.
# On small nodes lower CPUS_PER_TASK: a task that asks for more cores or
# memory than any node of the partition has would wait forever (squeue
# shows the reason PartitionConfig), so this script checks the partition
# first and stops with exit code 2, saying what to set.
set -euo pipefail
: "${IMAGES:?set IMAGES to the folder of images (on a file system every node mounts)}"
: "${PARTS:?set PARTS to the folder for the part files}"
: "${OUT:?set OUT to the statistics file to write (.npz)}"
SHARDS=${SHARDS:-16}
CPUS_PER_TASK=${CPUS_PER_TASK:-4}
MEM_PER_TASK=${MEM_PER_TASK:-4G}
PARTITION=${PARTITION:-}
here=$(cd "$(dirname "$0")" && pwd)

# In megabytes, as sinfo reports a node's memory.
mem_mb() {
	local v=${1%[KkMmGgTt]} u=${1: -1}
	case $u in
	K | k) echo $((v / 1024)) ;;
	G | g) echo $((v * 1024)) ;;
	T | t) echo $((v * 1024 * 1024)) ;;
	*) echo "$v" ;;
	esac
}

# One line per node of the partition: its CPUs and memory (MB).
nodes=$(sinfo --noheader --Node ${PARTITION:+--partition="$PARTITION"} --format='%c %m')
if [ -z "$nodes" ]; then
	echo "submit-stats.sh: sinfo lists no node${PARTITION:+ in partition $PARTITION}: is the cluster up?" >&2
	exit 2
fi
need_mem=$(mem_mb "$MEM_PER_TASK")
fits=$(awk -v c="$CPUS_PER_TASK" -v m="$need_mem" '$1 >= c && $2 >= m { n++ } END { print n + 0 }' <<<"$nodes")
if [ "$fits" -eq 0 ]; then
	most=$(awk 'BEGIN { c = 0; m = 0 } { if ($1 > c) c = $1; if ($2 > m) m = $2 } END { print c " CPUs and " m " MB" }' <<<"$nodes")
	echo "submit-stats.sh: no node${PARTITION:+ of partition $PARTITION} has CPUS_PER_TASK=$CPUS_PER_TASK CPUs and MEM_PER_TASK=$MEM_PER_TASK; the largest has $most: set CPUS_PER_TASK and MEM_PER_TASK to fit, or the array would wait forever (PartitionConfig)" >&2
	exit 2
fi

mkdir -p "$PARTS" logs
array=$(sbatch --parsable --array=0-$((SHARDS - 1)) --cpus-per-task="$CPUS_PER_TASK" --mem="$MEM_PER_TASK" \
	${PARTITION:+--partition="$PARTITION"} --export=ALL,SHARDS="$SHARDS" "$here/stats-array.sbatch")
merge=$(sbatch --parsable --dependency=afterok:"$array" --mem="$MEM_PER_TASK" ${PARTITION:+--partition="$PARTITION"} --export=ALL "$here/stats-merge.sbatch")
echo "array job $array: $SHARDS shards; merge job $merge writes $OUT"
