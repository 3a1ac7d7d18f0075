#!/usr/bin/env python3
"""Writes views.pth, a torch.save state dict whose tensors view shared
storages, as tied weights do and, many times over, as a hostile file
does to make a small file ask for large copies: four names for one
float32 storage of 64 × 64 elements (one of them transposed), four for
one float64 storage of 32 × 32, and four for one uint8 storage of 4096
bytes.

    /usr/bin/python3 make_fixtures.py
"""
import torch

torch.manual_seed(0)
x = torch.randn(64, 64)
u = torch.arange(4096, dtype=torch.uint8)
sd = {}
d = torch.randn(32, 32, dtype=torch.float64)
for i in range(4):
    sd["byte.%d" % i] = u
    sd["double.%d" % i] = d
for i in range(3):
    sd["float.%d" % i] = x
sd["float.t"] = x.t()  # a transposed view of the same storage
torch.save(sd, "views.pth")
