#!/usr/bin/env python3
"""Sentences per second of the e5-small-v2 shape (12 layers, hidden 384,
12 heads, intermediate 1536, vocabulary 30522) in PyTorch at 2 threads,
random weights, the modules of make_fixtures.py; the same batches as
bert's BenchmarkE5Small (64 sentences of 32 tokens).

    /usr/bin/python3 bench_torch.py
"""
import time

import torch

import make_fixtures as mf

torch.set_num_threads(2)
torch.manual_seed(0)
cfg = dict(mf.CFG, hidden_size=384, num_attention_heads=12, intermediate_size=1536, num_hidden_layers=12,
           max_position_embeddings=512)
m = mf.Bert(30522, cfg).eval()
B, T = 64, 32
ids = torch.randint(5, 30522, (B, T))
types = torch.zeros_like(ids)
mask = torch.ones_like(ids)
with torch.no_grad():
    for _ in range(2):
        m(ids, types, mask)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        h = m(ids, types, mask)
        e = torch.nn.functional.normalize(h.mean(1), dim=1)
        best = min(best, time.perf_counter() - t0)
print(f"torch {torch.__version__} threads {torch.get_num_threads()}: {B / best:.1f} sentences/s ({B} sentences of {T} tokens, best of 5)")
