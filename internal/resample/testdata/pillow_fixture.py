#!/usr/bin/env python3
"""Writes pillow.json: what Pillow's Image.resize computes for the cases
below, for resample's tests. Run from this directory:

    python3 pillow_fixture.py    # Debian: apt-get install python3-pil python3-numpy

Inputs are not stored: each is generated from a seed by splitmix64, which
the Go test reimplements, so the file stays small. Each case records the
SHA-256 of the whole output (uint8 HxWxC bytes for 8-bit images, float32
little-endian row-major for mode F), its first values and, for small
outputs, every value.
"""
import hashlib
import json

import numpy as np
import PIL
from PIL import Image

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix(seed, n):
    """The n first outputs of splitmix64 started at seed, as uint64."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def pixels(kind, seed, n):
    z = splitmix(seed, n)
    if kind == "noise":  # uniform bytes
        return (z >> np.uint64(56)).astype(np.uint8)
    if kind == "binary":  # 0 or 255: the worst case for bicubic overshoot
        return ((z >> np.uint64(63)).astype(np.uint8) * 255).astype(np.uint8)
    if kind == "frac":  # 24-bit fractions in [0, 256), exact in float32
        return ((z >> np.uint64(40)).astype(np.float32) / np.float32(65536))
    if kind == "signed":  # in [-128, 128)
        m = (z >> np.uint64(40)).astype(np.int64) - (1 << 23)
        return m.astype(np.float32) / np.float32(65536)
    raise ValueError(kind)


FILTERS = {"bicubic": Image.BICUBIC, "bilinear": Image.BILINEAR}

# (mode, filter, kind, w, h, ow, oh)
CASES = [
    ("RGB", "bicubic", "noise", 256, 256, 224, 224),
    ("RGB", "bicubic", "noise", 32, 32, 299, 299),
    ("RGB", "bicubic", "noise", 512, 512, 299, 299),
    ("RGB", "bicubic", "noise", 640, 480, 224, 224),
    ("RGB", "bicubic", "noise", 37, 53, 19, 29),
    ("RGB", "bicubic", "noise", 7, 5, 23, 17),
    ("RGB", "bicubic", "noise", 100, 80, 100, 50),
    ("RGB", "bicubic", "noise", 80, 100, 50, 100),
    ("RGB", "bicubic", "noise", 300, 200, 224, 336),
    ("RGB", "bicubic", "binary", 64, 64, 45, 45),
    ("RGB", "bicubic", "binary", 16, 16, 37, 37),
    ("RGB", "bicubic", "noise", 1, 1, 3, 2),
    ("RGB", "bilinear", "noise", 256, 256, 224, 224),
    ("RGB", "bilinear", "noise", 37, 53, 19, 29),
    ("RGB", "bilinear", "noise", 7, 5, 23, 17),
    ("RGB", "bilinear", "binary", 640, 480, 224, 224),
    ("L", "bicubic", "noise", 33, 33, 17, 17),
    ("F", "bicubic", "noise", 256, 256, 299, 299),
    ("F", "bicubic", "noise", 32, 32, 299, 299),
    ("F", "bicubic", "noise", 512, 512, 299, 299),
    ("F", "bicubic", "frac", 640, 480, 299, 299),
    ("F", "bicubic", "frac", 37, 53, 19, 29),
    ("F", "bicubic", "signed", 7, 5, 23, 17),
    ("F", "bicubic", "frac", 100, 80, 100, 50),
    ("F", "bicubic", "frac", 80, 100, 50, 100),
    ("F", "bicubic", "binary", 64, 48, 299, 299),
    ("F", "bicubic", "frac", 299, 299, 299, 299),
    ("F", "bilinear", "frac", 37, 53, 19, 29),
    ("F", "bilinear", "noise", 256, 256, 224, 224),
]

SMALL = 2048  # outputs up to this many values are stored in full


def main():
    out = {"pillow": PIL.__version__, "numpy": np.__version__, "cases": []}
    for i, (mode, filt, kind, w, h, ow, oh) in enumerate(CASES):
        seed = 1000 + i
        c = 3 if mode == "RGB" else 1
        px = pixels(kind, seed, h * w * c)
        if mode == "F":
            im = Image.fromarray(px.astype(np.float32).reshape(h, w), mode="F")
        elif mode == "RGB":
            im = Image.fromarray(px.reshape(h, w, 3), mode="RGB")
        else:
            im = Image.fromarray(px.reshape(h, w), mode="L")
        res = np.asarray(im.resize((ow, oh), resample=FILTERS[filt]))
        assert res.shape[:2] == (oh, ow), res.shape
        if mode == "F":
            res = res.astype("<f4")
            vals = [float(v) for v in res.ravel()]
        else:
            vals = [int(v) for v in res.ravel()]
        case = {
            "mode": mode, "filter": filt, "kind": kind, "seed": seed,
            "w": w, "h": h, "ow": ow, "oh": oh,
            "sha256": hashlib.sha256(res.tobytes()).hexdigest(),
            "head": vals[:32],
        }
        if len(vals) <= SMALL:
            case["values"] = vals
        out["cases"].append(case)
    with open("pillow.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
