"""Writes polygraph.json: inputs, and the values LM-Polygraph's estimator
classes compute from them, for TestPolygraphReference; and
polygraph_calculators.json: token texts, their alternatives and samples'
texts, with what LM-Polygraph's statistic calculators make of them and its
estimators compute from those, for TestPolygraphCalculatorsReference.

The estimators are LM-Polygraph's own code, imported from a checkout whose
src/lm_polygraph directory LM_POLYGRAPH_SRC names (nothing of it is copied
here): LabelProb (with its classes, SemanticClassesCalculator), CocoaMSP,
CocoaPPL, CocoaMTE (with its entropy statistic, EntropyCalculator),
SentenceSAR, TokenSAR, SAR, SemanticDensity, LUQ and
ClaimConditionedProbability. Only what they import and do not use is
stubbed (lm_polygraph.utils: a logging decorator, model classes named in
type hints). numpy must be installed.

    git clone https://github.com/IINemo/lm-polygraph /tmp/lm-polygraph
    LM_POLYGRAPH_SRC=/tmp/lm-polygraph/src/lm_polygraph /usr/bin/python3 make_polygraph_expected.py [COMMIT]

polygraph_replies.json holds the scores LM-Polygraph's Verbalized1S,
Verbalized2S, Linguistic1S and PTrueEmpirical give model replies, with
the regular expression and expressions of confidence of its
configurations (examples/configs/instruct, beside src/ in the checkout;
PyYAML reads them).

The calculators (polygraph_calculators.json) also need torch and scipy
(Debian: python3-torch, python3-scipy). They run as LM-Polygraph runs
them, with test doubles for the models they load: the cross-encoder of
CrossEncoderSimilarityMatrixCalculator is a similarity given here
(crossenc_sim, which the Go test computes the same way), the DeBERTa of
GreedyAlternativesNLICalculator and SemanticMatrixCalculator returns the
logits of a table of label probabilities stored with the case, the
tokenizer decodes by concatenating the tokens' texts, and the black-box
model of BlackboxGreedyTextsCalculator hands over an OpenAI-shaped answer
with logprobs.

The inputs are made here from a seeded generator and a few hand-made edge
cases. Per case: the samples' texts and token logprobs; the answer under
test's token logprobs, its top-K alternatives' logprobs and, per token,
the alternatives for CCP (the token first) with the judge's label
probabilities of (token, alternative) and (alternative, token); the
similarity of the answer with each sample, of the samples with each other,
and of each answer with itself without one token; the judge's label
probabilities ([contradiction, neutral, entailment]) of every ordered
pair of samples and of (answer, sample).
"""

import importlib.util
import json
import os
import string
import sys
import types

import numpy as np


def stub(name, **attrs):
    m = types.ModuleType(name)
    m.__path__ = []
    for k, v in attrs.items():
        setattr(m, k, v)
    sys.modules[name] = m
    return m


def load(src, sub, name):
    """Imports src/sub/name.py as lm_polygraph.sub.name."""
    full = f"lm_polygraph.{sub}.{name}"
    spec = importlib.util.spec_from_file_location(full, os.path.join(src, sub, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[full] = mod
    spec.loader.exec_module(mod)
    return mod


LABELS = ["contra", "neutral", "entail"]  # genlens's order of the probabilities


def simplex(rng, peak=None):
    p = rng.dirichlet([0.5, 0.5, 0.5])
    if peak is not None:
        p = 0.15 * p
        p[peak] += 0.85
    return [round(float(x), 6) for x in p / p.sum()]


def random_case(rng, name, m, n_tok, k_top, dup=False):
    samples = [[round(float(-rng.exponential(0.6)), 6) for _ in range(rng.integers(1, 6))] for _ in range(m)]
    texts = [f"answer {rng.integers(0, 3 if dup else 1000)}" for _ in range(m)]
    greedy = [round(float(-rng.exponential(0.6)), 6) for _ in range(n_tok)]
    top = []
    for lp in greedy:
        alts = sorted([round(float(lp - rng.exponential(1.0)), 6) for _ in range(k_top - 1)], reverse=True)
        top.append([lp] + alts)
    s = rng.uniform(0, 1, (m, m))
    s = np.round((s + s.T) / 2, 6)
    np.fill_diagonal(s, 1.0)
    ccp = []
    for t in range(n_tok):
        k = len(top[t])
        fwd = [[0.0, 0.0, 1.0]] + [simplex(rng, peak=int(rng.integers(0, 3))) for _ in range(k - 1)]
        bwd = [[0.0, 0.0, 1.0]] + [simplex(rng, peak=int(rng.integers(0, 3))) for _ in range(k - 1)]
        ccp.append({"logprobs": top[t], "forward": fwd, "backward": bwd})
    return {
        "name": name,
        "sample_texts": texts,
        "samples": samples,
        "greedy": greedy,
        "top": top,
        "ccp": ccp,
        "answer_sim": [round(float(x), 6) for x in rng.uniform(0, 1, m)],
        "sample_sim": s.tolist(),
        "answer_token_sim": [round(float(x), 6) for x in rng.uniform(0, 1, n_tok)],
        "sample_token_sim": [[round(float(x), 6) for x in rng.uniform(0, 1, len(t))] for t in samples],
        "nli": [[[0.0, 0.0, 1.0] if i == j else simplex(rng, peak=int(rng.integers(0, 3))) for j in range(m)] for i in range(m)],
        "answer_nli": [simplex(rng, peak=int(rng.integers(0, 3))) for _ in range(m)],
    }


def cases():
    rng = np.random.default_rng(20250806)
    out = [
        random_case(rng, "random 5", 5, 4, 5),
        random_case(rng, "random 8 duplicates", 8, 6, 3, dup=True),
        random_case(rng, "random 3", 3, 2, 2),
        random_case(rng, "random 12", 12, 9, 6),
    ]
    # Hand-made: two samples, exact numbers.
    out.append({
        "name": "hand",
        "sample_texts": ["Paris", "Lyon"],
        "samples": [[-0.5, -0.25], [-1.0]],
        "greedy": [-0.2, -0.3],
        "top": [[-0.2, -2.0], [-0.3, -1.5]],
        "ccp": [
            {"logprobs": [-0.2, -2.0, -3.0], "forward": [[0, 0, 1], [0.9, 0.05, 0.05], [0.1, 0.1, 0.8]],
             "backward": [[0, 0, 1], [0.8, 0.1, 0.1], [0.2, 0.7, 0.1]]},
            {"logprobs": [-0.3, -1.5], "forward": [[0, 0, 1], [0.1, 0.1, 0.8]], "backward": [[0, 0, 1], [0.7, 0.2, 0.1]]},
        ],
        "answer_sim": [1.0, 0.5],
        "sample_sim": [[1.0, 0.25], [0.25, 1.0]],
        "answer_token_sim": [0.5, 0.75],
        "sample_token_sim": [[0.8, 0.4], [0.5]],
        "nli": [[[0, 0, 1], [0.6, 0.2, 0.2]], [[0.3, 0.3, 0.4], [0, 0, 1]]],
        "answer_nli": [[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]],
    })
    # Ties between labels: LM-Polygraph's class goes to entail, then contra.
    out.append({
        "name": "ties",
        "sample_texts": ["a", "a", "b"],
        "samples": [[-0.1], [-0.1], [-2.0, -0.5]],
        "greedy": [-0.1],
        "top": [[-0.1, -3.0, -4.0]],
        "ccp": [
            {"logprobs": [-0.1, -3.0, -4.0, -5.0], "forward": [[0, 0, 1], [0.4, 0.2, 0.4], [0.4, 0.4, 0.2], [0.5, 0.5, 0.0]],
             "backward": [[0, 0, 1], [0.5, 0.5, 0.0], [0.4, 0.4, 0.2], [0.0, 0.5, 0.5]]},
        ],
        "answer_sim": [1.0, 1.0, 0.0],
        "sample_sim": [[1, 1, 0], [1, 1, 0], [0, 0, 1]],
        "answer_token_sim": [0.5],
        "sample_token_sim": [[0.5], [0.5], [0.9, 0.2]],
        "nli": [[[0, 0, 1], [0, 0, 1], [0.9, 0.05, 0.05]], [[0, 0, 1], [0, 0, 1], [0.9, 0.05, 0.05]],
                [[0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0, 0, 1]]],
        "answer_nli": [[0, 0, 1], [0, 0, 1], [0.5, 0.5, 0.0]],
    })
    return out


def main(src, commit):
    stub("lm_polygraph")
    stub("lm_polygraph.utils")
    stub("lm_polygraph.utils.common", polygraph_module_init=lambda f: f)
    stub("lm_polygraph.utils.model", Model=object, WhiteboxModel=object)
    for sub in ("estimators", "stat_calculators"):
        pkg = stub(f"lm_polygraph.{sub}")
        pkg.__path__ = [os.path.join(src, sub)]
    load(src, "estimators", "estimator")
    load(src, "estimators", "common")
    load(src, "stat_calculators", "stat_calculator")
    E = lambda name, cls: getattr(load(src, "estimators", name), cls)
    label_prob = E("label_prob", "LabelProb")()
    cocoa = load(src, "estimators", "cocoa")
    cocoa_msp, cocoa_ppl, cocoa_mte = cocoa.CocoaMSP(), cocoa.CocoaPPL(), cocoa.CocoaMTE()
    sentence_sar = E("sentence_sar", "SentenceSAR")()
    token_sar = E("token_sar", "TokenSAR")()
    sar = E("sar", "SAR")()
    sd = E("semantic_density", "SemanticDensity")()
    luq = E("luq", "LUQ")()
    ccp = E("claim_conditioned_probability", "ClaimConditionedProbability")()
    entropy = load(src, "stat_calculators", "entropy").EntropyCalculator()
    classes = load(src, "stat_calculators", "semantic_classes").SemanticClassesCalculator()

    out = []
    for c in cases():
        m = len(c["samples"])
        p = np.array(c["nli"], dtype=float)[None]  # batch of one
        a = np.array(c["answer_nli"], dtype=float)[None]
        # The judge's class of a pair, as LM-Polygraph's calculators take
        # it (max over the dict entail, contra, neutral: ties to the first).
        label = lambda q: max({"entail": q[2], "contra": q[0], "neutral": q[1]}.items(), key=lambda kv: kv[1])[0]
        alt_nli = []
        for tok in c["ccp"]:
            k = len(tok["logprobs"])
            mtx = [["" for _ in range(k)] for _ in range(k)]
            for i in range(k):
                mtx[0][i] = label(tok["forward"][i])
                mtx[i][0] = label(tok["backward"][i])
            alt_nli.append(mtx)
        renorm = [np.array(t) - np.logaddexp.reduce(np.array(t)) for t in c["top"]]
        with np.errstate(divide="ignore"):
            logits_e, logits_c = np.log(p[..., 2]), np.log(p[..., 0])
        stats = {
            "sample_texts": [c["sample_texts"]],
            "sample_tokens": [[list(range(len(s))) for s in c["samples"]]],
            "sample_log_probs": [[float(np.sum(s)) for s in c["samples"]]],
            "sample_log_likelihoods": [[np.array(s) for s in c["samples"]]],
            "greedy_log_likelihoods": [np.array(c["greedy"])],
            "greedy_sentence_similarity": np.array([c["answer_sim"]]),
            "sample_sentence_similarity": np.array([c["sample_sim"]], dtype=float),
            "token_similarity": [np.array(c["answer_token_sim"])],
            "sample_token_similarity": [[np.array(t) for t in c["sample_token_sim"]]],
            "semantic_matrix_entail": p[..., 2],
            "semantic_matrix_contra": p[..., 0],
            "semantic_matrix_classes": p.argmax(-1),
            "entailment_id": 2,
            "semantic_matrix_entail_logits": logits_e,
            "semantic_matrix_contra_logits": logits_c,
            "concat_greedy_semantic_matrix_contra_forward": a[..., 0],
            "concat_greedy_semantic_matrix_neutral_forward": a[..., 1],
            "greedy_tokens": [list(range(len(c["ccp"])))],
            "greedy_tokens_alternatives": [[[(f"w{t}.{i}", lp) for i, lp in enumerate(tok["logprobs"])] for t, tok in enumerate(c["ccp"])]],
            "greedy_tokens_alternatives_nli": [alt_nli],
        }
        stats.update(classes(stats, texts=None, model=None))
        stats.update(entropy({"greedy_log_probs": [renorm]}))
        r = {
            "LabelProb": label_prob(stats)[0],
            "CocoaMSP": cocoa_msp(stats)[0],
            "CocoaPPL": cocoa_ppl(stats)[0],
            "CocoaMTE": cocoa_mte(stats)[0],
            "SentenceSAR": sentence_sar(stats)[0],
            "TokenSAR": token_sar(stats)[0],
            "SAR": sar(stats)[0],
            "SemanticDensity": sd(stats)[0],
            "LUQ": luq(stats)[0],
            "CCP": ccp(stats)[0],
            "classes": [int(stats["semantic_classes_entail"]["sample_to_class"][0][i]) for i in range(m)],
        }
        c["expected"] = {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in r.items()}
        out.append(c)
    doc = {"lm_polygraph": "github.com/IINemo/lm-polygraph" + (f" at {commit}" if commit else ""), "cases": out}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "polygraph.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def crossenc_sim(a, b):
    """The cross-encoder's similarity of two texts in these tests: the
    length of their common prefix plus one, over their lengths plus one
    (ASCII texts)."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return (n + 1) / (len(a) + len(b) + 1)


def label_probs(rng, peak):
    """Probabilities [contra, neutral, entail] with a clear maximum."""
    x = rng.dirichlet([0.5, 0.5, 0.5]) * 0.3
    x[peak] += 0.7
    a, b = round(float(x[0]), 6), round(float(x[1]), 6)
    return [a, b, 1 - a - b]


WORDS = ["Paris", "paris", "Lyon", "London", "France", "capital", "is", "was", "the", "city", "Rome", "Texas"]


def calculator_cases():
    rng = np.random.default_rng(20250807)
    out = []
    for name, n_tok, m, k in [("calc 4 tokens", 4, 4, 4), ("calc 1 token", 1, 3, 3), ("calc 6 tokens", 6, 5, 5), ("calc duplicates", 3, 6, 2)]:
        def toks(n):
            return [(" " if i else "") + WORDS[int(rng.integers(0, len(WORDS)))] for i in range(n)]
        answer = toks(n_tok)
        greedy = []
        for t in answer:
            lp = round(float(-rng.exponential(0.5)), 6)
            alts = [(t, lp)]
            for _ in range(k - 1):
                w = (" " if t.startswith(" ") else "") + WORDS[int(rng.integers(0, len(WORDS)))]
                alts.append((w, round(float(lp - rng.exponential(1.0)), 6)))
            alts.sort(key=lambda a: -a[1])
            greedy.append({"token": t, "logprob": lp, "top": [{"token": a, "logprob": l} for a, l in alts]})
        pool = [toks(int(rng.integers(1, 4))) for _ in range(3)]
        samples = []
        for _ in range(m):
            words = pool[int(rng.integers(0, len(pool)))] if name == "calc duplicates" else toks(int(rng.integers(1, 5)))
            samples.append([{"token": t, "logprob": round(float(-rng.exponential(0.6)), 6)} for t in words])
        texts = ["".join(t["token"] for t in s) for s in samples]
        table = {}
        def judge(a, b):
            if (a, b) not in table:
                table[a, b] = label_probs(rng, int(rng.integers(0, 3)))
        for tok in greedy:
            w0 = tok["token"].strip(string.punctuation + " \n")
            for a in tok["top"]:
                w = a["token"].strip(string.punctuation + " \n")
                judge(w0, w)
                judge(w, w0)
        for a in texts:
            for b in texts:
                judge(a, b)
        out.append({"name": name, "answer": greedy, "samples": samples, "sample_texts": texts,
                    "nli": [[a, b, p] for (a, b), p in table.items()]})
    return out


def calculators(src, commit):
    import torch
    stub("sentence_transformers", CrossEncoder=lambda name, device=None: types.SimpleNamespace(
        predict=lambda pairs, batch_size=None: np.array([crossenc_sim(a, b) for a, b in pairs], dtype=float)))
    stub("lm_polygraph.utils.deberta", Deberta=object)
    sys.modules["lm_polygraph.utils.model"].BlackboxModel = object
    calc = lambda name: load(src, "stat_calculators", name)
    cross = calc("cross_encoder_similarity").CrossEncoderSimilarityMatrixCalculator()
    alt_nli_mod = calc("greedy_alternatives_nli")
    matrix_mod = calc("semantic_matrix")
    blackbox = calc("greedy_probs_blackbox").BlackboxGreedyTextsCalculator()
    E = lambda name, cls: getattr(load(src, "estimators", name), cls)
    token_sar, sar, ccp = E("token_sar", "TokenSAR")(), E("sar", "SAR")(), E("claim_conditioned_probability", "ClaimConditionedProbability")()
    eigv, degree, ecc = E("eig_val_laplacian", "EigValLaplacian")(), E("deg_mat", "DegMat")(), E("eccentricity", "Eccentricity")()
    kle_mod = load(src, "estimators", "kernel_language_entropy")
    graphs = []
    real_laplacian = kle_mod.laplacian_matrix
    kle_mod.laplacian_matrix = lambda w: (graphs.append(np.array(w)), real_laplacian(w))[1]
    kle = kle_mod.KernelLanguageEntropy()

    out = []
    for c in calculator_cases():
        table = {(a, b): p for a, b, p in c["nli"]}

        class Encoded(dict):
            def to(self, device):
                return self

        deberta = types.SimpleNamespace(
            batch_size=4, device="cpu",
            deberta_tokenizer=lambda batch, padding=True, return_tensors="pt": Encoded(pairs=[tuple(p) for p in batch]),
            deberta=types.SimpleNamespace(
                config=types.SimpleNamespace(label2id={"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2}),
                __call__=None))
        deberta.deberta = type("FakeDeberta", (), {
            "config": types.SimpleNamespace(label2id={"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2}),
            "__call__": lambda self, pairs: types.SimpleNamespace(
                logits=torch.log(torch.tensor([table[p] for p in pairs], dtype=torch.float64)))})()
        # Token ids: the texts' places in a vocabulary of this case.
        vocab = []
        def ids(texts):
            out = []
            for t in texts:
                if t not in vocab:
                    vocab.append(t)
                out.append(vocab.index(t))
            return out
        greedy_ids = ids([t["token"] for t in c["answer"]])
        sample_ids = [ids([t["token"] for t in s]) for s in c["samples"]]
        tokenizer = types.SimpleNamespace(added_tokens_decoder={}, decode=lambda ts, skip_special_tokens=True: "".join(vocab[i] for i in ts))
        model = types.SimpleNamespace(device=lambda: "cpu", tokenizer=tokenizer)
        stats = {"input_texts": ["Q"], "sample_tokens": [sample_ids], "sample_texts": [c["sample_texts"]], "greedy_tokens": [greedy_ids]}
        stats.update(cross(stats, texts=["Q"], model=model))
        content = [types.SimpleNamespace(token=t["token"], logprob=t["logprob"],
                                         top_logprobs=[types.SimpleNamespace(token=a["token"], logprob=a["logprob"]) for a in t["top"]])
                   for t in c["answer"]]
        bb = types.SimpleNamespace(supports_logprobs=True, logprobs=[types.SimpleNamespace(content=content)],
                                   generate_texts=lambda **kw: ["".join(t["token"] for t in c["answer"])])
        greedy = blackbox({}, texts=["Q"], model=bb)
        stats.update(greedy)
        stats["greedy_log_likelihoods"] = [np.array(greedy["greedy_log_likelihoods"][0])]
        stats["sample_log_likelihoods"] = [[np.array([t["logprob"] for t in s]) for s in c["samples"]]]
        stats.update(alt_nli_mod.GreedyAlternativesNLICalculator(deberta)(stats, texts=["Q"], model=model))
        stats.update(matrix_mod.SemanticMatrixCalculator(deberta)(stats, texts=["Q"], model=model))
        graphs.clear()
        r = {
            "token_similarity": [float(x) for x in stats["token_similarity"][0]],
            "sample_token_similarity": [[float(x) for x in t] for t in stats["sample_token_similarity"][0]],
            "sample_sentence_similarity": stats["sample_sentence_similarity"][0].tolist(),
            "alternatives": [[[a, float(l)] for a, l in t] for t in stats["greedy_tokens_alternatives"][0]],
            "TokenSAR": float(token_sar(stats)[0]),
            "SAR": float(sar(stats)[0]),
            "CCP": float(ccp(stats)[0]),
            "EigValLaplacian": float(eigv(stats)[0]),
            "DegMat": float(degree(stats)[0]),
            "Eccentricity": float(ecc(stats)[0]),
            "KernelLanguageEntropy": float(kle(stats)[0]),
        }
        r["kle_graph"] = graphs[0].tolist()
        c["expected"] = r
        out.append(c)
    doc = {"lm_polygraph": "github.com/IINemo/lm-polygraph" + (f" at {commit}" if commit else ""), "cases": out}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "polygraph_calculators.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


REPLIES = [
    "Guess: Paris\nProbability: 0.85",
    "Probability: 0.2 then Probability: 0.9",
    "Probability: 85.0",
    "Probability: 1",
    "probability: 0.3",
    "Probability: \u0660.\u0667",
    "Probability: 0.\U0001d7d5",
    "Guess: Lyon\nConfidence: Probably Not",
    "Confidence: Highly Unlikely",
    "We Beleive so",
    "We Believe so",
    "Better than Even",
    "almost certain",
    "",
]


def replies(src, commit):
    """The verbalized and linguistic scores of REPLIES, and PTrueEmpirical
    of sets of sampled replies, by LM-Polygraph's classes with the regular
    expression and the expressions of confidence of its configurations."""
    import yaml
    root = os.path.dirname(os.path.dirname(os.path.abspath(src)))
    cfg = lambda name: yaml.safe_load(open(os.path.join(root, "examples", "configs", "instruct", name)))
    regex = cfg("polygraph_eval_triviaqa_verb_1s_top1.yaml")["estimators"][0]["cfg"]["confidence_regex"]
    regex2 = cfg("polygraph_eval_triviaqa_verb_2s_top1.yaml")["estimators"][0]["cfg"]["confidence_regex"]
    expressions = cfg("polygraph_eval_triviaqa_ling_1s.yaml")["expressions_of_confidence"]
    E = lambda name, cls: getattr(load(src, "estimators", name), cls)
    v1 = E("verbalized_1s", "Verbalized1S")(confidence_regex=regex)
    v2 = E("verbalized_2s", "Verbalized2S")(confidence_prompt="?", confidence_regex=regex2)
    ling = E("linguistic_1s", "Linguistic1S")(expressions=expressions)
    pte = E("p_true_empirical", "PTrueEmpirical")(num_samples=10)
    nan = lambda x: None if np.isnan(x) else float(x)
    out = []
    for r in REPLIES:
        model = types.SimpleNamespace(generate_texts=lambda *a, **kw: [r])
        out.append({"reply": r, "Verbalized1S": nan(v1({"greedy_texts": [r]})[0]),
                    "Verbalized2S": nan(v2({"model": model, "input_texts": ["Q"], "greedy_texts": ["A"]})[0]),
                    "Linguistic1S": nan(ling({"greedy_texts": [r]})[0])})
    sampled = [[" True"] * 10, [" True", " False", "True", "true", " False"], [" False"], ["TrueFalse", " Tr", "ue"]]
    pt = []
    for s in sampled:
        model = types.SimpleNamespace(generate_texts=lambda *a, **kw: s)
        pt.append({"replies": s, "PTrueEmpirical": float(pte({"model": model, "input_texts": ["Q"], "greedy_texts": ["A"]})[0])})
    doc = {"lm_polygraph": "github.com/IINemo/lm-polygraph" + (f" at {commit}" if commit else ""),
           "confidence_regex": regex, "expressions": [[k, v] for k, v in expressions.items()], "replies": out, "ptrue_empirical": pt}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "polygraph_replies.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    src = os.environ.get("LM_POLYGRAPH_SRC")
    if not src:
        sys.exit("set LM_POLYGRAPH_SRC to the src/lm_polygraph directory of an LM-Polygraph checkout")
    main(src, sys.argv[1] if len(sys.argv) > 1 else "")
    calculators(src, sys.argv[1] if len(sys.argv) > 1 else "")
    replies(src, sys.argv[1] if len(sys.argv) > 1 else "")
