"""Expected token ids of genlens's wordpiece package, from the reference
tokenizer of Devlin et al. (google-research/bert tokenization.py).

The reference file is not part of genlens: give its path (a checkout of
github.com/google-research/bert) as the first argument. It imports
tensorflow and six only to read files and to tell text from bytes; both
are stood in for here.

    /usr/bin/python3 make_expected.py /path/to/bert/tokenization.py

writes vocab.txt (a vocabulary made from the test strings) and
expected.json (for every string, cased and uncased: the pieces, the ids
of [CLS] text [SEP] cut to 16 ids, and of pairs cut to 16 longest first).
"""
import base64
import importlib.util
import json
import random
import sys
import types

tf = types.ModuleType("tensorflow")
tf.gfile = types.SimpleNamespace(GFile=lambda p, m: open(p, m, encoding="utf-8"))
sys.modules["tensorflow"] = tf
six = types.ModuleType("six")
six.PY2, six.PY3, six.text_type, six.binary_type = False, True, str, bytes
sys.modules["six"] = six

spec = importlib.util.spec_from_file_location("tokenization", sys.argv[1])
tok = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tok)

STRINGS = [
    b"Hello, world!",
    b"The quick brown fox jumps over the lazy dog.",
    "unaffable running runner's \"quoted\" (paren) [bracket] {brace} $5.00 ^caret `tick`".encode(),
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00c5ngstr\u00f6m NA\u00cfVE".encode(),
    "\u4f60\u597d\u4e16\u754c means hello world; \u3053\u3093\u306b\u3061\u306f \ud55c\uad6d\uc5b4".encode(),
    "emoji \U0001F600\U0001F44D\U0001F3FD family \U0001F468\u200d\U0001F469\u200d\U0001F467 flag \U0001F1EF\U0001F1F5".encode(),
    b"tabs\tnew\nlines\r\nand\x00nul\x01\x02\x7f controls",
    "zero\u200bwidth soft\u00adhyphen bom\ufeffhere nbsp\u00a0space ideo\u3000space".encode(),
    b"invalid \xff\xfe utf8 \xc3( trunc \xe2\x82 end \xed\xa0\x80 surrogate",
    "\u039f\u0394\u039f\u03a3 \u03a3\u0399\u03a3\u03a5\u03a6\u039f\u03a3 \u0130stanbul \u1e9e STRASSE".encode(),
    "Arabic \u0645\u0631\u062d\u0628\u0627 Hebrew \u05e9\u05dc\u05d5\u05dd Devanagari \u0928\u092e\u0938\u094d\u0924\u0947 Thai \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35".encode(),
    ("a" * 99 + " " + "b" * 100 + " " + "c" * 101 + " " + "d" * 250).encode(),
    ("word " * 40).encode(),
    "\u2028line\u2029para\u0085next \u00bfQu\u00e9? \u00a1S\u00ed! \u2014dash\u2026 \u00abguillemets\u00bb \u201cquotes\u201d".encode(),
    "combining e\u0301 a\u0300 n\u0303 \u0301alone \u0338".encode(),
    b"",
    b"   \t\n  ",
    b"query: how many legs does a spider have?",
    b"passage: Spiders have eight legs, unlike insects, which have six.",
    "\uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 \uff11\uff12\uff13 \u2460\u2461".encode(),
    "mixed\u4e2d\u6587english\u65e5\u672c".encode(),
    "\U00020000\U0002A700 \U0002F800 \uf900 cjk ext".encode(),
]

PAIRS = [(0, 1), (2, 3), (12, 1), (1, 12), (15, 0), (12, 12), (17, 18), (8, 5)]
MAX_LEN = 16


def build_vocab():
    rng = random.Random(0)
    basic = tok.BasicTokenizer(do_lower_case=True)
    cased = tok.BasicTokenizer(do_lower_case=False)
    words = []
    for s in STRINGS:
        words += basic.tokenize(s) + cased.tokenize(s)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    seen = set(vocab)

    def add(t):
        if t not in seen:
            seen.add(t)
            vocab.append(t)

    for w in words:
        r = rng.random()
        if r < 0.4 or len(w) == 1:
            add(w)
        elif r < 0.85:
            # Split into random pieces, the later ones with ##.
            cuts = sorted(rng.sample(range(1, len(w)), min(len(w) - 1, rng.randint(1, 3))))
            parts = [w[i:j] for i, j in zip([0] + cuts, cuts + [len(w)])]
            add(parts[0])
            for p in parts[1:]:
                add("##" + p)
        # else: left out, so it is [UNK] unless its pieces come from elsewhere
    for c in "abcdefghijklmnopqrstuvwxyz":
        add("##" + c)
    add("b" * 100)
    add("c" * 101)
    return vocab


def truncate_pair(a, b, max_len):
    # run_classifier.py's _truncate_seq_pair: a token at a time from the
    # longer, the second on a tie.
    while len(a) + len(b) > max_len:
        if len(a) > len(b):
            a.pop()
        else:
            b.pop()


def main():
    vocab = build_vocab()
    with open("vocab.txt", "w", encoding="utf-8") as f:
        for t in vocab:
            f.write(t + "\n")
    cases = []
    for lower in (True, False):
        ft = tok.FullTokenizer("vocab.txt", do_lower_case=lower)
        ft.wordpiece_tokenizer.max_input_chars_per_word = 100
        for s in STRINGS:
            pieces = ft.tokenize(s)
            ids = ft.convert_tokens_to_ids(pieces)
            cut = ids[: MAX_LEN - 2]
            cases.append({
                "lower": lower,
                "text": base64.b64encode(s).decode(),
                "pieces": pieces,
                "ids": ft.convert_tokens_to_ids(["[CLS]"]) + ids + ft.convert_tokens_to_ids(["[SEP]"]),
                "ids_cut": ft.convert_tokens_to_ids(["[CLS]"]) + cut + ft.convert_tokens_to_ids(["[SEP]"]),
            })
        for i, j in PAIRS:
            a = ft.convert_tokens_to_ids(ft.tokenize(STRINGS[i]))
            b = ft.convert_tokens_to_ids(ft.tokenize(STRINGS[j]))
            truncate_pair(a, b, MAX_LEN - 3)
            cls, sep = ft.convert_tokens_to_ids(["[CLS]", "[SEP]"])
            cases.append({
                "lower": lower,
                "text": base64.b64encode(STRINGS[i]).decode(),
                "text_b": base64.b64encode(STRINGS[j]).decode(),
                "ids_cut": [cls] + a + [sep] + b + [sep],
                "types_cut": [0] * (len(a) + 2) + [1] * (len(b) + 1),
            })
    with open("expected.json", "w", encoding="utf-8") as f:
        json.dump({"max_len": MAX_LEN, "cases": cases}, f, ensure_ascii=True, indent=0)
        f.write("\n")


main()
