#!/usr/bin/env bash
# Side-by-side speed of genlens, PyTorch and ONNX Runtime on the networks
# genlens runs, at the same thread count and with the same weights; see
# README.md. Usage:
#
#   PYTORCH_FID_REPO=... DINOV2_REPO=... CLIP_REPO=... bench/onnxruntime/run.sh [NET...]
#
# NET: inception dinov2-vits14 dinov2-vitb14 dinov2-vitl14 clip-vitb32
# (default: all). Environment: THREADS (2), RUNS (3 timed batches after a
# warm-up), WORK (scratch folder, default a new temporary one), GENLENS
# (a genlens binary; default: built from this checkout), PYTHON
# (/usr/bin/python3, Debian's, which has python3-torch), ORT_DIR (an
# onnxruntime-node install; default: npm installs one under WORK),
# INCEPTION_WEIGHTS (default: the random-weight fixture under
# GENLENS_SHARED_DATA).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${PYTORCH_FID_REPO:?set PYTORCH_FID_REPO to a checkout of mseitzer/pytorch-fid}"
: "${DINOV2_REPO:?set DINOV2_REPO to a checkout of facebookresearch/dinov2}"
: "${CLIP_REPO:?set CLIP_REPO to a checkout of openai/CLIP}"
export PYTORCH_FID_REPO DINOV2_REPO CLIP_REPO
THREADS=${THREADS:-2}
RUNS=${RUNS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
WORK=${WORK:-$(mktemp -d)}
shared=${GENLENS_SHARED_DATA:-$root/../shared/data}
export INCEPTION_WEIGHTS=${INCEPTION_WEIGHTS:-$shared/fixtures/inception_random/inception_random.pth}
mkdir -p "$WORK"
nets=("$@")
[ ${#nets[@]} -gt 0 ] || nets=(inception dinov2-vits14 dinov2-vitb14 dinov2-vitl14 clip-vitb32)

if [ -z "${GENLENS:-}" ]; then
	GENLENS=$WORK/genlens
	(cd "$root" && go build -o "$GENLENS" ./cmd/genlens)
fi
ORT_DIR=${ORT_DIR:-$WORK/ort}
if [ ! -d "$ORT_DIR/node_modules/onnxruntime-node" ]; then
	# --ignore-scripts: the CPU library ships inside the package; the
	# install script only fetches GPU builds.
	mkdir -p "$ORT_DIR"
	(cd "$ORT_DIR" && npm init -y >/dev/null && npm i --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
export NODE_PATH=$ORT_DIR/node_modules

secs() { # wall seconds of a command, its output discarded
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
field() { "$PYTHON" -c 'import json,sys; print("%.2f" % json.loads(sys.stdin.read())[sys.argv[1]])' "$1"; }

echo "genlens $(cd "$root" && git describe --always --dirty 2>/dev/null || echo '?'), $THREADS threads, $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "load at start: $(uptime | sed 's/.*load average: //')"
rows=()
for net in "${nets[@]}"; do
	case $net in
	inception) batch=50 side=299 ;;
	dinov2-*|clip-*) batch=32 side=224 ;;
	*) echo "unknown network $net" >&2; exit 2 ;;
	esac
	d=$WORK/$net
	mkdir -p "$d"
	n=$batch
	# genlens from its command line, N and 2N images: the difference
	# takes off start-up (loading and packing the weights).
	[ -d "$d/img1" ] || "$PYTHON" "$here/nets.py" images "$net" "$d/img1" "$n"
	[ -d "$d/img2" ] || "$PYTHON" "$here/nets.py" images "$net" "$d/img2" $((2 * n))
	torch=$(OPENBLAS_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS "$PYTHON" "$here/nets.py" export "$net" --out "$d" --batch "$batch" --threads "$THREADS" --runs "$RUNS" --images "$d/img1" 2>"$d/export.log" | tail -n1)
	weights=$(echo "$torch" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["weights"])')
	ort=$(node "$here/ort_bench.js" "$d/model.onnx" "$batch" "$side" "$THREADS" "$RUNS")
	flags=(--no-cache --batch "$batch" --workers "$THREADS" --weights "$weights")
	[ "$net" = inception ] || flags+=(--embedder "$net")
	rm -f "$d"/genlens*.npy
	t1=$(GOMAXPROCS=$THREADS secs "$GENLENS" features "$d/img1" --out "$d/genlens1.npy" "${flags[@]}")
	t2=$(GOMAXPROCS=$THREADS secs "$GENLENS" features "$d/img2" --out "$d/genlens2.npy" "${flags[@]}")
	g=$(awk -v n="$n" -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", n / (b - a) }')
	fid=$("$PYTHON" "$here/nets.py" compare "$d/genlens1.npy" "$d/torch_features.npy")
	p=$(echo "$torch" | field images_per_s)
	o=$(echo "$ort" | field images_per_s)
	rows+=("$(printf '%-15s %5d %9s %9s %9s %12s %14s %9s' "$net" "$batch" "$g" "$p" "$o" \
		"$(awk -v a="$g" -v b="$o" 'BEGIN { printf "%.2f", a / b }')" \
		"$(awk -v a="$g" -v b="$p" 'BEGIN { printf "%.2f", a / b }')" "$fid")")
	echo "$net: genlens ${t1}s for $n images, ${t2}s for $((2 * n)); PyTorch $torch; ONNX Runtime $ort; load $(uptime | sed 's/.*load average: //')" >&2
	echo "${rows[-1]}" >&2
done
echo "load at end: $(uptime | sed 's/.*load average: //')"
echo
echo "images/s, $THREADS threads; genlens from 'genlens features DIR --no-cache' (N vs 2N images, decoding included),"
echo "PyTorch $("$PYTHON" -c 'import torch; print(torch.__version__)') and ONNX Runtime (onnxruntime-node, CPU) on a random batch"
printf '%-15s %5s %9s %9s %9s %12s %14s %9s\n' network batch genlens PyTorch ORT genlens/ORT genlens/PyTorch fidelity
for r in "${rows[@]}"; do echo "$r"; done
echo "fidelity: max |genlens − PyTorch| over the features of the N images, relative to the largest PyTorch feature"
