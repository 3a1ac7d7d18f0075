"""genlens from Python.

genlens evaluates generative models (FID, KID, PRDC, Vendi, CMMD, online
selection of the best generator, pixel-cluster diagnostics), LLM answers
(kernel entropy and the uncertainty scores beside it) and regression models
in production (one-step MSE estimation), as one Go binary and an HTTP
service. This package runs that binary (found on PATH, in $GENLENS_BIN, or
given to set_binary) and returns its JSON results as dicts and its arrays
as NumPy arrays, and talks to a running service through Client. It needs
only the standard library: NumPy for array inputs and outputs, pandas to
pass DataFrames where genlens takes a table.

    import genlens
    genlens.compare("real_imgs/", "gen_imgs/")["fid"]
    genlens.compare(real_feats, gen_feats, metrics=["fid", "kid"], kid_subset_size=100)
    genlens.entropy("answers.jsonl", scores="all")["summary"]["auroc"]

Errors genlens reports are raised as GenlensError, carrying genlens's
``kind`` and ``field``; its warnings (printed, or in the JSON document)
as GenlensWarning.
"""

from ._cli import BinaryNotFound, GenlensError, GenlensWarning, binary, run, set_binary
from .client import Client
from .commands import compare, entropy, features, fid, inception_score, mse_estimate, mse_fit, stats, version

__version__ = "0.1.0"

__all__ = [
    "BinaryNotFound",
    "Client",
    "GenlensError",
    "GenlensWarning",
    "binary",
    "compare",
    "entropy",
    "features",
    "fid",
    "inception_score",
    "mse_estimate",
    "mse_fit",
    "run",
    "set_binary",
    "stats",
    "version",
]
