#!/usr/bin/python3
"""Make the JPEG fixtures of package jpeg and record what Pillow decodes.

Run with Debian's Python (it has PIL and numpy) from any directory:

    /usr/bin/python3 internal/format/jpeg/testdata/make_fixtures.py

It needs cjpeg (libjpeg-turbo-progs) and libturbojpeg.so.0. Source pixels
are synthetic and deterministic: gradients, a sine, flat saturated patches,
a diagonal line, a checkerboard and Gaussian noise.

Outputs, in this directory:
  *.jpg          the fixtures
  *.rgb          Pillow's Image.open(f).convert("RGB").tobytes() for the
                 small fixtures, so a failing test can show where it differs
  expected.txt   one line per fixture:
                   NAME ok WIDTH HEIGHT SHA256-OF-RGB
                   NAME error SUBSTRING-OF-OUR-ERROR  # what Pillow does
"""

import ctypes
import hashlib
import io
import os
import subprocess
import tempfile

import numpy as np
from PIL import Image, ImageFile, features

HERE = os.path.dirname(os.path.abspath(__file__))
RAW_LIMIT = 80 * 80  # store raw RGB for images up to this many pixels


def source(w, h, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.stack([
        128 + 100 * np.sin(x / (w / 3.1) + y / (h / 2.3)),
        255 * x / max(w - 1, 1),
        255 * y / max(h - 1, 1),
    ], -1)
    img[h // 4:h // 2, w // 5:w // 2] = [250, 10, 30]
    img[h // 2:(h * 2) // 3, (w * 2) // 3:] = [5, 240, 250]
    img[np.abs(x - y * w / h) < 1.5] = [0, 0, 0]
    q = (slice((h * 3) // 4, None), slice(None, w // 4))
    check = ((x[q] // 2 + y[q] // 2) % 2 == 0)[..., None]
    img[q] = np.where(check, 255.0, 0.0)
    img += rng.normal(0, 12, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def pil(w, h, seed, mode="RGB", **kw):
    a = source(w, h, seed)
    im = Image.fromarray(a, "RGB")
    if mode == "L":
        im = im.convert("L")
    elif mode == "CMYK":
        im = Image.fromarray(cmyk(a), "CMYK")
    buf = io.BytesIO()
    im.save(buf, "JPEG", **kw)
    return buf.getvalue()


def cmyk(a):
    f = a.astype(np.float64) / 255
    k = 1 - f.max(-1)
    d = np.where(k < 1, 1 - k, 1)
    c = (1 - f[..., 0] - k) / d
    m = (1 - f[..., 1] - k) / d
    yy = (1 - f[..., 2] - k) / d
    return np.clip(np.rint(np.stack([c, m, yy, k], -1) * 255), 0, 255).astype(np.uint8)


def cjpeg(w, h, seed, *args, scans=None, gray=False):
    a = source(w, h, seed)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.ppm")
        im = Image.fromarray(a, "RGB")
        if gray:
            im = im.convert("L")
            src = os.path.join(tmp, "in.pgm")
        im.save(src)
        cmd = ["cjpeg", *args]
        if scans is not None:
            sf = os.path.join(tmp, "scans.txt")
            with open(sf, "w") as f:
                f.write(scans)
            cmd += ["-scans", sf]
        return subprocess.run(cmd + [src], check=True, capture_output=True).stdout


def turbo_ycck(w, h, seed, subsamp, quality):
    """A YCCK JPEG (Adobe transform 2): TurboJPEG codes CMYK input as YCCK."""
    tj = ctypes.CDLL("libturbojpeg.so.0")
    tj.tjInitCompress.restype = ctypes.c_void_p
    handle = ctypes.c_void_p(tj.tjInitCompress())
    src = cmyk(source(w, h, seed)).tobytes()
    out = ctypes.POINTER(ctypes.c_ubyte)()
    size = ctypes.c_ulong(0)
    TJPF_CMYK = 11
    rc = tj.tjCompress2(handle, src, w, 0, h, TJPF_CMYK, ctypes.byref(out),
                        ctypes.byref(size), subsamp, quality, 0)
    assert rc == 0, "tjCompress2 failed"
    data = ctypes.string_at(out, size.value)
    tj.tjFree(out)
    tj.tjDestroy(handle)
    return data


# Scan scripts for cjpeg -scans.
SEQ_SEPARATE = "0;\n1;\n2;\n"  # sequential, one component per scan
PROG_SPECTRAL = """0 1 2: 0 0 0 0;
0: 1 5 0 0;
0: 6 63 0 0;
1: 1 63 0 0;
2: 1 63 0 0;
"""
PROG_SUCCESSIVE = """0: 0 0 0 2;
1 2: 0 0 0 1;
0: 0 0 2 1;
0: 1 9 0 3;
0: 10 63 0 2;
1: 1 63 0 1;
2: 1 63 0 1;
0: 1 9 3 2;
0: 1 9 2 1;
0: 10 63 2 1;
0: 1 63 1 0;
1 2: 0 0 1 0;
1: 1 63 1 0;
2: 1 63 1 0;
0: 0 0 1 0;
"""
PROG_DC_ONLY = "0 1 2: 0 0 0 0;\n"  # never sends AC: libjpeg would smooth


def fixtures():
    """(name, bytes) of the decodable fixtures."""
    yield "q75_444_33x17", pil(33, 17, 1, quality=75, subsampling=0)
    yield "q90_422_64x48", pil(64, 48, 2, quality=90, subsampling=1)
    yield "q95_420_75x61", pil(75, 61, 3, quality=95, subsampling=2)
    yield "q75_420_299x299", pil(299, 299, 4, quality=75, subsampling=2)
    yield "q90_444_299x299_prog", pil(299, 299, 5, quality=90, subsampling=0, progressive=True)
    yield "q75_420_75x61_prog", pil(75, 61, 6, quality=75, subsampling=2, progressive=True)
    yield "q90_422_33x17_prog_opt", pil(33, 17, 7, quality=90, subsampling=1, progressive=True, optimize=True)
    yield "q75_420_1x1", pil(1, 1, 8, quality=75, subsampling=2)
    yield "q75_420_3x2", pil(3, 2, 9, quality=75, subsampling=2)
    yield "q75_420_5x5", pil(5, 5, 10, quality=75, subsampling=2)
    yield "q75_422_4x9", pil(4, 9, 11, quality=75, subsampling=1)
    yield "q100_420_40x24", pil(40, 24, 12, quality=100, subsampling=2)
    yield "q5_420_40x24", pil(40, 24, 13, quality=5, subsampling=2)
    yield "gray_q75_33x17", pil(33, 17, 14, mode="L", quality=75)
    yield "gray_q90_64x48_prog", pil(64, 48, 15, mode="L", quality=90, progressive=True)
    yield "cmyk_q90_64x48", pil(64, 48, 16, mode="CMYK", quality=90)
    yield "cmyk_q75_33x17_prog", pil(33, 17, 17, mode="CMYK", quality=75, progressive=True)
    yield "ycck_420_q90_64x48", turbo_ycck(64, 48, 18, 2, 90)
    yield "ycck_444_q75_33x17", turbo_ycck(33, 17, 19, 0, 75)
    yield "cj_440_75x61", cjpeg(75, 61, 20, "-sample", "1x2,1x1,1x1")
    yield "cj_411_75x61", cjpeg(75, 61, 21, "-sample", "4x1,1x1,1x1")
    yield "cj_31_75x61", cjpeg(75, 61, 22, "-sample", "3x1,1x1,1x1")
    yield "cj_32_50x37", cjpeg(50, 37, 23, "-sample", "3x2,1x1,1x1")
    yield "cj_22_12_11_75x61", cjpeg(75, 61, 24, "-sample", "2x2,1x2,1x1")
    yield "cj_22_21_11_75x61", cjpeg(75, 61, 25, "-sample", "2x2,2x1,1x1")
    yield "cj_42_11_11_75x61", cjpeg(75, 61, 26, "-sample", "4x2,1x1,1x1")
    yield "cj_11_22_11_50x37", cjpeg(50, 37, 27, "-sample", "1x1,2x2,1x1")
    yield "cj_14_12_11_33x50", cjpeg(33, 50, 28, "-sample", "1x4,1x2,1x1")
    yield "cj_411_75x61_prog", cjpeg(75, 61, 29, "-sample", "4x1,1x1,1x1", "-progressive")
    yield "cj_440_64x48_prog", cjpeg(64, 48, 30, "-sample", "1x2,1x1,1x1", "-progressive")
    yield "cj_restart1_75x61", cjpeg(75, 61, 31, "-restart", "1")
    yield "cj_restart3b_75x61", cjpeg(75, 61, 32, "-restart", "3B")
    yield "cj_restart2b_64x48_prog", cjpeg(64, 48, 33, "-restart", "2B", "-progressive")
    yield "cj_restart1b_33x17_444", cjpeg(33, 17, 34, "-restart", "1B", "-sample", "1x1,1x1,1x1")
    yield "cj_rgb_64x48", cjpeg(64, 48, 35, "-rgb")
    yield "cj_gray_75x61_restart", cjpeg(75, 61, 36, "-restart", "2B", gray=True)
    yield "cj_q50_75x61_opt", cjpeg(75, 61, 37, "-quality", "50", "-optimize")
    yield "cj_q1_40x24", cjpeg(40, 24, 38, "-quality", "1")
    yield "cj_seq_separate_75x61", cjpeg(75, 61, 39, scans=SEQ_SEPARATE)
    yield "cj_prog_spectral_75x61", cjpeg(75, 61, 40, "-progressive", scans=PROG_SPECTRAL)
    yield "cj_prog_successive_75x61", cjpeg(75, 61, 41, "-progressive", scans=PROG_SUCCESSIVE)
    yield "cj_arith_75x61", cjpeg(75, 61, 42, "-arithmetic")
    yield "cj_arith_75x61_prog", cjpeg(75, 61, 43, "-arithmetic", "-progressive")
    yield "cj_arith_411_64x48_restart", cjpeg(64, 48, 44, "-arithmetic", "-sample", "4x1,1x1,1x1", "-restart", "1")
    yield "cj_arith_gray_33x17_prog", cjpeg(33, 17, 45, "-arithmetic", "-progressive", gray=True)


def broken(ok):
    """(name, bytes, substring of our error) of fixtures that must fail."""
    base = ok["q95_420_75x61"]
    prog = ok["q75_420_75x61_prog"]
    rst = ok["cj_restart1_75x61"]
    yield "bad_truncated", base[:len(base) * 6 // 10], "truncated"
    yield "bad_truncated_prog", prog[:len(prog) * 6 // 10], "truncated"
    yield "bad_truncated_eoi", base[:len(base) * 6 // 10] + b"\xff\xd9", "ends early at marker EOI"
    yield "bad_no_eoi", base[:-2], "no EOI"
    yield "bad_header_cut", base[:100], "truncated"
    # The first restart marker renumbered: libjpeg-turbo resynchronises with a warning.
    i = rst.index(b"\xff\xd0", rst.index(b"\xff\xda"))
    yield "bad_rst_number", rst[:i] + b"\xff\xd5" + rst[i + 2:], "expected RST0"
    # Ones where a Huffman code must be: the all-ones code is not assigned.
    s = base.index(b"\xff\xda")
    s += 2 + int.from_bytes(base[s + 2:s + 4], "big")
    mid = s + (len(base) - s) // 2
    yield "bad_huffman_code", base[:mid] + b"\xff\x00" * 8 + base[mid + 16:], "invalid Huffman code"
    yield "bad_prog_dc_only", cjpeg(64, 48, 50, "-progressive", scans=PROG_DC_ONLY), "block smoothing"
    yield "bad_not_jpeg", b"GIF89a" + bytes(40), "not a JPEG"
    # 12-bit precision in the frame header.
    f = base.index(b"\xff\xc0")
    yield "bad_12bit", base[:f + 4] + b"\x0c" + base[f + 5:], "12-bit"


def pil_rgb(data):
    return Image.open(io.BytesIO(data)).convert("RGB")


def pil_outcome(data):
    try:
        ImageFile.LOAD_TRUNCATED_IMAGES = False
        im = pil_rgb(data)
        im.load()
        return "Pillow decodes it"
    except Exception as e:  # noqa: BLE001 - we record whatever Pillow says
        return "Pillow: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:60])


def main():
    for f in os.listdir(HERE):
        if f.endswith((".jpg", ".rgb")) or f == "expected.txt":
            os.remove(os.path.join(HERE, f))
    lines = ["# Pillow %s, libjpeg-turbo %s; made by make_fixtures.py" % (
        Image.__version__, features.version("libjpeg_turbo") or features.version("jpg"))]
    ok = {}
    for name, data in fixtures():
        ok[name] = data
        with open(os.path.join(HERE, name + ".jpg"), "wb") as f:
            f.write(data)
        im = pil_rgb(data)
        raw = im.tobytes()
        w, h = im.size
        if w * h <= RAW_LIMIT:
            with open(os.path.join(HERE, name + ".rgb"), "wb") as f:
                f.write(raw)
        lines.append("%s ok %d %d %s" % (name, w, h, hashlib.sha256(raw).hexdigest()))
    for name, data, want in broken(ok):
        with open(os.path.join(HERE, name + ".jpg"), "wb") as f:
            f.write(data)
        lines.append("%s error %s  # %s" % (name, want.replace(" ", "_"), pil_outcome(data)))
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(os.path.getsize(os.path.join(HERE, f)) for f in os.listdir(HERE))
    print("wrote %d fixtures, %d bytes in testdata" % (len(lines) - 1, total))


if __name__ == "__main__":
    main()
