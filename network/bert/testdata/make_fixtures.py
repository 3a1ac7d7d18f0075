#!/usr/bin/env python3
"""Random-weight fixtures for package bert (written for genlens).

Builds a small BERT (2 layers, hidden 32, 4 heads, intermediate 64) in
PyTorch from the modules below, which restate the math of Hugging Face's
BertModel and BertForSequenceClassification (transformers,
src/transformers/models/bert/modeling_bert.py: BertEmbeddings,
BertSelfAttention, BertSelfOutput, BertIntermediate, BertOutput,
BertPooler) and of the poolings of the model cards (e5-small-v2: mean
over the attention mask, L2; all-MiniLM-L6-v2: sentence-transformers'
mean pooling, L2; bge-small-en-v1.5: the [CLS] state, L2). Token ids come
from the reference tokenizer of Devlin et al. (google-research/bert
tokenization.py, path given as the first argument, not part of genlens)
over ../../wordpiece/testdata/vocab.txt.

Writes, per layout (e5, minilm, bge, nli):
  <layout>/config.json, vocab.txt, model.safetensors (or
  pytorch_model.bin for minilm and nli, key prefix "bert." for nli)
  <layout>/expected.npz: ids and mask of the batch as PyTorch ran it
  (padded), and the expected outputs (emb or logits, float64 copies)

    /usr/bin/python3 make_fixtures.py /path/to/bert/tokenization.py
"""
import importlib.util
import json
import math
import os
import shutil
import struct
import sys
import types

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(20261128)

tf = types.ModuleType("tensorflow")
tf.gfile = types.SimpleNamespace(GFile=lambda p, m: open(p, m, encoding="utf-8"))
sys.modules["tensorflow"] = tf
six = types.ModuleType("six")
six.PY2, six.PY3, six.text_type, six.binary_type = False, True, str, bytes
sys.modules["six"] = six

VOCAB = "../../wordpiece/testdata/vocab.txt"
CFG = dict(hidden_size=32, num_attention_heads=4, intermediate_size=64, num_hidden_layers=2,
           max_position_embeddings=40, type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu",
           architectures=["BertModel"], model_type="bert", position_embedding_type="absolute")
MAX_LEN = CFG["max_position_embeddings"]

TEXTS = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "Café naïve résumé Ångström",
    "你好世界 means hello world",
    "emoji \U0001F600 family",
    "word " * 60,  # longer than the model: cut to 40 ids
    "",
    "how many legs does a spider have?",
]
PAIRS = [(TEXTS[0], TEXTS[1]), (TEXTS[7], "Spiders have eight legs."), (TEXTS[5], TEXTS[2]), (TEXTS[6], TEXTS[3])]


class Embeddings(nn.Module):
    def __init__(self, v, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(v, c["hidden_size"])
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], c["hidden_size"])
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, ids, types):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        return self.LayerNorm(self.word_embeddings(ids) + self.token_type_embeddings(types) + self.position_embeddings(pos))


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        w = c["hidden_size"]
        self.h = c["num_attention_heads"]
        self.query, self.key, self.value = nn.Linear(w, w), nn.Linear(w, w), nn.Linear(w, w)

    def forward(self, x, add_mask):
        b, t, w = x.shape
        dh = w // self.h
        split = lambda y: y.view(b, t, self.h, dh).permute(0, 2, 1, 3)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        s = q @ k.transpose(-1, -2) / math.sqrt(dh) + add_mask
        p = s.softmax(-1)
        return (p @ v).permute(0, 2, 1, 3).reshape(b, t, w)


class DenseNorm(nn.Module):
    """BertSelfOutput and BertOutput: dense, residual, LayerNorm."""

    def __init__(self, i, c):
        super().__init__()
        self.dense = nn.Linear(i, c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, h, x):
        return self.LayerNorm(self.dense(h) + x)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = SelfAttention(c)
        self.output = DenseNorm(c["hidden_size"], c)

    def forward(self, x, m):
        return self.output(self.self(x, m), x)


class Intermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])

    def forward(self, x):
        return F.gelu(self.dense(x))


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = DenseNorm(c["intermediate_size"], c)

    def forward(self, x, m):
        a = self.attention(x, m)
        return self.output(self.intermediate(a), a)


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])


class Pooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])

    def forward(self, h):
        return torch.tanh(self.dense(h[:, 0]))


class Bert(nn.Module):
    def __init__(self, v, c):
        super().__init__()
        self.embeddings = Embeddings(v, c)
        self.encoder = Encoder(c)
        self.pooler = Pooler(c)

    def forward(self, ids, types, mask):
        add = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        x = self.embeddings(ids, types)
        for l in self.encoder.layer:
            x = l(x, add)
        return x


class Classifier(nn.Module):
    def __init__(self, v, c, n):
        super().__init__()
        self.bert = Bert(v, c)
        self.classifier = nn.Linear(c["hidden_size"], n)

    def forward(self, ids, types, mask):
        return self.classifier(self.bert.pooler(self.bert(ids, types, mask)))


def randomize(m):
    # Larger than the init's weights, so that every layer matters.
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "LayerNorm" in name:
                p.copy_((1 if name.endswith("weight") else 0) + 0.2 * torch.randn_like(p))
            else:
                p.normal_(0, 0.3)


def save_safetensors(sd, path):
    header, blobs, off = {}, [], 0
    for k, t in sd.items():
        b = t.detach().contiguous().numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def batch(ft, encs):
    n = max(len(e[0]) for e in encs)
    ids = np.zeros((len(encs), n), np.int64)  # [PAD] is 0
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for i, (a, t) in enumerate(encs):
        ids[i, : len(a)], types[i, : len(a)], mask[i, : len(a)] = a, t, 1
    return ids, types, mask


def encode(ft, text):
    p = ft.convert_tokens_to_ids(ft.tokenize(text))[: MAX_LEN - 2]
    ids = ft.convert_tokens_to_ids(["[CLS]"]) + p + ft.convert_tokens_to_ids(["[SEP]"])
    return ids, [0] * len(ids)


def encode_pair(ft, a, b):
    x = ft.convert_tokens_to_ids(ft.tokenize(a))
    y = ft.convert_tokens_to_ids(ft.tokenize(b))
    while len(x) + len(y) > MAX_LEN - 3:
        if len(x) > len(y):
            x.pop()
        else:
            y.pop()
    cls, sep = ft.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    return [cls] + x + [sep] + y + [sep], [0] * (len(x) + 2) + [1] * (len(y) + 1)


def main():
    global tok
    spec = importlib.util.spec_from_file_location("tokenization", sys.argv[1])
    tok = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tok)
    ft = tok.FullTokenizer(VOCAB, do_lower_case=True)
    ft.wordpiece_tokenizer.max_input_chars_per_word = 100
    nvocab = len(open(VOCAB, encoding="utf-8").read().splitlines())
    for layout in ("e5", "minilm", "bge", "nli"):
        os.makedirs(layout, exist_ok=True)
        shutil.copy(VOCAB, os.path.join(layout, "vocab.txt"))
        cfg = dict(CFG, vocab_size=nvocab)
        if layout == "nli":
            # Labels in an order other than nli's, as some cross-encoders have.
            cfg["id2label"] = {"0": "ENTAILMENT", "1": "neutral", "2": "Contradiction"}
            cfg["label2id"] = {v: int(k) for k, v in cfg["id2label"].items()}
            cfg["architectures"] = ["BertForSequenceClassification"]
            m = Classifier(nvocab, cfg, 3)
        else:
            m = Bert(nvocab, cfg)
        randomize(m)
        m.eval()
        with open(os.path.join(layout, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        sd = m.state_dict()
        if layout in ("minilm", "nli"):
            torch.save(sd, os.path.join(layout, "pytorch_model.bin"))
        else:
            save_safetensors(sd, os.path.join(layout, "model.safetensors"))
        with torch.no_grad():
            if layout == "nli":
                encs = [encode_pair(ft, a, b) for a, b in PAIRS]
                ids, types, mask = batch(ft, encs)
                out = m(torch.tensor(ids), torch.tensor(types), torch.tensor(mask))
                np.savez(os.path.join(layout, "expected.npz"), ids=ids, types=types, mask=mask,
                         logits=out.double().numpy())
                continue
            texts = ["query: " + t for t in TEXTS] if layout == "e5" else TEXTS
            encs = [encode(ft, t) for t in texts]
            ids, types, mask = batch(ft, encs)
            mk = torch.tensor(mask)
            h = m(torch.tensor(ids), torch.tensor(types), mk)
            if layout == "bge":
                e = h[:, 0]
            elif layout == "e5":
                # e5's model card: average_pool
                e = h.masked_fill(~mk[..., None].bool(), 0.0).sum(1) / mk.sum(1)[..., None]
            else:
                # sentence-transformers' Pooling (mean) over the attention mask
                me = mk.unsqueeze(-1).expand(h.size()).float()
                e = (h * me).sum(1) / torch.clamp(me.sum(1), min=1e-9)
            e = F.normalize(e, p=2, dim=1)
            np.savez(os.path.join(layout, "expected.npz"), ids=ids, types=types, mask=mask,
                     emb=e.double().numpy())


if __name__ == "__main__":
    main()
