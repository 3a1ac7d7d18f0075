#!/usr/bin/env python3
"""PyTorch's side of package vit's speed comparison (written for genlens):
the same full-size networks as BenchmarkForward, built from the modules of
make_fixtures.py (the reference code's math) with random weights, on a
batch of 4 random 3×S×S inputs, float32, CPU, under torch.no_grad().

  python3 bench_torch.py [threads]      # default 2

Prints wall seconds and CPU seconds (process_time) per image.
"""
import sys
import time

import torch

from make_fixtures import ClipVisual, Dino

NETS = {
    "dinov2-vits14": lambda: (Dino(518, 14, 384, 12, 6), 224),
    "dinov2-vitb14": lambda: (Dino(518, 14, 768, 12, 12), 224),
    "clip-vitb32": lambda: (ClipVisual(224, 32, 768, 12, 12, 512), 224),
}

if __name__ == "__main__":
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    torch.manual_seed(0)
    for name, make in NETS.items():
        model, side = make()
        model.eval()
        x = torch.randn(4, 3, side, side)
        with torch.no_grad():
            model(x[:1])  # warm-up
            w0, c0 = time.perf_counter(), time.process_time()
            model(x)
            w, c = time.perf_counter() - w0, time.process_time() - c0
        print("%-16s %.3f s/image wall, %.3f CPU s/image, %d threads" % (name, w / 4, c / 4, torch.get_num_threads()))
