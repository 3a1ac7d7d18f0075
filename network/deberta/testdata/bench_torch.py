#!/usr/bin/env python3
"""PyTorch beside BenchmarkLargePairs: the deberta-large-mnli shape (24
layers, hidden 1024, 16 heads, intermediate 4096, 512 relative positions)
with random weights, the forward pass of make_fixtures.py, on batches of
8 pairs of 32 tokens, at 2 threads. Prints pairs/s.

Run:  /usr/bin/python3 bench_torch.py
"""
import time

import torch

import make_fixtures as mf

torch.set_num_threads(2)
torch.manual_seed(1)
mf.H, mf.LAYERS, mf.HEADS, mf.INTER, mf.MAXREL = 1024, 24, 16, 4096, 512
H, I, M, V = mf.H, mf.INTER, mf.MAXREL, 1000
r = lambda *s: torch.randn(*s) * 0.02
sd = {
    "deberta.embeddings.word_embeddings.weight": r(V, H),
    "deberta.embeddings.LayerNorm.weight": 1 + r(H), "deberta.embeddings.LayerNorm.bias": r(H),
    "deberta.encoder.rel_embeddings.weight": r(2 * M, H),
    "pooler.dense.weight": r(H, H), "pooler.dense.bias": r(H),
    "classifier.weight": r(3, H), "classifier.bias": r(3),
}
for i in range(mf.LAYERS):
    p = "deberta.encoder.layer.%d." % i
    sd.update({
        p + "attention.self.in_proj.weight": r(3 * H, H),
        p + "attention.self.q_bias": r(H), p + "attention.self.v_bias": r(H),
        p + "attention.self.pos_proj.weight": r(H, H),
        p + "attention.self.pos_q_proj.weight": r(H, H), p + "attention.self.pos_q_proj.bias": r(H),
        p + "attention.output.dense.weight": r(H, H), p + "attention.output.dense.bias": r(H),
        p + "attention.output.LayerNorm.weight": 1 + r(H), p + "attention.output.LayerNorm.bias": r(H),
        p + "intermediate.dense.weight": r(I, H), p + "intermediate.dense.bias": r(I),
        p + "output.dense.weight": r(H, I), p + "output.dense.bias": r(H),
        p + "output.LayerNorm.weight": 1 + r(H), p + "output.LayerNorm.bias": r(H),
    })
B, L = 8, 32
ids = torch.randint(4, V, (B, L))
mask = torch.ones(B, L, dtype=torch.long)
with torch.no_grad():
    mf.forward(sd, ids, mask)
    n, t0 = 0, time.perf_counter()
    while n < 3 or time.perf_counter() - t0 < 10:
        mf.forward(sd, ids, mask)
        n += 1
    dt = time.perf_counter() - t0
print("pytorch %s, 2 threads: %.2f pairs/s (%d batches of %d pairs, %d tokens)" % (torch.__version__, n * B / dt, n, B, L))
