#!/usr/bin/env python3
"""PyTorch's side of the genlens / PyTorch / ONNX Runtime speed comparison.

Builds each network from the public reference code (paths given on the
command line; nothing of it is copied here), with the random weights
genlens loads, and:

  images    writes random PNG images at the network's input side
  export    writes the weights genlens loads (the ViTs: a state dict made
            here; Inception-v3: the given FID-layout .pth), the ONNX graph
            ONNX Runtime runs, PyTorch's images/s at the given thread
            count, and PyTorch's features of an image folder (the
            reference for genlens's fidelity)
  compare   prints the largest |genlens − PyTorch| over the features,
            relative to the largest PyTorch feature

Run by run.sh; see README.md.
"""
import argparse
import importlib.util
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
CLIP = ((0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711))

# name: (family, reference constructor, input side, mean/std or None)
NETS = {
    "inception": ("inception", None, 299, None),
    "dinov2-vits14": ("dinov2", "dinov2_vits14", 224, IMAGENET),
    "dinov2-vitb14": ("dinov2", "dinov2_vitb14", 224, IMAGENET),
    "dinov2-vitl14": ("dinov2", "dinov2_vitl14", 224, IMAGENET),
    "clip-vitb32": ("clip", (224, 32, 768, 12, 12, 512), 224, CLIP),
}


def sdpa_for_old_torch():
    """DINOv2's current attention calls F.scaled_dot_product_attention,
    which torch 1.13 lacks: the same math (softmax(q·kᵀ·scale)·v) in
    plain operations, which ONNX export also understands."""
    if hasattr(F, "scaled_dot_product_attention"):
        return

    def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        s = scale if scale is not None else q.shape[-1] ** -0.5
        return torch.softmax((q * s) @ k.transpose(-2, -1), dim=-1) @ v

    F.scaled_dot_product_attention = sdpa


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Pool3(torch.nn.Module):
    """pytorch-fid's InceptionV3 returning the 2048 pool3 features."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)[0].flatten(1)


class ImageOnly(torch.nn.Module):
    """The network as a function of the image batch alone, so that the
    exported graph has that one input (DINOv2's forward also takes masks)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)


def randomise_gains(model, seed):
    """LayerNorm gains and shifts and LayerScale gammas start at 1 and 0
    (or a constant): give them random values so that every parameter
    matters to the comparison."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if "norm" in name or ".ln_" in name or name.startswith("ln_") or leaf == "gamma":
                base = 1.0 if leaf in ("weight", "gamma") else 0.0
                p.copy_(base + 0.1 * torch.randn(p.shape, generator=g))


def build(args, name):
    family, ref, side, _ = NETS[name]
    torch.manual_seed(0)
    if family == "inception":
        sys.path.insert(0, os.path.join(args.fid_repo, "src"))
        from pytorch_fid import inception as fid

        # fid_inception_v3 downloads the published weights: hand it the
        # random ones genlens's fixtures use instead.
        fid.load_state_dict_from_url = lambda *a, **k: torch.load(args.inception_weights, map_location="cpu")
        net = Pool3(fid.InceptionV3([3], resize_input=True, normalize_input=True))
        return net.eval(), args.inception_weights
    if family == "dinov2":
        os.environ.setdefault("XFORMERS_DISABLED", "1")
        sdpa_for_old_torch()
        sys.path.insert(0, args.dinov2_repo)
        from dinov2.hub import backbones

        net = getattr(backbones, ref)(pretrained=False)
    else:
        model = load_module("clip_model", os.path.join(args.clip_repo, "clip", "model.py"))
        res, patch, width, layers, heads, out = ref
        net = model.VisionTransformer(input_resolution=res, patch_size=patch, width=width, layers=layers, heads=heads, output_dim=out)
    randomise_gains(net, 1)
    net.eval()
    weights = os.path.join(args.out, "weights.pth")
    torch.save(net.state_dict(), weights)
    return ImageOnly(net).eval(), weights


def read_images(folder, name):
    """The reference preprocessing of images already at the input side
    (every resize is then the identity): RGB values /255, then the
    network's normalisation (pytorch-fid: 2x − 1 inside the module)."""
    from PIL import Image

    _, _, side, norm = NETS[name]
    files = sorted(f for f in os.listdir(folder) if f.endswith(".png"))
    x = np.stack([np.asarray(Image.open(os.path.join(folder, f)).convert("RGB"), dtype=np.float32) for f in files])
    x = torch.from_numpy(x).permute(0, 3, 1, 2) / 255
    assert x.shape[2] == side and x.shape[3] == side
    if norm is not None:
        mean, std = (torch.tensor(v).view(1, 3, 1, 1) for v in norm)
        x = (x - mean) / std
    return x


def cmd_images(args):
    from PIL import Image

    os.makedirs(args.dir, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    side = NETS[args.net][2]
    for i in range(args.n):
        # Smooth random images (noise at 1/8 resolution, upsampled), so
        # decoding costs what a photograph's would rather than noise's.
        small = rng.integers(0, 256, size=(side // 8 + 1, side // 8 + 1, 3), dtype=np.uint8)
        img = Image.fromarray(small).resize((side, side), Image.BILINEAR)
        img.save(os.path.join(args.dir, "img%05d.png" % i))


def cmd_export(args):
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(args.threads)
    net, weights = build(args, args.net)
    side = NETS[args.net][2]
    x = torch.randn(args.batch, 3, side, side)
    with torch.no_grad():
        torch.onnx.export(net, x, os.path.join(args.out, "model.onnx"), opset_version=17, input_names=["x"], output_names=["y"], do_constant_folding=True)
        ref = torch.cat([net(b) for b in read_images(args.images, args.net).split(args.batch)]) if args.images else None
        net(x)  # warm-up
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            net(x)
            times.append(time.perf_counter() - t0)
    if ref is not None:
        np.save(os.path.join(args.out, "torch_features.npy"), ref.numpy())
    json.dump({"weights": weights, "images_per_s": args.batch / (sum(times) / len(times)), "threads": torch.get_num_threads(), "torch": torch.__version__}, sys.stdout)
    print()


def cmd_compare(args):
    a, b = np.load(args.genlens).astype(np.float64), np.load(args.torch).astype(np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    print("%.2g" % (np.abs(a - b).max() / np.abs(b).max()))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("images")
    s.add_argument("net", choices=NETS)
    s.add_argument("dir")
    s.add_argument("n", type=int)
    s.add_argument("--seed", type=int, default=0)
    s = sub.add_parser("export")
    s.add_argument("net", choices=NETS)
    s.add_argument("--out", required=True)
    s.add_argument("--batch", type=int, required=True)
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("--runs", type=int, default=3)
    s.add_argument("--images", help="folder whose PyTorch features are written as torch_features.npy")
    s.add_argument("--fid-repo", default=os.environ.get("PYTORCH_FID_REPO"))
    s.add_argument("--dinov2-repo", default=os.environ.get("DINOV2_REPO"))
    s.add_argument("--clip-repo", default=os.environ.get("CLIP_REPO"))
    s.add_argument("--inception-weights", default=os.environ.get("INCEPTION_WEIGHTS"))
    s = sub.add_parser("compare")
    s.add_argument("genlens")
    s.add_argument("torch")
    args = p.parse_args()
    {"images": cmd_images, "export": cmd_export, "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    main()
