#!/usr/bin/env python3
"""Token-id fixtures for package bpe (written for genlens).

Restates GPT-2's byte-level BPE as openai/gpt-2 src/encoder.py and
Hugging Face's GPT-2/DeBERTa tokenizers run it (read to learn): the
bytes-to-unicode table, the pre-tokenisation pattern run by the `regex`
module (Debian python3-regex), and the rank-ordered merges. The merges
are learnt here from a small mixed-script corpus, so that vocab.json and
merges.txt are small and made, not GPT-2's. Two merged tokens are left
out of the vocabulary to exercise [UNK].

Writes vocab.json, merges.txt and cases.json (text and expected ids).
Run from this directory:  /usr/bin/python3 make_fixtures.py
"""
import collections
import json

import regex

PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()


def words(text):
    return ["".join(B2U[b] for b in w.encode("utf-8")) for w in PAT.findall(text)]


CORPUS = """The quick brown fox jumps over the lazy dog. It's the dog's bone; they're sure we've
got it, I'm told, you'll see, he'd know. Paris is the capital of France. The answer is 42,
or 1969 — when Apollo 11 landed. Ünïcödé naïve café résumé. Москва — столица России.
東京は日本の首都です。 北京是中国的首都。 مرحبا بالعالم. नमस्ते दुनिया. 🙂🚀 emoji!!
    indented   spaces\tand\ttabs\n\nnew lines. """ * 3


def learn(n_merges):
    counts = collections.Counter(tuple(w) for w in words(CORPUS))
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter()
        for w, c in counts.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        best = max(sorted(pairs), key=lambda p: pairs[p])
        merges.append(best)
        new = collections.Counter()
        for w, c in counts.items():
            new[tuple(merge_word(list(w), best))] += c
        counts = new
    return merges


def merge_word(word, pair):
    out, i = [], 0
    while i < len(word):
        if i < len(word) - 1 and word[i] == pair[0] and word[i + 1] == pair[1]:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def bpe(token, ranks):
    word = list(token)
    while len(word) > 1:
        pairs = set(zip(word, word[1:]))
        best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        word = merge_word(word, best)
    return word


def main():
    merges = learn(300)
    ranks = {m: i for i, m in enumerate(merges)}
    vocab = {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[UNK]": 3}
    for c in sorted(set(B2U.values())):
        vocab[c] = len(vocab)
    dropped = {merges[-1][0] + merges[-1][1], merges[-5][0] + merges[-5][1]}
    for a, b in merges:
        if a + b not in vocab and a + b not in dropped:
            vocab[a + b] = len(vocab)
    texts = [
        "",
        "The quick brown fox jumps over the lazy dog.",
        "It's the dog's bone; they're sure we've got it, I'm told, you'll see, he'd know.",
        "IT'S LOUD, 'tis 'Ll 'S",
        "Paris is the capital of France.",
        "   leading and trailing   ",
        "tabs\tand\t\t\tmore\n\n\nnew lines\r\n",
        "control \x00\x01\x07\x1b[31m chars \x7f\x1c\x1d\x1e\x1f end",
        "mixed Москва 東京 北京 مرحبا नमस्ते Ünïcödé",
        "emoji 🙂🚀👩‍👩‍👧 flags 🇫🇷 and keycap 1️⃣",
        "numbers 1969 ½ ² Ⅻ ٣٤ and 3.14159",
        "a\ufffdb \ufffd\ufffd replacement",
        "nbsp\u00a0here\u2003em\u3000ideo\u2028line\u0085nel",
        "[CLS] literal [SEP] tokens [PAD]",
        "zero\u200bwidth\u200djoin",
        "word " * 300 + "end",
        "x" * 2000,
        CORPUS,
    ]
    cases = []
    for t in texts:
        ids = []
        for w in words(t):
            for p in bpe(w, ranks):
                ids.append(vocab.get(p, vocab["[UNK]"]))
        cases.append({"text": t, "ids": ids})
    with open("vocab.json", "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open("merges.txt", "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(a + " " + b + "\n")
    with open("cases.json", "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main()
