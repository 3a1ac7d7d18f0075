"""The genlens commands as Python functions.

Each function runs the genlens binary with ``--json`` and returns what it
printed as a dict (arrays it wrote as NumPy arrays). Keyword arguments not
named here are passed on as flags, underscores as dashes:
``compare(a, b, kid_subset_size=100)`` runs
``genlens compare --real a --fake b --kid-subset-size 100 --json``.
``genlens COMMAND --help`` lists every flag.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Union

import numpy as np

from ._cli import PathLike, as_files, as_sequence, output_path, run

Data = Union[PathLike, np.ndarray, Dict[str, np.ndarray]]


def compare(real: Data, fake: Data, metrics: Union[str, Sequence[str], None] = None, **options: Any) -> Dict[str, Any]:
    """Distances between real and generated data: FID by default, and any
    of kid, mmd, cms, prdc, vendi, cmmd (or "all").

    real and fake are each a folder of images, a feature file (.npy, .npz,
    .csv), a statistics file (.npz with mu and sigma, as pytorch-fid writes
    it), an (n, d) NumPy array of features or a dict {"mu", "sigma"}.

    >>> genlens.compare("real_imgs/", "gen_imgs/")["fid"]  # doctest: +SKIP
    """
    with as_files(real, fake) as (r, f):
        return run("compare", real=r, fake=f, metrics=as_sequence(metrics), **options)


def fid(real: Data, fake: Data, **options: Any) -> float:
    """The Fréchet Inception Distance between real and fake (see compare)."""
    return float(compare(real, fake, metrics="fid", **options)["fid"])


def stats(input: Data, out: Optional[PathLike] = None, **options: Any) -> Dict[str, Any]:
    """Gaussian statistics of feature rows or of a folder of images, as
    pytorch-fid computes them: a dict with "mu" and "sigma" (NumPy arrays),
    "n", and the summary genlens printed. With out, the .npz file is kept
    there (genlens refuses to overwrite an existing file)."""
    with as_files(input) as (path,), output_path(out, ".npz") as dst:
        summary = run("stats", positional=[path], out=dst, **options)
        with np.load(dst) as z:
            result = {k: z[k] for k in z.files}
    if "n" in result:
        result["n"] = int(np.asarray(result["n"]).reshape(-1)[0])
    for key in [k for k, v in result.items() if isinstance(v, np.ndarray) and v.dtype.kind == "U" and v.ndim == 0]:
        result[key] = str(result[key])  # the provenance entries
    result.update({k: v for k, v in summary.items() if k not in result})
    return result


def features(input: PathLike, out: Optional[PathLike] = None, **options: Any) -> np.ndarray:
    """Features of a folder of images (Inception-v3 pool3 by default;
    embedder="dinov2-vits14" and weights=... for the ViTs), one row per
    image in file-name order."""
    with output_path(out, ".npy") as dst:
        run("features", positional=[input], out=dst, **options)
        return np.load(dst)


def inception_score(input: Data, **options: Any) -> Dict[str, Any]:
    """Inception Score of class-probability rows or of a folder of images."""
    with as_files(input) as (path,):
        return run("is", positional=[path], **options)


def entropy(answers: PathLike, scores: Union[str, Sequence[str], None] = None, **options: Any) -> Dict[str, Any]:
    """Uncertainty scores of sampled LLM answers per prompt (kernel entropy,
    lexical similarity, KLE, ... or "all") and their AUROC against
    correctness, from an answers file (.jsonl or .parquet)."""
    return run("entropy", positional=[answers], scores=as_sequence(scores), **options)


def mse_fit(train: PathLike, target: str, prediction: str, model: PathLike, **options: Any) -> Dict[str, Any]:
    """Fit the check model of one-step MSE estimation on labelled reference
    data (CSV) and write it to model (JSON)."""
    return run("mse", "fit", train=train, target=target, prediction=prediction, model=model, **options)


def mse_estimate(model: PathLike, data: PathLike, **options: Any) -> Dict[str, Any]:
    """Estimate the deployed model's MSE on unlabelled production data (CSV)
    per chunk (chunk_size=N, chunks=K or timestamp=COL with period=...)."""
    return run("mse", "estimate", model=model, data=data, **options)


def version() -> str:
    """The version line of the genlens binary."""
    return str(run("version", json_output=False)).strip()


__all__ = ["compare", "fid", "stats", "features", "inception_score", "entropy", "mse_fit", "mse_estimate", "version"]
