#!/usr/bin/env python3
"""Writes clean_inputs.json: clean-fid's network input for each image of
the shared random-weight fixture, for the tests of mode clean. Run from
this directory, with the shared data:

    python3 clean_inputs.py /work/shared/data/fixtures/inception_random/images
    # Debian: apt-get install python3-pil python3-numpy

The steps are clean-fid's (cleanfid/utils.py ResizeDataset, resize.py
make_resizer("PIL", False, "bicubic", (299, 299)), and the torchscript
Inception wrapper's normalisation), written out with PIL and numpy alone:
np.array(Image.open(p).convert("RGB")); each channel as a float32 image
of mode F resized to 299x299 with Image.BICUBIC; clip(0, 255); channels
first (ToTensor on a float32 array only transposes); x - 128; / 128; all
in float32. Each image records the SHA-256 of that 3x299x299 float32
array (little-endian, channels first) and a few values.
"""
import hashlib
import json
import os
import sys

import numpy as np
import PIL
from PIL import Image


def clean_input(path):
    x = np.array(Image.open(path).convert("RGB"))
    chans = []
    for c in range(3):
        im = Image.fromarray(x[:, :, c].astype(np.float32), mode="F")
        im = im.resize((299, 299), resample=Image.BICUBIC)
        chans.append(np.asarray(im).clip(0, 255).reshape(299, 299, 1))
    x = np.concatenate(chans, axis=2).astype(np.float32)
    x = x.transpose(2, 0, 1)
    x = (x - np.float32(128)) / np.float32(128)
    assert x.dtype == np.float32
    return np.ascontiguousarray(x, dtype="<f4")


def main():
    src = sys.argv[1]
    out = {"pillow": PIL.__version__, "numpy": np.__version__, "images": []}
    for name in sorted(os.listdir(src)):
        if not name.endswith(".png"):
            continue
        im = Image.open(os.path.join(src, name))
        x = clean_input(os.path.join(src, name))
        flat = x.ravel()
        idx = [0, 1, 299, 300, 89400, 89401, 100000, 178801, 200000, 268202]
        out["images"].append({
            "name": name, "pil_mode": im.mode, "width": im.size[0], "height": im.size[1],
            "sha256": hashlib.sha256(x.tobytes()).hexdigest(),
            "samples": {str(i): float(flat[i]) for i in idx},
            "mean": float(flat.astype(np.float64).mean()),
        })
    with open("clean_inputs.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
