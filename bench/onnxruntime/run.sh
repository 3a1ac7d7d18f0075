#!/usr/bin/env bash
# Side-by-side speed of genlens, PyTorch and ONNX Runtime on the networks
# genlens runs, at the same thread count and with the same weights; see
# docs/performance-networks.md. One command prints the table:
#
#   bench/onnxruntime/run.sh [NET...]
#
# NET: inception dinov2-vits14 dinov2-vitb14 dinov2-vitl14 clip-vitb32
# (default: all). Environment: THREADS (2), RUNS (timed batches per
# measurement, after a warm-up; 3), ROUNDS (genlens and ONNX Runtime are
# measured in turn this many times and the best round of each is kept,
# so that both see the same load; 3), WORK (scratch folder, default a new
# temporary one), GENLENS (a genlens binary; default: built from this
# checkout), PYTHON (/usr/bin/python3, Debian's, which has python3-torch),
# ORT_DIR (an onnxruntime-node install; default: npm installs one under
# WORK), INCEPTION_WEIGHTS (default: the random-weight fixture under
# GENLENS_SHARED_DATA), PYTORCH_FID_REPO, DINOV2_REPO, CLIP_REPO
# (checkouts of the reference code; default: cloned from GitHub into
# WORK).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
THREADS=${THREADS:-2}
RUNS=${RUNS:-3}
ROUNDS=${ROUNDS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
checkout() { # NAME REPO: the path of a checkout of github.com/REPO
	local dir=$WORK/src/${2//\//+}
	[ -d "$dir" ] || git clone -q --depth 1 "https://github.com/$2" "$dir" >&2
	echo "$dir"
}
PYTORCH_FID_REPO=${PYTORCH_FID_REPO:-$(checkout fid mseitzer/pytorch-fid)}
DINOV2_REPO=${DINOV2_REPO:-$(checkout dinov2 facebookresearch/dinov2)}
CLIP_REPO=${CLIP_REPO:-$(checkout clip openai/CLIP)}
export PYTORCH_FID_REPO DINOV2_REPO CLIP_REPO
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
	flags=(--no-cache --batch "$batch" --workers "$THREADS" --weights "$weights")
	[ "$net" = inception ] || flags+=(--embedder "$net")
	# genlens and ONNX Runtime in turn, ROUNDS times: the best round of
	# each (load on a shared machine only ever slows a run down).
	g=0 o=0 ort=
	for round in $(seq "$ROUNDS"); do
		r=$(node "$here/ort_bench.js" "$d/model.onnx" "$batch" "$side" "$THREADS" "$RUNS")
		ri=$(echo "$r" | field images_per_s)
		if awk -v a="$ri" -v b="$o" 'BEGIN { exit !(a > b) }'; then o=$ri ort=$r; fi
		rm -f "$d"/genlens*.npy
		t1=$(GOMAXPROCS=$THREADS secs "$GENLENS" features "$d/img1" --out "$d/genlens1.npy" "${flags[@]}")
		t2=$(GOMAXPROCS=$THREADS secs "$GENLENS" features "$d/img2" --out "$d/genlens2.npy" "${flags[@]}")
		gi=$(awk -v n="$n" -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", (b > a ? n / (b - a) : 0) }')
		echo "$net round $round: ONNX Runtime $r; genlens ${t1}s for $n images, ${t2}s for $((2 * n)) ($gi images/s); load $(uptime | sed 's/.*load average: //')" >&2
		if awk -v a="$gi" -v b="$g" 'BEGIN { exit !(a > b) }'; then g=$gi; fi
	done
	fid=$("$PYTHON" "$here/nets.py" compare "$d/genlens1.npy" "$d/torch_features.npy")
	p=$(echo "$torch" | field images_per_s)
	rows+=("$(printf '%-15s %5d %9s %9s %9s %12s %14s %9s' "$net" "$batch" "$g" "$p" "$o" \
		"$(awk -v a="$g" -v b="$o" 'BEGIN { printf "%.2f", a / b }')" \
		"$(awk -v a="$g" -v b="$p" 'BEGIN { printf "%.2f", a / b }')" "$fid")")
	echo "$net: PyTorch $torch; best ONNX Runtime $ort" >&2
	echo "${rows[-1]}" >&2
done
echo "load at end: $(uptime | sed 's/.*load average: //')"
echo
echo "images/s, $THREADS threads; genlens from 'genlens features DIR --no-cache' (N vs 2N images, decoding included),"
echo "PyTorch $("$PYTHON" -c 'import torch; print(torch.__version__)') and ONNX Runtime $(cd "$NODE_PATH/onnxruntime-node" && node -p 'require("./package.json").version') (onnxruntime-node, CPU, all graph"
echo "optimisations, faster of spinning and non-spinning intra-op threads, median of $RUNS batches) on a random batch;"
echo "genlens and ONNX Runtime measured in turn, best of $ROUNDS rounds each"
printf '%-15s %5s %9s %9s %9s %12s %14s %9s\n' network batch genlens PyTorch ORT genlens/ORT genlens/PyTorch fidelity
for r in "${rows[@]}"; do echo "$r"; done
echo "fidelity: max |genlens − PyTorch| over the features of the N images, relative to the largest PyTorch feature"
