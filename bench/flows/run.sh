#!/bin/sh
# Counts the functions of genlens (and their packages) that two flows run,
# from a coverage build (go build -cover): a compare of two folders of
# three images with DINOv2 ViT-S/14, beyond what `genlens version` runs;
# and one chat completion through serve's uncertainty proxy, beyond what
# starting and stopping serve runs. ARCHITECTURE.md quotes its output.
#
#   bench/flows/run.sh
#
# It needs PyTorch, NumPy and Pillow under /usr/bin/python3 (as
# network/vit/testdata/make_fixtures.py, whose DINOv2 module makes random ViT-S/14
# weights: the functions run do not depend on the values), curl, and the
# ports 18431 and 18432 free.
set -eu
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'kill $(cat $T/pids 2>/dev/null) 2>/dev/null; rm -rf $T' EXIT
go build -cover -coverpkg=github.com/genlens/genlens/... -o $T/genlens ./cmd/genlens
export GENLENS_CACHE=$T/cache

# covered DIR: the functions a run covered, one "file:line: name" a line.
covered() {
	go tool covdata func -i="$1" | awk '$NF != "0.0%" && $1 != "total" {print $1" "$2}' | sort -u
}
# diff BASE RUN: the functions of RUN not in BASE, counted by package.
diff() {
	covered "$1" >$T/base
	covered "$2" >$T/run
	comm -13 $T/base $T/run | sed 's|^github.com/genlens/genlens/||; s|/[^/ ]*\.go:[0-9]*:||' >$T/new
	printf '%s functions in %s packages:' "$(wc -l <$T/new)" "$(cut -d' ' -f1 $T/new | sort -u | wc -l)"
	cut -d' ' -f1 $T/new | sort | uniq -c | sort -k1,1nr -k2 | awk '{printf " %s %s", $2, $1}'
	echo
}

mkdir -p $T/base1 $T/run1 $T/base2 $T/run2 $T/real $T/fake
/usr/bin/python3 - "$T" <<'PY'
import sys, numpy as np, torch
from PIL import Image
sys.path.insert(0, "network/vit/testdata")
import make_fixtures as m
t = sys.argv[1]
torch.manual_seed(0)
model = m.Dino(img_size=518, patch=14, dim=384, depth=12, heads=6).eval()
m.randomise(model)
torch.save(model.state_dict(), t + "/vits14.pth")
rng = np.random.default_rng(0)
for side in ("real", "fake"):
    for i in range(3):
        Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save("%s/%s/%d.png" % (t, side, i))
PY
weights=$T/vits14.pth
GOCOVERDIR=$T/base1 $T/genlens version >/dev/null
GOCOVERDIR=$T/run1 $T/genlens compare --embedder dinov2-vits14 --weights "$weights" --real $T/real --fake $T/fake --no-cache >/dev/null 2>&1
echo "compare --embedder dinov2-vits14: $(diff $T/base1 $T/run1)"; [ -z "${FLOWS_LIST:-}" ] || cat $T/new

# The upstream: an exact model behind the OpenAI API.
$T/genlens hallucination serve-model --addr 127.0.0.1:18431 >/dev/null 2>&1 &
echo $! >>$T/pids
serve() { # serve COVERDIR [request]: start serve, maybe send one request, stop it
	GOCOVERDIR=$1 $T/genlens serve --addr 127.0.0.1:18432 --db $T/db.sqlite --llm-upstream http://127.0.0.1:18431/v1 2>/dev/null &
	pid=$!
	until curl -s -o /dev/null http://127.0.0.1:18432/livez; do sleep 0.2; done
	if [ $# -gt 1 ]; then
		curl -s -o /dev/null -H 'Content-Type: application/json' http://127.0.0.1:18432/v1/chat/completions \
			-d '{"model":"genlens-categorical","messages":[{"role":"user","content":"Input: red\nLabel:"}],"max_tokens":2}'
	fi
	kill -INT $pid
	wait $pid || true
}
sleep 0.5
serve $T/base2
serve $T/run2 request
echo "one proxied chat completion: $(diff $T/base2 $T/run2)"; [ -z "${FLOWS_LIST:-}" ] || cat $T/new
