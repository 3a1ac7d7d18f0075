"""Writes polygraph_expected.json: LM-Polygraph's estimators on the inputs
of polygraph_fixture.json, for TestLMPolygraphCrossCheck.

The estimator classes are LM-Polygraph's own code, imported from a checkout
(not copied here): MaximumSequenceProbability, Perplexity, MeanTokenEntropy
(with its "entropy" statistic, EntropyCalculator), MonteCarloSequenceEntropy,
MonteCarloNormalizedSequenceEntropy, SemanticEntropy (with its classes,
SemanticClassesCalculator), NumSemSets, Eccentricity and PTrue. Only what
they import and do not use is stubbed: lm_polygraph.utils (a logging
decorator, model classes named in type hints), and scipy.linalg.eigh, taken
from numpy (both return the ascending eigenvalues of a symmetric matrix and
their orthonormal eigenvectors). numpy and torch (NumSemSets imports
torch.nn) must be installed.

    git clone https://github.com/IINemo/lm-polygraph /tmp/lm-polygraph
    /usr/bin/python3 make_polygraph_expected.py /tmp/lm-polygraph/src/lm_polygraph [COMMIT]

The inputs: per case, the samples' token logprobs, the greedy answer's token
logprobs and top-K alternatives, the NLI probabilities of every ordered pair
of samples ([contradiction, neutral, entailment], premise i, hypothesis j),
and log p(True).
"""

import importlib.util
import json
import os
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


def main(src, commit):
    stub("lm_polygraph")
    stub("lm_polygraph.utils")
    stub("lm_polygraph.utils.common", polygraph_module_init=lambda f: f)
    stub("lm_polygraph.utils.model", Model=object, WhiteboxModel=object)
    stub("scipy")
    stub("scipy.linalg", eigh=np.linalg.eigh)
    for sub in ("estimators", "stat_calculators"):
        pkg = stub(f"lm_polygraph.{sub}")
        pkg.__path__ = [os.path.join(src, sub)]
    load(src, "estimators", "estimator")
    load(src, "estimators", "common")
    load(src, "stat_calculators", "stat_calculator")
    E = lambda name, cls: getattr(load(src, "estimators", name), cls)
    msp = E("max_probability", "MaximumSequenceProbability")()
    ppl = E("perplexity", "Perplexity")()
    mte = E("token_entropy", "MeanTokenEntropy")()
    pe = E("monte_carlo_sequence_entropy", "MonteCarloSequenceEntropy")()
    ne = E("monte_carlo_normalized_sequence_entropy", "MonteCarloNormalizedSequenceEntropy")()
    SE = E("semantic_entropy", "SemanticEntropy")
    se, se_freq = SE(), SE(class_probability_estimation="frequency")
    nss = E("num_sem_sets", "NumSemSets")()
    ecc = E("eccentricity", "Eccentricity")()  # NLI_score, entail, thres 0.9
    ptrue = E("p_true", "PTrue")()
    entropy = load(src, "stat_calculators", "entropy").EntropyCalculator()
    classes = load(src, "stat_calculators", "semantic_classes").SemanticClassesCalculator()

    fixture = json.load(open(os.path.join(os.path.dirname(__file__), "polygraph_fixture.json")))
    out = []
    for c in fixture["cases"]:
        samples = c["samples"]
        p = np.array(c["nli"])[None]  # batch of one
        entail, contra = p[..., 2], p[..., 0]
        stats = {
            "greedy_log_likelihoods": [np.array(c["greedy"])],
            "sample_log_probs": [[float(np.sum(s)) for s in samples]],
            "sample_tokens": [[list(range(len(s))) for s in samples]],
            "sample_texts": [[f"answer {i}" for i in range(len(samples))]],
            "semantic_matrix_entail": entail,
            "semantic_matrix_contra": contra,
            "semantic_matrix_classes": p.argmax(-1),
            "entailment_id": 2,
            "p_true": np.array([c["ptrue_logprob"]]),
        }
        stats.update(classes(stats, texts=None, model=None))
        r = {
            "name": c["name"],
            "MaximumSequenceProbability": msp(stats)[0],
            "Perplexity": ppl(stats)[0],
            "MonteCarloSequenceEntropy": pe(stats)[0],
            "MonteCarloNormalizedSequenceEntropy": ne(stats)[0],
            "SemanticEntropy": se(stats)[0],
            "SemanticEntropyEmpirical": se_freq(stats)[0],
            "NumSemSets": nss(stats)[0],
            "Eccentricity": ecc(stats)[0],
            "PTrue": ptrue(stats)[0],
            "classes": [stats["semantic_classes_entail"]["sample_to_class"][0][i] for i in range(len(samples))],
        }
        if c["top"] is not None:
            # The entropy statistic over the top-K alternatives as the
            # endpoint gives them, and renormalised over the K.
            raw = [np.array(t) for t in c["top"]]
            renorm = [t - np.logaddexp.reduce(t) for t in raw]
            r["MeanTokenEntropy"] = mte(entropy({"greedy_log_probs": [raw]}))[0]
            r["MeanTokenEntropyRenormalised"] = mte(entropy({"greedy_log_probs": [renorm]}))[0]
        out.append({k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in r.items()})
    doc = {"lm_polygraph": "github.com/IINemo/lm-polygraph" + (f" at {commit}" if commit else ""), "cases": out}
    with open(os.path.join(os.path.dirname(__file__), "polygraph_expected.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
