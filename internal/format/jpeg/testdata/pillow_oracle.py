#!/usr/bin/python3
"""Pillow as an oracle for package jpeg's tests.

    pillow_oracle.py decode OUTDIR FILE...
        For each FILE, write OUTDIR/<index>.rgb with Pillow's
        Image.open(FILE).convert("RGB").tobytes(), or OUTDIR/<index>.err
        with Pillow's error.

    pillow_oracle.py random OUTDIR N SEED
        Write N random JPEGs OUTDIR/<i>.jpg (Pillow and cjpeg, random size,
        quality, sampling, progression, restarts, arithmetic coding) with
        OUTDIR/<i>.rgb as above and OUTDIR/<i>.txt describing how it was made.
"""

import os
import random
import subprocess
import sys

import numpy as np
from PIL import Image


def decode(outdir, files):
    for i, f in enumerate(files):
        try:
            with Image.open(f) as im:
                raw = im.convert("RGB").tobytes()
            with open(os.path.join(outdir, "%d.rgb" % i), "wb") as out:
                out.write(raw)
        except Exception as e:  # noqa: BLE001 - the test reports it
            with open(os.path.join(outdir, "%d.err" % i), "w") as out:
                out.write("%s: %s" % (type(e).__name__, e))


def picture(rng, w, h):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.zeros((h, w, 3))
    for c in range(3):
        fx, fy, ph = rng.uniform(0.5, 8, 3)
        img[..., c] = 128 + rng.uniform(30, 127) * np.sin(fx * x / w * 6.28 + fy * y / h * 6.28 + ph)
    for _ in range(rng.integers(0, 6)):
        x0, x1 = sorted(rng.integers(0, w + 1, 2))
        y0, y1 = sorted(rng.integers(0, h + 1, 2))
        img[y0:y1, x0:x1] = rng.integers(0, 256, 3)
    img += rng.normal(0, rng.uniform(0, 30), img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


SAMPLINGS = ["1x1", "2x1", "1x2", "2x2", "4x1", "1x4", "3x1", "1x3", "4x2", "2x4", "3x2", "3x3", "4x4",
             "2x2,1x2,1x1", "2x2,2x1,1x1", "1x1,2x2,1x1", "2x1,1x1,2x1", "4x1,2x1,1x1", "2x2,1x1,2x2"]


def random_jpegs(outdir, n, seed):
    rng = np.random.default_rng(seed)
    pyr = random.Random(seed)
    for i in range(n):
        w = int(rng.choice([rng.integers(1, 20), rng.integers(1, 130), rng.integers(100, 400)]))
        h = int(rng.choice([rng.integers(1, 20), rng.integers(1, 130), rng.integers(100, 400)]))
        a = picture(rng, w, h)
        gray = rng.random() < 0.15
        im = Image.fromarray(a, "RGB")
        if gray:
            im = im.convert("L")
        path = os.path.join(outdir, "%d.jpg" % i)
        if rng.random() < 0.4:
            kw = dict(quality=int(rng.integers(1, 101)), subsampling=int(rng.integers(0, 3)),
                      progressive=bool(rng.random() < 0.4), optimize=bool(rng.random() < 0.3))
            im.save(path, "JPEG", **kw)
            how = "PIL %s %r" % (im.mode, kw)
        else:
            src = os.path.join(outdir, "%d.%s" % (i, "pgm" if gray else "ppm"))
            im.save(src)
            args = ["-quality", str(int(rng.integers(1, 101)))]
            if not gray:
                s = pyr.choice(SAMPLINGS)
                if "," not in s:
                    s += ",1x1,1x1"
                args += ["-sample", s]
            if rng.random() < 0.4:
                args.append("-progressive")
            if rng.random() < 0.25:
                args.append("-arithmetic")
            elif rng.random() < 0.3:
                args.append("-optimize")
            if rng.random() < 0.3:
                args += ["-restart", pyr.choice(["1", "2", "1B", "3B", "7B"])]
            if not gray and rng.random() < 0.1:
                args.append("-rgb")
            r = subprocess.run(["cjpeg", *args, "-outfile", path, src], capture_output=True)
            os.remove(src)
            if r.returncode != 0:  # e.g. more than 10 blocks per MCU
                im.save(path, "JPEG")
                args += ["refused; PIL defaults instead"]
            how = "cjpeg %s %s" % (" ".join(args), im.mode)
        with open(os.path.join(outdir, "%d.txt" % i), "w") as f:
            f.write("%dx%d %s\n" % (w, h, how))
        decode_one(outdir, i, path)


def decode_one(outdir, i, path):
    try:
        with Image.open(path) as im:
            raw = im.convert("RGB").tobytes()
        with open(os.path.join(outdir, "%d.rgb" % i), "wb") as out:
            out.write(raw)
    except Exception as e:  # noqa: BLE001
        with open(os.path.join(outdir, "%d.err" % i), "w") as out:
            out.write("%s: %s" % (type(e).__name__, e))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "decode":
        decode(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 5 and sys.argv[1] == "random":
        random_jpegs(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
