#!/usr/bin/env python3
"""Random-weight fixtures for package vit (written for genlens).

Builds SMALL configurations of the two reference architectures with
PyTorch (tested with Debian's python3-torch 1.13), gives them random
weights, runs them on random uint8 images and saves, per network:

  <name>.pth        state dict with the reference key names (torch.save)
  <name>.npz        images (uint8, N×3×S×S), inputs as fed (float32),
                    expected outputs (float64 copies of the float32 features)

plus clip_small.safetensors (the CLIP weights under Hugging Face's key
names), clip_torchscript.pt (a half-precision TorchScript archive, the
form of OpenAI's released .pt files), preprocess.npz (Pillow's side of
the presets) and interp.npz (the positional-embedding resize on its own, at the
released 37×37 → 16×16 sizes).

The modules below restate the math of the reference code, read from:
  facebookresearch/dinov2  dinov2/models/vision_transformer.py
                           dinov2/layers/{patch_embed,attention,block,
                           layer_scale,mlp,swiglu_ffn}.py, hub/backbones.py
  openai/CLIP              clip/model.py (VisionTransformer,
                           ResidualAttentionBlock, QuickGELU, LayerNorm)
CLIP's blocks use torch's own nn.MultiheadAttention, as the reference does.

Run from this directory:  python3 make_fixtures.py
"""
import json
import math
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(20241126)
np.random.seed(20241126)

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


# ---------------------------------------------------------------- DINOv2
class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim, bias=True)
        self.proj = nn.Linear(dim, dim, bias=True)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class LayerScale(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class SwiGLUFFN(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        hidden = (int(hidden * 2 / 3) + 7) // 8 * 8  # SwiGLUFFNFused
        self.w12 = nn.Linear(dim, 2 * hidden)
        self.w3 = nn.Linear(hidden, dim)

    def forward(self, x):
        x1, x2 = self.w12(x).chunk(2, dim=-1)
        return self.w3(F.silu(x1) * x2)


class Block(nn.Module):
    def __init__(self, dim, heads, swiglu):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.ls1 = LayerScale(dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = SwiGLUFFN(dim, 4 * dim) if swiglu else Mlp(dim, 4 * dim)
        self.ls2 = LayerScale(dim)

    def forward(self, x):
        x = x + self.ls1(self.attn(self.norm1(x)))
        return x + self.ls2(self.mlp(self.norm2(x)))


class PatchEmbed(nn.Module):
    def __init__(self, patch, dim):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class Dino(nn.Module):
    def __init__(self, img_size, patch, dim, depth, heads, swiglu=False):
        super().__init__()
        self.patch_size = patch
        self.patch_embed = PatchEmbed(patch, dim)
        n = (img_size // patch) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, n + 1, dim))
        self.blocks = nn.ModuleList([Block(dim, heads, swiglu) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.mask_token = nn.Parameter(torch.zeros(1, dim))
        self.interpolate_offset = 0.1

    def interpolate_pos_encoding(self, x, w, h):
        npatch = x.shape[1] - 1
        N = self.pos_embed.shape[1] - 1
        if npatch == N and w == h:
            return self.pos_embed
        pos = self.pos_embed.float()
        cls_pos, patch_pos = pos[:, 0], pos[:, 1:]
        dim = x.shape[-1]
        w0, h0 = w // self.patch_size, h // self.patch_size
        M = int(math.sqrt(N))
        sx = float(w0 + self.interpolate_offset) / M
        sy = float(h0 + self.interpolate_offset) / M
        patch_pos = F.interpolate(
            patch_pos.reshape(1, M, M, dim).permute(0, 3, 1, 2),
            mode="bicubic", antialias=False, scale_factor=(sx, sy))
        assert (w0, h0) == patch_pos.shape[-2:]
        patch_pos = patch_pos.permute(0, 2, 3, 1).view(1, -1, dim)
        return torch.cat((cls_pos.unsqueeze(0), patch_pos), dim=1)

    def forward(self, x):
        B, nc, w, h = x.shape
        x = self.patch_embed(x)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
        x = x + self.interpolate_pos_encoding(x, w, h)
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)[:, 0]  # x_norm_clstoken


# ------------------------------------------------------------------ CLIP
class QuickGELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class ResidualAttentionBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads)
        self.ln_1 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(
            __import__("collections").OrderedDict(
                [("c_fc", nn.Linear(d, 4 * d)), ("gelu", QuickGELU()), ("c_proj", nn.Linear(4 * d, d))]))
        self.ln_2 = nn.LayerNorm(d)

    def forward(self, x):
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, width, layers, heads):
        super().__init__()
        self.resblocks = nn.Sequential(*[ResidualAttentionBlock(width, heads) for _ in range(layers)])

    def forward(self, x):
        return self.resblocks(x)


class ClipVisual(nn.Module):
    def __init__(self, res, patch, width, layers, heads, out):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, kernel_size=patch, stride=patch, bias=False)
        self.class_embedding = nn.Parameter(torch.randn(width))
        self.positional_embedding = nn.Parameter(torch.randn((res // patch) ** 2 + 1, width))
        self.ln_pre = nn.LayerNorm(width)
        self.transformer = Transformer(width, layers, heads)
        self.ln_post = nn.LayerNorm(width)
        self.proj = nn.Parameter(torch.randn(width, out))

    def forward(self, x):
        x = self.conv1(x)
        x = x.reshape(x.shape[0], x.shape[1], -1).permute(0, 2, 1)
        x = torch.cat([self.class_embedding + torch.zeros(x.shape[0], 1, x.shape[-1]), x], dim=1)
        x = x + self.positional_embedding
        x = self.ln_pre(x)
        x = self.transformer(x.permute(1, 0, 2)).permute(1, 0, 2)
        return self.ln_post(x[:, 0, :]) @ self.proj


class ClipModel(nn.Module):  # only the vision tower, under "visual."
    def __init__(self, **kw):
        super().__init__()
        self.visual = ClipVisual(**kw)


# --------------------------------------------------------------- helpers
def randomise(model):
    """Weights of a size that exercises every term (the reference inits
    leave LayerScale at 1 and biases at 0)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "mask_token" in name:
                continue
            if name.endswith("norm1.weight") or name.endswith("norm2.weight") or "ln_" in name and name.endswith("weight") or name == "norm.weight":
                p.copy_(1 + 0.2 * torch.randn_like(p))
            elif name.endswith("gamma"):
                p.copy_(0.5 + torch.rand_like(p))
            elif p.dim() >= 2 and "pos" not in name:
                p.copy_(torch.randn_like(p) / math.sqrt(p[0].numel()))
            else:
                p.copy_(0.3 * torch.randn_like(p))


def images(n, side):
    return np.random.randint(0, 256, size=(n, 3, side, side), dtype=np.uint8)


def normalise(img, mean, std):
    x = torch.from_numpy(img).float() / 255
    m = torch.tensor(mean).view(1, 3, 1, 1)
    s = torch.tensor(std).view(1, 3, 1, 1)
    return (x - m) / s


def dino_fixture(name, train_img, inputs, **kw):
    model = Dino(img_size=train_img, **kw).eval()
    randomise(model)
    torch.save(model.state_dict(), name + ".pth")
    arrays = {}
    for side in inputs:
        img = images(2, side)
        x = normalise(img, IMAGENET_MEAN, IMAGENET_STD)
        with torch.no_grad():
            y = model(x)
        arrays["images_%d" % side] = img
        arrays["out_%d" % side] = y.double().numpy()
    np.savez_compressed(name + ".npz", **arrays)


def safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for k, t in tensors.items():
        b = t.contiguous().float().numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def hf_names(sd, width):
    """OpenAI's CLIP vision keys under Hugging Face's CLIPModel names."""
    out = {}
    v = "vision_model."
    out[v + "embeddings.class_embedding"] = sd["visual.class_embedding"]
    out[v + "embeddings.patch_embedding.weight"] = sd["visual.conv1.weight"]
    out[v + "embeddings.position_embedding.weight"] = sd["visual.positional_embedding"]
    for a, b in (("pre_layrnorm", "ln_pre"), ("post_layernorm", "ln_post")):
        out[v + a + ".weight"] = sd["visual." + b + ".weight"]
        out[v + a + ".bias"] = sd["visual." + b + ".bias"]
    i = 0
    while "visual.transformer.resblocks.%d.ln_1.weight" % i in sd:
        o, h = "visual.transformer.resblocks.%d." % i, v + "encoder.layers.%d." % i
        W, B = sd[o + "attn.in_proj_weight"], sd[o + "attn.in_proj_bias"]
        for j, p in enumerate("qkv"):
            out[h + "self_attn.%s_proj.weight" % p] = W[j * width:(j + 1) * width]
            out[h + "self_attn.%s_proj.bias" % p] = B[j * width:(j + 1) * width]
        out[h + "self_attn.out_proj.weight"] = sd[o + "attn.out_proj.weight"]
        out[h + "self_attn.out_proj.bias"] = sd[o + "attn.out_proj.bias"]
        for a, b in (("layer_norm1", "ln_1"), ("layer_norm2", "ln_2"), ("mlp.fc1", "mlp.c_fc"), ("mlp.fc2", "mlp.c_proj")):
            out[h + a + ".weight"] = sd[o + b + ".weight"]
            out[h + a + ".bias"] = sd[o + b + ".bias"]
        i += 1
    out["visual_projection.weight"] = sd["visual.proj"].t()
    out["logit_scale"] = torch.tensor(4.6052)
    return out


def clip_fixture(name, side, **kw):
    model = ClipModel(res=side, **kw).eval()
    randomise(model)
    sd = model.state_dict()
    torch.save(sd, name + ".pth")
    safetensors(name + ".safetensors", hf_names(sd, kw["width"]))
    img = images(2, side)
    x = normalise(img, CLIP_MEAN, CLIP_STD)
    with torch.no_grad():
        y = model.visual(x)
    np.savez_compressed(name + ".npz", images=img, out=y.double().numpy(),
                        out_normalized=(y / y.norm(dim=-1, keepdim=True)).double().numpy())


class ClipTraced(nn.Module):
    """Only for tracing: a module whose forward is encode_image."""

    def __init__(self, model):
        super().__init__()
        self.visual = model.visual

    def forward(self, x):
        return self.visual(x)


def torchscript_fixture(name, side, **kw):
    """A TorchScript archive in half precision, as OpenAI releases CLIP
    (torch.jit.save of a traced module; clip.load(jit=False) reads its
    parameters and, on CPU, converts them to float32)."""
    model = ClipModel(res=side, **kw).eval()
    randomise(model)
    x0 = torch.zeros(1, 3, side, side)
    traced = torch.jit.trace(ClipTraced(model).eval(), x0).half()
    torch.jit.save(traced, name + ".pt")
    model.half().float()
    img = images(2, side)
    x = normalise(img, CLIP_MEAN, CLIP_STD)
    with torch.no_grad():
        y = model.visual(x)
    np.savez_compressed(name + ".npz", images=img, out=y.double().numpy())


def interp_fixture():
    """The released resize: a 37×37 grid to 16×16 with scale (16+0.1)/37."""
    M, g, c = 37, 16, 3
    src = torch.randn(1, c, M, M)
    s = float(g + 0.1) / M
    dst = F.interpolate(src, mode="bicubic", antialias=False, scale_factor=(s, s))
    np.savez_compressed("interp.npz", src=src[0].permute(1, 2, 0).double().numpy(),
                        dst=dst[0].permute(1, 2, 0).double().numpy())


def preprocess_fixture():
    """Pillow's side of the presets, at a 28-px input: dgm-eval (resize to
    side×side), CLIP's transform (short side to side, long side to
    int(side·long/short), centre crop with Python round) and CMMD's
    (centre crop to a square with floor offsets, resize). The crop and
    size arithmetic restate torchvision's Resize/CenterCrop and CMMD's
    _center_crop_and_resize; the resizing is Pillow's own."""
    from PIL import Image
    side, out = 28, {}
    for i, (w, h) in enumerate(((45, 30), (31, 52), (20, 20))):
        a = np.random.randint(0, 256, size=(h, w, 3), dtype=np.uint8)
        im = Image.fromarray(a, "RGB")
        out["src_%d" % i] = a.transpose(2, 0, 1)
        out["dgm_%d" % i] = np.asarray(im.resize((side, side), Image.BICUBIC)).transpose(2, 0, 1)
        short, long = min(w, h), max(w, h)
        ns, nl = side, int(side * long / short)
        ow, oh = (ns, nl) if w <= h else (nl, ns)
        r = im.resize((ow, oh), Image.BICUBIC)
        top, left = int(round((oh - side) / 2.0)), int(round((ow - side) / 2.0))
        out["clip_%d" % i] = np.asarray(r.crop((left, top, left + side, top + side))).transpose(2, 0, 1)
        l = min(w, h)
        t, le = (h - l) // 2, (w - l) // 2
        c = im.crop((le, t, le + l, t + l)).resize((side, side), Image.BICUBIC)
        out["cmmd_%d" % i] = np.asarray(c).transpose(2, 0, 1)
    np.savez_compressed("preprocess.npz", **out)


if __name__ == "__main__":
    torch.set_num_threads(1)
    # Positional embedding trained on a 7×7 grid (98 px), run at 56 px
    # (4×4, interpolated) and 98 px (as stored).
    dino_fixture("dinov2_small", 98, (56, 98), patch=14, dim=32, depth=2, heads=2)
    dino_fixture("dinov2_swiglu", 98, (56,), patch=14, dim=16, depth=2, heads=2, swiglu=True)
    clip_fixture("clip_small", 56, patch=14, width=32, layers=2, heads=2, out=24)
    interp_fixture()
    preprocess_fixture()
    torchscript_fixture("clip_torchscript", 56, patch=14, width=32, layers=2, heads=2, out=24)
