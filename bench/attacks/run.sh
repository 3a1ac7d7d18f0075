#!/bin/sh
# Runs the command-line form of each attack on genlens that has one (a
# stats part of 16384 dimensions or of a billion shards, entropy's cs
# kernel at t = 1000, RougeL on 978 KB of answers, weights whose tensors
# view one storage, compare against 16384-d statistics, sample against an
# upstream answering 30 MB per choice, or one such choice a request whatever
# n asks, or honest logprobs with 20 alternatives; a judge that never
# answers; logprobs that sum to -Inf; --save-stats /dev/null; a check
# model whose drift reference has 200,000 rows; disentangle on a folder of
# 2000 256x256 RGB PNGs; entropy on one prompt of 1000 long samples
# interrupted after 3 s; a BERT config whose head count does not divide
# its width) under /usr/bin/time -v, and prints
# each one's exit status, wall time and peak resident memory. Every case
# should end with a clear refusal (exit 2) or a result, under 2.5 GB.
#
#   bench/attacks/run.sh            # under a 6 GiB address-space cap, as attacked
#   CAP= bench/attacks/run.sh       # uncapped: the budget follows the machine
#
# The cap (ulimit -v, as prlimit --as for TestServeAdversarial) matters: the
# default matrix budget is a quarter of the memory the process may use,
# so under 6 GB a 16384-d covariance (2 GiB) is refused before it is read,
# while uncapped on a large machine it is admitted and worked on.
#
# It needs GNU time (/usr/bin/time), about 200 MB of disk for the inputs,
# port 18441 free, and for the weights cases PyTorch under /usr/bin/python3
# (skipped without it). The inputs are written by `go run ./bench/attacks
# gen`.
set -eu
CAP=${CAP-6} # GiB
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'kill $(cat $T/pids 2>/dev/null) 2>/dev/null; rm -rf $T' EXIT
go build -o $T/genlens ./cmd/genlens
go build -o $T/attacks ./bench/attacks
export GENLENS_CACHE=$T/cache
A=$T/in
$T/attacks gen $A
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	/usr/bin/python3 - "$A" <<'PY'
import sys, torch
# 168 MB of one storage, viewed by four of DINOv2's keys.
for name, s in (("u8", torch.zeros(168_000_000, dtype=torch.uint8)), ("f16", torch.zeros(84_000_000, dtype=torch.float16))):
    keys = ["patch_embed.proj.weight", "blocks.0.attn.qkv.weight", "blocks.0.mlp.fc1.weight", "pos_embed"]
    torch.save({k: s[i:] for i, k in enumerate(keys)}, f"{sys.argv[1]}/shared-{name}.pth")
PY
fi
$T/attacks upstream 127.0.0.1:18441 & echo $! >>$T/pids

echo "address-space cap: ${CAP:-no} GiB"
printf '%-24s %5s %9s %10s  %s\n' case exit seconds "peak MB" "first line of stderr"
run() {
	name=$1
	shift
	if [ -n "$CAP" ]; then
		set -- sh -c 'ulimit -v $(($0 * 1048576)) && exec "$@"' "$CAP" "$@"
	fi
	/usr/bin/time -v -o $T/time "$@" >$T/out 2>$T/err || true
	rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' $T/time)
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2, p, ":"); s=0; for (i=1; i<=n; i++) s=s*60+p[i]; printf "%.1f", s}' $T/time)
	code=$(awk -F': ' '/Exit status/ {print $2}' $T/time)
	printf '%-24s %5s %9s %10s  %.90s\n' "$name" "$code" "$wall" "$rss" "$(grep -v '^Command exited' $T/err | head -1)"
}
G=$T/genlens
run merge-16384-budget100 $G stats merge --matrix-budget-mb 100 $A/part-16384.npz --out $T/m1.npz
run merge-16384 $G stats merge $A/part-16384.npz --out $T/m2.npz
run merge-1e9-shards $G stats merge $A/part-1e9-shards.npz --out $T/m3.npz
run entropy-cs-t1000 $G entropy --in $A/answers-34k.jsonl --t 1000 --scores kernel-entropy --out $T/e1
run entropy-t1000-default $G entropy --in $A/answers-34k.jsonl --t 1000 --out $T/e2
run entropy-978k-rougel $G entropy --in $A/answers-978k.jsonl --out $T/e3
for w in u8 f16; do
	[ -f $A/shared-$w.pth ] && run weights-shared-$w $G features $A/img --embedder dinov2-vits14 --weights $A/shared-$w.pth --no-cache --out $T/f-$w.npy
done
run compare-16384-budget100 $G compare --matrix-budget-mb 100 --real $A/ref-16384.npz --fake $A/fake-16384.npy
run compare-16384 $G compare --real $A/ref-16384.npz --fake $A/fake-16384.npy
run sample-30MB-choices $G sample --prompts $A/prompts-8.jsonl --base-url http://127.0.0.1:18441/v1 --model m --n 10 --retries 0 --out $T/answers.jsonl
run sample-30MB-long $G sample --prompts $A/prompts-8.jsonl --base-url http://127.0.0.1:18441/v1 --model m --n 10 --max-tokens 131072 --retries 0 --out $T/answers2.jsonl
run sample-n1024-131072 $G sample --prompts $A/prompts-8.jsonl --base-url http://127.0.0.1:18441/v1 --model m --n 1024 --max-tokens 131072 --retries 0 --out $T/answers3.jsonl
run sample-topups-30MB $G sample --prompts $A/prompts-8.jsonl --base-url http://127.0.0.1:18441/one/v1 --model m --n 500 --max-tokens 32000 --concurrency 1 --retries 0 --out $T/answers4.jsonl
run sample-top-logprobs-20 $G sample --prompts $A/prompts-8.jsonl --base-url http://127.0.0.1:18441/logprobs/v1 --model m --n 10 --max-tokens 1024 --logprobs --top-logprobs 20 --retries 0 --out $T/answers5.jsonl
run entropy-hung-judge $G entropy --in $A/answers-inf.jsonl --scores numsets --nli-base-url http://127.0.0.1:18441/hang/v1 --nli-model m --request-timeout 10s
run entropy-inf-logprobs $G entropy --in $A/answers-inf.jsonl --scores pe,ne,perplexity --json
run fid-save-stats-devnull $G fid --save-stats $A/img /dev/null
# 2000 PNGs of 8 MB on disk make a 2.9 GiB pixel matrix, priced before it
# is allocated (and each image at its decoded price).
run disentangle-png-2000 $G disentangle --train $A/png-2000 --test $A/png-2000 --generated $A/png-2000 --out $T/d1
# A minute of one prompt's RougeL similarities, interrupted after 3 s:
# the wall time says how soon the job stopped (timeout exits 124).
run entropy-1x1000-sigint timeout -s INT 3 $G entropy --in $A/answers-1x1000.jsonl --scores eigv --out $T/e4
# The fixture's BERT with 5 heads of a width of 32.
cp -r network/bert/testdata/e5 $A/e5-heads5
sed -i 's/"num_attention_heads": 4/"num_attention_heads": 5/' $A/e5-heads5/config.json
run bert-heads-5 $G entropy --in $A/answers-inf.jsonl --embedder e5-small-v2 --weights $A/e5-heads5 --kernel rbf --scores kernel-entropy
# A check model carrying a 200,000-row drift reference (1.6 MB): its first
# estimate, as a monitor's first chunks page after each start, fits the
# nearest-neighbour support of the reference.
$G mse fit --train $A/train-1f.csv --target y --prediction f --model $T/check.json >/dev/null
$T/attacks wide-drift $T/check.json
run mse-drift-200k-rows $G mse estimate --model $T/check.json --data $A/op-1f.csv --chunk-size 500
