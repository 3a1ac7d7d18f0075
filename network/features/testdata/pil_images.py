#!/usr/bin/python3
"""Images of every format and mode genlens reads, and PIL's pixels for them.

The oracle of network/features' decoding tests. Pillow 9.4 (Debian
bookworm: libjpeg-turbo 2.1.5, libwebp 1.2.4, libtiff 4.5.0) and numpy;
cwebp for the lossy WebP variants PIL cannot ask for.

    pil_images.py random DIR N SEED   N random images of each case into DIR
    pil_images.py decode DIR          PIL's pixels of every image in DIR
    pil_images.py fixtures DIR        the small fixtures kept in testdata/pil
    pil_images.py scans500 OUT        a valid progressive JPEG of 500 scans

"decode" writes, for every image NAME in DIR, NAME.rgb: a line "W H\\n"
then W*H*3 bytes of Image.open(NAME).convert("RGB"), or NAME.err with
PIL's error. "fixtures" writes one small image per case and
expected.txt: per image its name, size, the SHA-256 of the RGB bytes and,
for images of at most 16 pixels, the bytes in hex.
"""

import hashlib
import io
import os
import struct
import subprocess
import sys
import tempfile
import warnings
import zlib

import numpy as np
from PIL import Image

# PIL warns that palette images with transparency bytes are better
# converted to RGBA; convert("RGB") is what the anchors call regardless.
warnings.simplefilter("ignore")

# --------------------------------------------------------------------------
# Pixels


def content(rng, h, w, c):
    """Random pixels: noise, a smooth field or flat regions with noise."""
    kind = rng.integers(3)
    if kind == 0:
        a = rng.integers(0, 256, (h, w, c))
    elif kind == 1:
        gh, gw = max(2, h // 8 + 2), max(2, w // 8 + 2)
        g = rng.integers(0, 256, (gh, gw, c)).astype(np.float64)
        ys = np.linspace(0, gh - 1, h)
        xs = np.linspace(0, gw - 1, w)
        y0 = np.floor(ys).astype(int).clip(0, gh - 2)
        x0 = np.floor(xs).astype(int).clip(0, gw - 2)
        fy = (ys - y0)[:, None, None]
        fx = (xs - x0)[None, :, None]
        a = (g[y0][:, x0] * (1 - fy) * (1 - fx) + g[y0 + 1][:, x0] * fy * (1 - fx)
             + g[y0][:, x0 + 1] * (1 - fy) * fx + g[y0 + 1][:, x0 + 1] * fy * fx)
        a = a + rng.normal(0, 4, a.shape)
    else:
        a = np.full((h, w, c), rng.integers(0, 256, c))
        a[rng.random((h, w)) < 0.1] = rng.integers(0, 256, c)
    return np.clip(np.rint(a), 0, 255).astype(np.uint8)


def pil(rng, h, w, mode):
    if mode == "1":
        return Image.fromarray(rng.random((h, w)) < 0.5)
    if mode == "L":
        return Image.fromarray(content(rng, h, w, 1)[:, :, 0], "L")
    if mode == "P":
        n = int(rng.integers(2, 257))
        idx = content(rng, h, w, 1)[:, :, 0].astype(int) % n
        im = Image.fromarray(idx.astype(np.uint8), "P")
        im.putpalette(rng.integers(0, 256, 3 * n).astype(np.uint8).tobytes())
        return im
    c = {"LA": 2, "RGB": 3, "RGBA": 4}[mode]
    a = content(rng, h, w, c)
    if c in (2, 4):
        # Some fully transparent pixels, whose colour must survive.
        a[..., -1][rng.random((h, w)) < 0.2] = 0
    return Image.fromarray(a if c > 1 else a[:, :, 0], mode)


# --------------------------------------------------------------------------
# Hand-written files, for what PIL does not write


def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)


def png_raw(w, h, depth, ctype, rows, extra=b""):
    """A PNG of the given rows (bytes each, unfiltered), filter byte 0."""
    ihdr = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 0)
    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def png_bits(rng, h, w, depth):
    """Greyscale of 1, 2 or 4 bits per pixel."""
    v = rng.integers(0, 1 << depth, (h, w))
    rows = []
    per = 8 // depth
    for y in range(h):
        bs = bytearray((w + per - 1) // per)
        for x in range(w):
            bs[x // per] |= int(v[y, x]) << (8 - depth * (x % per + 1))
        rows.append(bytes(bs))
    return png_raw(w, h, depth, 0, rows)


def png16(rng, h, w, ctype, trns=False):
    c = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    # Mostly small values for greyscale, where PIL clips at 255.
    top = 1024 if ctype == 0 and rng.random() < 0.5 else 65536
    a = rng.integers(0, top, (h, w, c)).astype(">u2")
    extra = b""
    if trns:
        key = a[0, 0, :c]
        extra = chunk(b"tRNS", key.astype(">u2").tobytes())
    return png_raw(w, h, 16, ctype, [a[y].tobytes() for y in range(h)], extra)


def png_short_palette(rng, h, w):
    n = int(rng.integers(1, 16))
    plte = rng.integers(0, 256, 3 * n).astype(np.uint8).tobytes()
    idx = rng.integers(0, 256, (h, w)).astype(np.uint8)
    return png_raw(w, h, 8, 3, [idx[y].tobytes() for y in range(h)], chunk(b"PLTE", plte))


def bmp_short_palette(rng, h, w):
    """An 8-bit BMP whose indices run past its palette of n colours."""
    n = int(rng.integers(2, 16))
    stride = (w + 3) // 4 * 4
    idx = rng.integers(0, 2 * n, (h, w)).astype(np.uint8)
    pixels = b"".join(idx[y].tobytes() + bytes(stride - w) for y in range(h - 1, -1, -1))
    palette = bytes(int(v) for v in rng.integers(0, 256, 4 * n))
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 8, 0, len(pixels), 2835, 2835, n, 0)
    offset = 14 + len(info) + len(palette)
    head = b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
    return head + info + palette + pixels


def ws(rng):
    """One or two bytes of the whitespace PIL's header reader knows."""
    return bytes(int(c) for c in rng.choice(list(b" \t\n\r\x0b\x0c"), int(rng.integers(1, 3))))


def pnm(rng, h, w, channels, maxval, comments=False):
    """A P5 or P6 file; samples may exceed maxval."""
    head = b"P5" if channels == 1 else b"P6"
    parts = [head]
    for v in (w, h, maxval):
        sep = ws(rng)
        if comments and rng.random() < 0.5:
            sep = sep + b"# a comment" + (b"\r" if rng.random() < 0.5 else b"\n")
        parts.append(sep + str(v).encode())
    header = b"".join(parts) + ws(rng)[:1]
    top = maxval + 1 if rng.random() < 0.8 else (256 if maxval < 256 else 65536)
    a = rng.integers(0, top, (h, w, channels))
    data = a.astype(np.uint8 if maxval < 256 else ">u2").tobytes()
    return header + data


def tiff_associated(rng, h, w, compression):
    """PIL writes unassociated alpha only: mark its ExtraSamples as
    associated (premultiplied) and premultiply the colour."""
    a = content(rng, h, w, 4)
    a[..., 3][rng.random((h, w)) < 0.2] = 0
    a[..., :3] = (a[..., :3].astype(int) * a[..., 3:4] // 255).astype(np.uint8)
    b = io.BytesIO()
    Image.fromarray(a, "RGBA").save(b, "TIFF", compression=compression)
    d = b.getvalue()
    entry = b"\x52\x01\x03\x00\x01\x00\x00\x00\x02\x00"
    assert d.count(entry) == 1
    return d.replace(entry, entry[:-2] + b"\x01\x00")


def tiff_cmyk(rng, h, w):
    b = io.BytesIO()
    Image.fromarray(content(rng, h, w, 4), "CMYK").save(b, "TIFF")
    return b.getvalue()


def cwebp(rng, im, args):
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.png"), os.path.join(d, "out.webp")
        im.save(src)
        subprocess.run(["cwebp", "-quiet"] + args + [src, "-o", dst], check=True)
        return open(dst, "rb").read()


# --------------------------------------------------------------------------
# Cases: name -> (extension, function(rng, h, w) -> bytes)


def saved(mode, fmt, **kw):
    def make(rng, h, w):
        b = io.BytesIO()
        opts = {k: (v(rng) if callable(v) else v) for k, v in kw.items()}
        pil(rng, h, w, mode).save(b, fmt, **opts)
        return b.getvalue()
    return make


def with_trns(mode):
    def make(rng, h, w):
        im = pil(rng, h, w, mode)
        t = im.getpixel((0, 0))
        b = io.BytesIO()
        im.save(b, "PNG", transparency=t)
        return b.getvalue()
    return make


def palette_trns(as_bytes):
    def make(rng, h, w):
        im = pil(rng, h, w, "P")
        t = rng.integers(0, 256, int(rng.integers(1, 256))).astype(np.uint8).tobytes() if as_bytes \
            else int(rng.integers(0, 256))
        b = io.BytesIO()
        im.save(b, "PNG", transparency=t)
        return b.getvalue()
    return make


def jpeg(mode):
    def make(rng, h, w):
        im = pil(rng, h, w, "RGB" if mode == "CMYK" else mode)
        if mode == "CMYK":
            im = im.convert("CMYK")
        b = io.BytesIO()
        im.save(b, "JPEG", quality=int(rng.integers(30, 101)), subsampling=int(rng.integers(0, 3)),
                progressive=bool(rng.integers(2)), optimize=bool(rng.integers(2)))
        return b.getvalue()
    return make


def webp_cwebp(filter_args):
    def make(rng, h, w):
        im = pil(rng, h, w, ["RGB", "RGBA"][int(rng.integers(2))])
        args = ["-q", str(int(rng.integers(0, 101))), "-m", str(int(rng.integers(0, 7))),
                "-segments", str(int(rng.integers(1, 5))), "-sharpness", str(int(rng.integers(0, 8)))]
        return cwebp(rng, im, args + filter_args(rng))
    return make


TIFF_COMPRESSIONS = [None, "tiff_lzw", "tiff_deflate", "tiff_adobe_deflate", "packbits"]


def tiff(mode, compression):
    def make(rng, h, w):
        b = io.BytesIO()
        im = pil(rng, h, w, "L" if mode == "I;16" else mode)
        if mode == "I;16":
            im = Image.fromarray(rng.integers(0, 1024, (h, w)).astype(np.uint16), "I;16")
        im.save(b, "TIFF", compression=compression)
        return b.getvalue()
    return make


CASES = {
    # PNG, every colour type and depth
    "png_1": ("png", saved("1", "PNG")),
    "png_gray2": ("png", lambda rng, h, w: png_bits(rng, h, w, 2)),
    "png_gray4": ("png", lambda rng, h, w: png_bits(rng, h, w, 4)),
    "png_L": ("png", saved("L", "PNG")),
    "png_L_trns": ("png", with_trns("L")),
    "png_LA": ("png", saved("LA", "PNG")),
    "png_RGB": ("png", saved("RGB", "PNG")),
    "png_RGB_trns": ("png", with_trns("RGB")),
    "png_RGBA": ("png", saved("RGBA", "PNG")),
    "png_P": ("png", saved("P", "PNG")),
    "png_P_bits4": ("png", lambda rng, h, w: saved("P", "PNG", bits=4)(rng, h, w)),
    "png_P_trns_bytes": ("png", palette_trns(True)),
    "png_P_trns_int": ("png", palette_trns(False)),
    "png_P_short_palette": ("png", png_short_palette),
    "png_gray16": ("png", lambda rng, h, w: png16(rng, h, w, 0)),
    "png_gray16_trns": ("png", lambda rng, h, w: png16(rng, h, w, 0, True)),
    "png_LA16": ("png", lambda rng, h, w: png16(rng, h, w, 4)),
    "png_RGB16": ("png", lambda rng, h, w: png16(rng, h, w, 2)),
    "png_RGB16_trns": ("png", lambda rng, h, w: png16(rng, h, w, 2, True)),
    "png_RGBA16": ("png", lambda rng, h, w: png16(rng, h, w, 6)),
    # JPEG (package jpeg has its own, larger corpus; these go through
    # the features path)
    "jpeg_L": ("jpg", jpeg("L")),
    "jpeg_RGB": ("jpg", jpeg("RGB")),
    "jpeg_CMYK": ("jpg", jpeg("CMYK")),
    # WebP
    "webp_lossless_RGB": ("webp", saved("RGB", "WEBP", lossless=True, method=lambda r: int(r.integers(0, 7)))),
    "webp_lossless_RGBA": ("webp", saved("RGBA", "WEBP", lossless=True, exact=True)),
    "webp_lossy_RGB": ("webp", saved("RGB", "WEBP", quality=lambda r: int(r.integers(0, 101)))),
    "webp_lossy_RGBA": ("webp", saved("RGBA", "WEBP", quality=lambda r: int(r.integers(0, 101)))),
    "webp_lossy_simple_filter": ("webp", webp_cwebp(lambda r: ["-nostrong", "-f", str(int(r.integers(1, 101)))])),
    "webp_lossy_strong_filter": ("webp", webp_cwebp(lambda r: ["-strong", "-f", str(int(r.integers(1, 101)))])),
    "webp_lossy_no_filter": ("webp", webp_cwebp(lambda r: ["-f", "0"])),
    # BMP
    "bmp_1": ("bmp", saved("1", "BMP")),
    "bmp_L": ("bmp", saved("L", "BMP")),
    "bmp_P": ("bmp", saved("P", "BMP")),
    "bmp_RGB": ("bmp", saved("RGB", "BMP")),
    "bmp_RGBA": ("bmp", saved("RGBA", "BMP")),
    "bmp_P_short_palette": ("bmp", bmp_short_palette),
    # TIFF
    "tiff_1": ("tif", tiff("1", None)),
    "tiff_L": ("tif", tiff("L", None)),
    "tiff_L_lzw": ("tif", tiff("L", "tiff_lzw")),
    "tiff_L_deflate": ("tif", tiff("L", "tiff_adobe_deflate")),
    "tiff_RGB": ("tif", tiff("RGB", None)),
    "tiff_RGB_lzw": ("tif", tiff("RGB", "tiff_lzw")),
    "tiff_RGB_deflate": ("tif", tiff("RGB", "tiff_deflate")),
    "tiff_RGB_packbits": ("tif", tiff("RGB", "packbits")),
    "tiff_P": ("tif", tiff("P", None)),
    "tiff_RGBA": ("tif", tiff("RGBA", "tiff_lzw")),
    "tiff_RGBA_associated": ("tif", lambda rng, h, w: tiff_associated(rng, h, w, None)),
    "tiff_LA": ("tif", tiff("LA", None)),
    "tiff_I16": ("tif", tiff("I;16", None)),
    "tiff_CMYK": ("tif", lambda rng, h, w: tiff_cmyk(rng, h, w)),
    # PGM and PPM
    "pgm_255": ("pgm", saved("L", "PPM")),
    "pgm_65535": ("pgm", lambda rng, h, w: pnm(rng, h, w, 1, 65535)),
    "pgm_maxval": ("pgm", lambda rng, h, w: pnm(rng, h, w, 1, int(rng.integers(1, 255)), True)),
    "pgm_maxval16": ("pgm", lambda rng, h, w: pnm(rng, h, w, 1, int(rng.integers(256, 65535)), True)),
    "ppm_255": ("ppm", saved("RGB", "PPM")),
    "ppm_maxval": ("ppm", lambda rng, h, w: pnm(rng, h, w, 3, int(rng.integers(1, 255)), True)),
    "ppm_maxval16": ("ppm", lambda rng, h, w: pnm(rng, h, w, 3, int(rng.integers(256, 65536)), True)),
}


# Cases PIL decodes and genlens refuses (network/features' notRead says
# why): no fixture is kept for them.
NOT_READ = {"tiff_LA", "tiff_CMYK"}


def size(rng, small):
    if small:
        return int(rng.integers(1, 12)), int(rng.integers(1, 12))
    r = rng.random()
    if r < 0.15:  # tiny: 1 to 3 pixels a side
        return int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if r < 0.9:
        return int(rng.integers(1, 80)), int(rng.integers(1, 80))
    return int(rng.integers(80, 260)), int(rng.integers(80, 260))


def write_cases(d, n, seed, small):
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(seed)
    names = []
    for i in range(n):
        for case, (ext, make) in CASES.items():
            if small and case in NOT_READ:
                continue
            if small:
                # Each fixture from its own stream: adding a case leaves
                # the others' bytes alone.
                rng = np.random.default_rng([seed, zlib.crc32(case.encode())])
            h, w = size(rng, small)
            name = f"{case}_{i}.{ext}" if n > 1 else f"{case}.{ext}"
            with open(os.path.join(d, name), "wb") as f:
                f.write(make(rng, h, w))
            names.append(name)
    return names


EXTS = (".png", ".jpg", ".webp", ".bmp", ".tif", ".pgm", ".ppm")


def decode(d):
    for name in sorted(os.listdir(d)):
        if not name.endswith(EXTS):
            continue
        p = os.path.join(d, name)
        try:
            with Image.open(p) as im:
                rgb = im.convert("RGB")
            out = b"%d %d\n" % rgb.size + rgb.tobytes()
            with open(p + ".rgb", "wb") as f:
                f.write(out)
        except Exception as e:  # noqa: BLE001 - the message is the oracle
            with open(p + ".err", "w") as f:
                f.write(f"{type(e).__name__}: {e}\n")


def fixtures(d):
    names = write_cases(d, 1, 20240601, True)
    lines = []
    for name in names:
        with Image.open(os.path.join(d, name)) as im:
            rgb = im.convert("RGB")
        raw = rgb.tobytes()
        line = f"{name} {rgb.size[0]}x{rgb.size[1]} {hashlib.sha256(raw).hexdigest()}"
        if rgb.size[0] * rgb.size[1] <= 16:
            line += " " + raw.hex()
        lines.append(line)
    with open(os.path.join(d, "expected.txt"), "w") as f:
        f.write("# name WxH sha256(RGB) [RGB hex]: Image.open(name).convert(\"RGB\"), Pillow 9.4\n")
        f.write("\n".join(lines) + "\n")


def scans500(out):
    """testdata/scans500.jpg: a valid progressive JPEG of exactly 500 scans,
    the most MaxJPEGScans allows (cjpeg's scan scripts stop at 100). A flat
    48x32 grey image, every DCT coefficient zero, written by hand: one
    Huffman code per table ("0": DC category 0; AC EOB run of 16-31
    blocks), so a scan is its header and one to three bytes. The DC scan,
    then for each of the 63 AC coefficients a first scan at a point
    transform Al and Al refinement scans: 33 coefficients at Al=13, one at
    7, the rest at 0 (63 + 33*13 + 7 = 499 AC scans). PIL decodes it to
    grey 128."""
    w, h, blocks = 48, 32, 24

    def seg(marker, body):
        return bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body

    def sos(ss, se, ah, al, data):
        return seg(0xDA, bytes([1, 1, 0x00, ss, se, ah << 4 | al])) + data

    one_code = bytes([1] + [0] * 15)
    f = bytearray(b"\xff\xd8")
    f += seg(0xDB, bytes([0]) + bytes([1] * 64))
    f += seg(0xC2, bytes([8]) + struct.pack(">HH", h, w) + bytes([1, 1, 0x11, 0]))
    f += seg(0xC4, bytes([0x00]) + one_code + bytes([0x00]))  # DC: category 0
    f += seg(0xC4, bytes([0x10]) + one_code + bytes([0x40]))  # AC: EOB run 16+
    # DC first scan: 24 blocks of code "0"; AC scans: "0" then the run's
    # four extra bits (24 - 16 = 8), padded with ones: 0b01000111.
    f += sos(0, 0, 0, 0, bytes(blocks // 8))
    scans = 1
    for k in range(1, 64):
        al = 13 if k <= 33 else 7 if k == 34 else 0
        f += sos(k, k, 0, al, b"\x47")
        for ah in range(al, 0, -1):
            f += sos(k, k, ah, ah - 1, b"\x47")
        scans += 1 + al
    assert scans == 500, scans
    f += b"\xff\xd9"
    with open(out, "wb") as fo:
        fo.write(f)
    im = Image.open(out)
    a = np.asarray(im.convert("RGB"))
    assert a.shape == (h, w, 3) and (a == 128).all(), a


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "decode":
        decode(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "random":
        write_cases(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), False)
    elif len(sys.argv) == 3 and sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "scans500":
        scans500(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
