#!/usr/bin/env python3
"""Random-weight fixtures for package deberta (written for genlens).

A tiny DeBERTa (v1) sequence classifier restating the math of Hugging
Face's modeling_deberta.py (read to learn): embeddings with LayerNorm and
the padding mask, disentangled self-attention (in_proj laid out per head
as q,k,v; q_bias, v_bias; c2p and p2c scores from the relative position
embeddings; scale sqrt(d·3)), the masked softmax, the ContextPooler
(dense + GELU on the first token) and the classifier. Tested with
Debian's python3-torch 1.13.

Writes tiny.bin (torch.save state dict, Hugging Face key names),
tiny.safetensors (the format written by hand: 8-byte little-endian
header length, JSON header, raw data), config.json, and expected.npz
(ids, mask and logits of a batch of pairs, padded to the longest).
vocab.json and merges.txt are package bpe's made files.
Run from this directory:  /usr/bin/python3 make_fixtures.py
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bpe", "testdata"))
import make_fixtures as bperef  # noqa: E402

torch.manual_seed(20261128)
H, LAYERS, HEADS, INTER, MAXPOS, MAXREL = 32, 2, 4, 64, 64, 8
EPS = 1e-7


def ln(x, w, b):
    m = x.mean(-1, keepdim=True)
    v = (x - m).pow(2).mean(-1, keepdim=True)
    return w * ((x - m) / torch.sqrt(v + EPS)) + b


def gelu(x):
    return torch.nn.functional.gelu(x)


def heads(x):
    B, L, _ = x.shape
    return x.view(B, L, HEADS, -1).permute(0, 2, 1, 3)


def forward(sd, ids, mask):
    B, L = ids.shape
    x = sd["deberta.embeddings.word_embeddings.weight"][ids]
    x = ln(x, sd["deberta.embeddings.LayerNorm.weight"], sd["deberta.embeddings.LayerNorm.bias"])
    x = x * mask.unsqueeze(2).float()
    am = mask.unsqueeze(1).unsqueeze(2)
    am = (am * am.squeeze(-2).unsqueeze(-1)).bool()  # B,1,L,L
    rel = torch.arange(L)[:, None] - torch.arange(L)[None, :]
    span = min(L, MAXREL)
    relemb = sd["deberta.encoder.rel_embeddings.weight"][MAXREL - span:MAXREL + span]
    for i in range(LAYERS):
        p = "deberta.encoder.layer.%d." % i
        qkv = heads(x @ sd[p + "attention.self.in_proj.weight"].t())
        q, k, v = qkv.chunk(3, dim=-1)
        q = q + heads(sd[p + "attention.self.q_bias"][None, None, :])
        v = v + heads(sd[p + "attention.self.v_bias"][None, None, :])
        scale = math.sqrt(q.size(-1) * 3)
        q = q / scale
        s = q @ k.transpose(-1, -2)
        pk = heads((relemb @ sd[p + "attention.self.pos_proj.weight"].t()).unsqueeze(0))
        c2p = q @ pk.transpose(-1, -2)
        idx = torch.clamp(rel + span, 0, 2 * span - 1).expand(B, HEADS, L, L)
        s = s + torch.gather(c2p, -1, idx)
        pq = heads((relemb @ sd[p + "attention.self.pos_q_proj.weight"].t() + sd[p + "attention.self.pos_q_proj.bias"]).unsqueeze(0))
        pq = pq / scale
        p2c = k @ pq.transpose(-1, -2)
        idx2 = torch.clamp(-rel + span, 0, 2 * span - 1).expand(B, HEADS, L, L)
        s = s + torch.gather(p2c, -1, idx2).transpose(-1, -2)
        s = s.masked_fill(~am, torch.finfo(s.dtype).min)
        pr = torch.softmax(s, -1).masked_fill(~am, 0)
        ctx = (pr @ v).permute(0, 2, 1, 3).reshape(B, L, H)
        a = ctx @ sd[p + "attention.output.dense.weight"].t() + sd[p + "attention.output.dense.bias"]
        x = ln(a + x, sd[p + "attention.output.LayerNorm.weight"], sd[p + "attention.output.LayerNorm.bias"])
        u = gelu(x @ sd[p + "intermediate.dense.weight"].t() + sd[p + "intermediate.dense.bias"])
        o = u @ sd[p + "output.dense.weight"].t() + sd[p + "output.dense.bias"]
        x = ln(o + x, sd[p + "output.LayerNorm.weight"], sd[p + "output.LayerNorm.bias"])
    pooled = gelu(x[:, 0] @ sd["pooler.dense.weight"].t() + sd["pooler.dense.bias"])
    return pooled @ sd["classifier.weight"].t() + sd["classifier.bias"]


def encode(text, vocab, ranks):
    out = []
    for w in bperef.words(text):
        for piece in bperef.bpe(w, ranks):
            out.append(vocab.get(piece, vocab["[UNK]"]))
    return out


def save_safetensors(path, sd):
    header, blobs, off = {}, [], 0
    for k in sorted(sd):
        a = sd[k].numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(sd[k].shape), "data_offsets": [off, off + len(a)]}
        blobs.append(a)
        off += len(a)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def main():
    vocab = json.load(open("vocab.json", encoding="utf-8"))
    merges = [tuple(l.rstrip("\n").split(" ")) for l in open("merges.txt", encoding="utf-8").readlines()[1:]]
    ranks = {m: i for i, m in enumerate(merges)}
    V = max(vocab.values()) + 1
    r = lambda *s: torch.randn(*s) * 0.2
    sd = {
        "deberta.embeddings.word_embeddings.weight": r(V, H),
        "deberta.embeddings.LayerNorm.weight": 1 + r(H),
        "deberta.embeddings.LayerNorm.bias": r(H),
        "deberta.encoder.rel_embeddings.weight": r(2 * MAXREL, H),
        "pooler.dense.weight": r(H, H), "pooler.dense.bias": r(H),
        "classifier.weight": r(3, H), "classifier.bias": r(3),
    }
    for i in range(LAYERS):
        p = "deberta.encoder.layer.%d." % i
        sd.update({
            p + "attention.self.in_proj.weight": r(3 * H, H),
            p + "attention.self.q_bias": r(H), p + "attention.self.v_bias": r(H),
            p + "attention.self.pos_proj.weight": r(H, H),
            p + "attention.self.pos_q_proj.weight": r(H, H), p + "attention.self.pos_q_proj.bias": r(H),
            p + "attention.output.dense.weight": r(H, H), p + "attention.output.dense.bias": r(H),
            p + "attention.output.LayerNorm.weight": 1 + r(H), p + "attention.output.LayerNorm.bias": r(H),
            p + "intermediate.dense.weight": r(INTER, H), p + "intermediate.dense.bias": r(INTER),
            p + "output.dense.weight": r(H, INTER), p + "output.dense.bias": r(H),
            p + "output.LayerNorm.weight": 1 + r(H), p + "output.LayerNorm.bias": r(H),
        })
    pairs = [
        ("The capital of France is Paris.", "Paris is the capital of France."),
        ("It's 1969.", "Apollo 11 landed, they're sure — the answer is forty-two, or 42, we've been told."),
        ("A dog.", "A cat."),
        ("Москва 東京 🙂", "x" * 1 + " mixed\tscripts"),
    ]
    rows = []
    for a, b in pairs:
        rows.append([vocab["[CLS]"]] + encode(a, vocab, ranks) + [vocab["[SEP]"]] + encode(b, vocab, ranks) + [vocab["[SEP]"]])
    L = max(len(x) for x in rows)
    ids = np.zeros((len(rows), L), dtype=np.int64)
    mask = np.zeros((len(rows), L), dtype=np.int64)
    for i, x in enumerate(rows):
        ids[i, :len(x)] = x
        mask[i, :len(x)] = 1
    with torch.no_grad():
        logits = forward(sd, torch.tensor(ids), torch.tensor(mask))
        single = torch.cat([forward(sd, torch.tensor(ids[i:i + 1, :len(x)]), torch.tensor(mask[i:i + 1, :len(x)])) for i, x in enumerate(rows)])
    assert torch.allclose(logits, single, atol=1e-5), "padding changed the logits"
    torch.save(sd, "tiny.bin")
    save_safetensors("tiny.safetensors", sd)
    cfg = {
        "model_type": "deberta", "architectures": ["DebertaForSequenceClassification"],
        "hidden_size": H, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "intermediate_size": INTER,
        "hidden_act": "gelu", "max_position_embeddings": MAXPOS, "max_relative_positions": MAXREL,
        "relative_attention": True, "pos_att_type": "c2p|p2c", "position_biased_input": False,
        "type_vocab_size": 0, "layer_norm_eps": EPS, "vocab_size": V, "pad_token_id": 0,
        "id2label": {"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"},
        "label2id": {"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2},
    }
    json.dump(cfg, open("config.json", "w"), indent=2)
    np.savez("expected.npz", ids=ids, mask=mask, logits=logits.numpy().astype(np.float64),
             )
    json.dump([{"premise": a, "hypothesis": b} for a, b in pairs], open("pairs.json", "w", encoding="utf-8"), ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main()
