"""The genlens commands as Python functions.

Each function runs the genlens binary with ``--json`` and returns what it
printed as a dict (arrays it wrote as NumPy arrays). Keyword arguments not
named here are passed on as flags, underscores as dashes:
``compare(a, b, kid_subset_size=100)`` runs
``genlens compare --real a --fake b --kid-subset-size 100 --json``.
``genlens COMMAND --help`` lists every flag.

The image commands also take pytorch-fid's and torch-fidelity's keyword
names: ``batch_size`` (genlens's ``batch``), ``num_workers``
(``workers``) and ``device``, which may be "cpu" only: genlens runs on the
CPU.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._cli import (
    GenlensError,
    PathLike,
    as_files,
    as_sequence,
    is_dataframe,
    is_missing,
    is_pathlike,
    json_value,
    numpy,
    output_path,
    run,
    temp_dir,
    write_csv,
)

# Data is a path, an (n, d) NumPy array, a pandas DataFrame of numbers or
# a dict {"mu", "sigma"} of arrays.
Data = Any
# Table is a path to a CSV file, a pandas DataFrame or a NumPy array.
Table = Any


def _image_options(options: Dict[str, Any]) -> Dict[str, Any]:
    """options with pytorch-fid's and torch-fidelity's names of genlens's
    flags translated, and device checked: genlens runs on the CPU."""
    out = dict(options)
    for theirs, ours in (("batch_size", "batch"), ("num_workers", "workers")):
        if theirs in out:
            if ours in out and out[ours] is not None and out[theirs] is not None and out[ours] != out[theirs]:
                raise GenlensError(f"{theirs}={out[theirs]!r} and {ours}={out[ours]!r} are the same setting; give one", kind="field", field=ours)
            value = out.pop(theirs)
            out.setdefault(ours, value)
            if out[ours] is None:
                out[ours] = value
    if "device" in out:
        device = out.pop("device")
        if device is not None and str(device).strip().lower() != "cpu":
            raise GenlensError(
                f"device={str(device)!r}: genlens runs on the CPU only (pure Go, no CUDA): Inception-v3 costs about "
                "0.14 CPU-seconds an image, and a second run reads the features from its cache; leave device out or "
                "pass device='cpu'",
                kind="field",
                field="device",
            )
    return out


def compare(real: Data, fake: Data, metrics: Union[str, Sequence[str], None] = None, **options: Any) -> Dict[str, Any]:
    """Distances between real and generated data: FID by default, and any
    of kid, mmd, cms, prdc, vendi, cmmd (or "all").

    real and fake are each a folder of images, a feature file (.npy, .npz,
    .csv), a statistics file (.npz with mu and sigma, as pytorch-fid writes
    it), an (n, d) NumPy array of features, a pandas DataFrame of them or
    a dict {"mu", "sigma"}.

    >>> genlens.compare("real_imgs/", "gen_imgs/")["fid"]  # doctest: +SKIP
    """
    options = _image_options(options)
    with as_files(real, fake) as (r, f):
        return run("compare", real=r, fake=f, metrics=as_sequence(metrics), **options)


def fid(real: Data, fake: Data, **options: Any) -> float:
    """The Fréchet Inception Distance between real and fake (see compare).
    pytorch-fid's keywords are accepted: fid(a, b, batch_size=50,
    device="cpu", dims=2048, num_workers=8); as pytorch-fid does, batch_size
    and num_workers are ignored when neither input is a folder of images
    (compare refuses them there)."""
    options = _image_options(options)
    if not any(is_pathlike(x) and os.path.isdir(x) for x in (real, fake)):
        for key in ("batch", "workers"):
            options.pop(key, None)
    return float(compare(real, fake, metrics="fid", **options)["fid"])


def stats(input: Data, out: Optional[PathLike] = None, **options: Any) -> Dict[str, Any]:
    """Gaussian statistics of feature rows or of a folder of images, as
    pytorch-fid computes them: a dict with "mu" and "sigma" (NumPy arrays),
    "n", and the summary genlens printed. With out, the .npz file is kept
    there (genlens refuses to overwrite an existing file) and "path" names
    it; without, the file was temporary and there is no "path"."""
    np = numpy("stats(), which returns mu and sigma as arrays,")
    options = _image_options(options)
    with as_files(input) as (path,), output_path(out, ".npz") as dst:
        summary = run("stats", inputs=[path], out=dst, **options)
        with np.load(dst) as z:
            result = {k: z[k] for k in z.files}
    if "n" in result:
        result["n"] = int(np.asarray(result["n"]).reshape(-1)[0])
    for key in [k for k, v in result.items() if isinstance(v, np.ndarray) and v.dtype.kind == "U" and v.ndim == 0]:
        result[key] = str(result[key])  # the provenance entries
    result.update({k: v for k, v in summary.items() if k not in result})
    if out is None:
        result.pop("path", None)  # the temporary file, removed already
    else:
        result["path"] = os.fspath(out)
    return result


def features(input: PathLike, out: Optional[PathLike] = None, **options: Any) -> Any:
    """Features of a folder of images (Inception-v3 pool3 by default;
    embedder="dinov2-vits14" and weights=... for the ViTs), one row per
    image in file-name order, as a NumPy array."""
    np = numpy("features(), which returns an array,")
    options = _image_options(options)
    with output_path(out, ".npy") as dst:
        run("features", inputs=[input], out=dst, **options)
        return np.load(dst)


def inception_score(input: Data, **options: Any) -> Dict[str, Any]:
    """Inception Score of class-probability rows or of a folder of images."""
    options = _image_options(options)
    with as_files(input) as (path,):
        return run("is", inputs=[path], **options)


def entropy(answers: Any, scores: Union[str, Sequence[str], None] = None, **options: Any) -> Dict[str, Any]:
    """Uncertainty scores of sampled LLM answers per prompt (kernel entropy,
    lexical similarity, KLE, ... or "all") and their AUROC against
    correctness, from an answers file (.jsonl or .parquet), a pandas
    DataFrame or a list of dicts with its fields (id, samples, answer,
    reference, correct, ...).

    When an AUROC is None (every labelled answer correct, say), the reason
    genlens gives is raised as a GenlensWarning and kept in
    result["summary"]["auroc_reason"]."""
    with temp_dir() as tmp:
        path = answers
        if not is_pathlike(answers):
            path = tmp / "answers.jsonl"
            _write_jsonl(path, answers)
        doc = run("entropy", inputs=[path], scores=as_sequence(scores), **options)
    summary = doc.get("summary") if isinstance(doc, dict) else None
    if isinstance(summary, dict) and isinstance(summary.get("auroc"), dict):
        empty = sorted(k for k, v in summary["auroc"].items() if v is None)
        if empty:
            said = [str(w) for w in doc.get("warnings") or []]
            why = [w for w in said if "auroc" in w.lower()] or said
            summary["auroc_reason"] = (
                "; ".join(why) if why else "genlens gave no reason for the empty AUROC of " + ", ".join(empty)
            )
    return doc


def _write_jsonl(path: Path, rows: Any) -> None:
    """Rows of a DataFrame, or mappings, as JSON lines; a missing cell
    (None, NaN) is left out of its row."""
    if is_dataframe(rows):
        records = rows.to_dict(orient="records")
    elif isinstance(rows, Mapping):
        raise TypeError("answers: a path, a DataFrame or a list of dicts (one per prompt), not one dict")
    else:
        records = list(rows)
    with open(path, "w", encoding="utf-8") as f:
        for i, r in enumerate(records):
            if not isinstance(r, Mapping):
                raise TypeError(f"answers[{i}]: a dict of the row's fields, not {type(r).__name__}")
            row = {str(k): v for k, v in r.items() if not _missing_cell(v)}
            f.write(json.dumps(row, default=json_value, allow_nan=False) + "\n")


def _missing_cell(v: Any) -> bool:
    if is_missing(v):
        return True
    try:  # a NumPy or pandas scalar NaN is not equal to itself
        return bool(v != v)
    except (TypeError, ValueError):  # an array compares element-wise: present
        return False


def mse_fit(train: Table, target: Union[str, int], prediction: Union[str, int], model: PathLike, **options: Any) -> Dict[str, Any]:
    """Fit the check model of one-step MSE estimation on labelled reference
    data and write it to model (JSON). train is a CSV file, a pandas
    DataFrame (its columns by name) or a NumPy array (columns by 0-based
    index: target=0, prediction=1)."""
    with temp_dir() as tmp:
        path = train
        if is_dataframe(train):
            path = tmp / "train.csv"
            train.to_csv(path, index=False)
        elif not is_pathlike(train):
            np = numpy("mse_fit() on an array")
            arr = np.asarray(train, dtype=float)
            if arr.ndim != 2:
                raise ValueError(f"train: a 2-D array of rows, not one of shape {arr.shape}")
            path = tmp / "train.csv"
            write_csv(path, None, arr.tolist())
            options.setdefault("header", "no")
        return run("mse", "fit", train=path, target=target, prediction=prediction, model=model, **options)


def mse_estimate(model: Union[PathLike, Mapping[str, Any]], data: Table, **options: Any) -> Dict[str, Any]:
    """Estimate the deployed model's MSE on unlabelled production data per
    chunk (chunk_size=N, chunks=K or timestamp=COL with period=...).

    model is the check model mse_fit wrote (its path or the parsed
    document). data is a CSV file, a pandas DataFrame with the model's
    columns, or a NumPy array whose columns are the model's features in
    its order, then the prediction, then optionally the target (NaN for a
    label not arrived yet; the realised MSE is then computed beside the
    estimate)."""
    with temp_dir() as tmp:
        if isinstance(model, Mapping):
            doc = dict(model)
            model_path: PathLike = tmp / "check.json"
            Path(model_path).write_text(json.dumps(doc), encoding="utf-8")
        else:
            model_path = model
            doc = None
        path = data
        if is_dataframe(data):
            path = tmp / "data.csv"
            data.to_csv(path, index=False)
        elif not is_pathlike(data):
            if doc is None:
                doc = json.loads(Path(model_path).read_text(encoding="utf-8"))
            path = tmp / "data.csv"
            target = _array_table(path, doc, data)
            if target is not None and options.get("target") is None:
                options["target"] = target
        return run("mse", "estimate", model=model_path, data=path, **options)


def _array_table(path: Path, doc: Mapping[str, Any], data: Any) -> Optional[str]:
    """Write an array of rows (features in the model's order, prediction,
    optional target) as the CSV file the model reads; returns the target
    column's name when the array has one."""
    np = numpy("mse_estimate() on an array")
    cols = doc.get("columns") or {}
    feats: List[str] = [str(c) for c in cols.get("features") or []]
    pred, target = cols.get("prediction"), cols.get("target")
    if not feats or pred is None:
        raise GenlensError("model: no columns recorded (features, prediction): is it a check model from mse_fit?", kind="input", field="model")
    arr = np.asarray(data, dtype=float)
    k = len(feats)
    if arr.ndim != 2 or arr.shape[1] not in (k + 1, k + 2):
        raise GenlensError(
            f"data: an array of shape {arr.shape}; the check model wants rows of its {k} features ({', '.join(feats)}) "
            f"then the prediction ({pred}){f', optionally then the target ({target})' if target is not None else ''}: "
            f"{k + 1} or {k + 2} columns",
            kind="input",
            field="data",
        )
    with_target = arr.shape[1] == k + 2
    if with_target and target is None:
        raise GenlensError("data: the array has a target column, but the check model records no target column", kind="input", field="data")

    def cells(row: Any) -> List[Any]:
        out: List[Any] = [float(v) for v in row]
        if with_target and np.isnan(out[-1]):
            out[-1] = None  # a label that has not arrived: an empty cell
        return out

    if cols.get("header", True):
        header = feats + [str(pred)] + ([str(target)] if with_target else [])
        write_csv(path, header, (cells(r) for r in arr))
        return str(target) if with_target else None
    # A header-less model names columns by index: put each value in its
    # column, and leave the others (the target without one) empty.
    count = int(cols.get("count") or 0)
    where = [int(c) for c in feats] + [int(pred)] + ([int(target)] if with_target else [])
    count = max([count] + [w + 1 for w in where])

    def placed(row: Any) -> List[Any]:
        line: List[Any] = [None] * count
        for w, v in zip(where, cells(row)):
            line[w] = v
        return line

    write_csv(path, None, (placed(r) for r in arr))
    return str(target) if with_target else None


def version() -> str:
    """The version line of the genlens binary."""
    return str(run("version", json_output=False)).strip()


__all__ = ["compare", "fid", "stats", "features", "inception_score", "entropy", "mse_fit", "mse_estimate", "version"]
