"""Running the genlens binary: finding it, turning keyword arguments into
flags, reading its --json output and raising its errors as exceptions.

NumPy and pandas are imported only where an array or a DataFrame is
given or an array returned, so the package works without them on paths."""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]

_binary: Optional[str] = None


class GenlensError(Exception):
    """An error genlens reported.

    ``kind`` is genlens's class of error ("input", "field", "usage",
    "not_found", ...), ``field`` the request field or flag at fault (with
    underscores, as the service spells it), ``index`` the 0-based position
    in a batch when one item was at fault. ``exit_code`` is set for the
    command line (2: bad usage or input, 1: runtime failure) and ``status``
    for the service (the HTTP status).
    """

    def __init__(
        self,
        message: str,
        kind: Optional[str] = None,
        field: Optional[str] = None,
        index: Optional[int] = None,
        exit_code: Optional[int] = None,
        status: Optional[int] = None,
        stderr: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.field = field
        self.index = index
        self.exit_code = exit_code
        self.status = status
        self.stderr = stderr

    @classmethod
    def from_document(cls, doc: Mapping[str, Any], **extra: Any) -> "GenlensError":
        return cls(
            str(doc.get("error", "")),
            kind=doc.get("kind"),
            field=doc.get("field"),
            index=doc.get("index"),
            **extra,
        )


class BinaryNotFound(GenlensError):
    """No genlens binary: neither set_binary, $GENLENS_BIN nor PATH gave one."""


class GenlensWarning(UserWarning):
    """A warning genlens printed or put in its JSON (a result that cannot
    mean much, weights that are not the published ones, an AUROC left
    empty, ...)."""


def set_binary(path: Optional[PathLike]) -> None:
    """Use the genlens binary at path (None: look it up again)."""
    global _binary
    _binary = None if path is None else os.fspath(path)


def binary() -> str:
    """The genlens binary to run: the one given to set_binary, else
    $GENLENS_BIN, else ``genlens`` on PATH."""
    for candidate in (_binary, os.environ.get("GENLENS_BIN")):
        if candidate:
            if not os.access(candidate, os.X_OK):
                raise BinaryNotFound(f"genlens binary {candidate} is not an executable file", kind="usage")
            return candidate
    found = shutil.which("genlens")
    if found is None:
        raise BinaryNotFound(
            "no genlens binary on PATH: install it with "
            "'go install github.com/genlens/genlens/cmd/genlens@latest' "
            "(or 'go install ./cmd/genlens' in a clone), "
            "or name it with genlens.set_binary(path) or $GENLENS_BIN",
            kind="usage",
        )
    return found


def numpy(what: str) -> Any:
    """NumPy, imported on first use; without it, an ImportError saying
    what needed it."""
    try:
        import numpy as np
    except ImportError:
        raise ImportError(
            f"{what} needs NumPy, which is not installed: pip install numpy "
            "(genlens's functions on paths work without it)"
        ) from None
    return np


def is_dataframe(value: Any) -> bool:
    """Whether value is a pandas DataFrame (told without importing pandas)."""
    t = type(value)
    return t.__module__.split(".")[0] == "pandas" and t.__name__ == "DataFrame"


def is_pathlike(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def flags(options: Mapping[str, Any]) -> list:
    """Command-line flags from keyword arguments: ``batch_size=50`` becomes
    ``--batch-size 50``, ``True`` a bare flag, ``False``/``None`` nothing,
    a list or tuple one comma-separated value."""
    out = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        name = "--" + key.replace("_", "-")
        if value is True:
            out.append(name)
        elif isinstance(value, (list, tuple)):
            out += [name, ",".join(str(v) for v in value)]
        elif isinstance(value, float):
            out += [name, repr(value)]
        else:
            out += [name, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return out


def run(*args: Any, inputs: Sequence[Any] = (), json_output: bool = True, **options: Any) -> Any:
    """Run ``genlens ARGS --flags [--json] [-- INPUTS]`` and return its
    JSON document (or its standard output as text with json_output=False).

    inputs are positional arguments (input files) and come after ``--``,
    so that a file name starting with a dash is not read as a flag.

    Warnings genlens prints (lines "genlens: warning: ...") or puts in its
    JSON document ("warnings"; Inception weights that are not the
    published ones) are raised as GenlensWarning; a failure raises
    GenlensError with genlens's kind and field."""
    cmd = [binary()] + [_arg(a) for a in args] + flags(options)
    if json_output:
        cmd.append("--json")
    if inputs:
        cmd += ["--"] + [_arg(a) for a in inputs]
    proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
    printed = []
    for line in proc.stderr.splitlines():
        if line.startswith("genlens: warning: "):
            printed.append(line[len("genlens: warning: ") :])
            _warn(printed[-1])
    if proc.returncode != 0:
        doc = _document(proc.stdout)
        if isinstance(doc, dict) and "error" in doc:
            raise GenlensError.from_document(doc, exit_code=proc.returncode, stderr=proc.stderr)
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        message = lines[-1] if lines else f"genlens exited with status {proc.returncode}"
        if message.startswith("genlens: "):
            message = message[len("genlens: ") :]
        raise GenlensError(message, exit_code=proc.returncode, stderr=proc.stderr)
    if not json_output:
        return proc.stdout
    doc = _document(proc.stdout)
    if doc is None:
        raise GenlensError(f"genlens printed no JSON document: {proc.stdout[:200]!r}", stderr=proc.stderr)
    document_warnings(doc, already=printed)
    return doc


def _arg(a: Any) -> str:
    return os.fspath(a) if isinstance(a, os.PathLike) else str(a)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _warn(message: str) -> None:
    """Warn at the first caller outside this package (the user's line)."""
    level = 2  # the stacklevel of sys._getframe(1), _warn's caller
    frame = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        level += 1
        frame = frame.f_back
    warnings.warn(message, GenlensWarning, stacklevel=level)


def document_warnings(doc: Any, already: Iterable[str] = ()) -> List[str]:
    """Raise as GenlensWarning what a JSON document of genlens warns of:
    its "warnings" entries (those not printed on stderr already), and
    Inception weights that are not the published FID file (a "weights"
    entry with "official": false, which the text output prints as a line
    and the JSON only records). Returns the messages."""
    seen = set(already)
    out = []
    if isinstance(doc, dict):
        for w in doc.get("warnings") or []:
            msg = str(w)
            if msg not in seen and not any(msg in s for s in seen):
                seen.add(msg)
                out.append(msg)
    for wi in _unofficial_weights(doc):
        sha = str(wi.get("sha256", ""))
        msg = (
            f"weights: {wi.get('path', '?')} (sha256 {sha[:12]}{'…' if len(sha) > 12 else ''}) are not the published "
            "FID Inception weights: not comparable with published FIDs"
        )
        if msg not in seen:
            seen.add(msg)
            out.append(msg)
    for msg in out:
        _warn(msg)
    return out


def _unofficial_weights(doc: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "weights" and isinstance(value, dict) and value.get("official") is False:
                yield value
            else:
                yield from _unofficial_weights(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _unofficial_weights(value)


def _document(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


@contextmanager
def as_files(*items: Any) -> Iterator[list]:
    """Paths for items that may be data: a pandas DataFrame becomes a
    temporary .csv (its columns as the header), a NumPy array (or a list
    NumPy turns into one) a temporary .npy, a mapping of arrays (for
    example {"mu": ..., "sigma": ...}) a temporary .npz; a path stays as
    it is. The files are removed on exit."""
    with tempfile.TemporaryDirectory(prefix="genlens-py-") as tmp:
        paths = []
        for i, item in enumerate(items):
            if item is None or is_pathlike(item):
                paths.append(item)
            elif is_dataframe(item):
                p = Path(tmp, f"input{i}.csv")
                item.to_csv(p, index=False)
                paths.append(str(p))
            elif isinstance(item, Mapping):
                np = numpy("a mapping of arrays")
                p = Path(tmp, f"input{i}.npz")
                np.savez(p, **{k: np.asarray(v) for k, v in item.items()})
                paths.append(str(p))
            else:
                np = numpy(f"an input of type {type(item).__name__} (a path, an array, a DataFrame or a mapping of arrays)")
                arr = np.asarray(item)
                if arr.dtype == object:
                    raise TypeError(f"argument {i + 1}: a path, a NumPy array, a DataFrame or a mapping of arrays, not {type(item).__name__}")
                p = Path(tmp, f"input{i}.npy")
                np.save(p, arr)
                paths.append(str(p))
        yield paths


@contextmanager
def temp_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="genlens-py-") as tmp:
        yield Path(tmp)


def write_csv(path: Path, header: Optional[Sequence[str]], rows: Iterable[Sequence[Any]]) -> None:
    """A CSV file genlens reads: numbers in the shortest form that parses
    back, None as an empty cell."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if header is not None:
            w.writerow(header)
        for row in rows:
            w.writerow(["" if v is None else (repr(float(v)) if _is_number(v) else v) for v in row])


def _is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return type(v).__module__ == "numpy" and hasattr(v, "dtype") and v.dtype.kind in "iuf"


def json_value(v: Any) -> Any:
    """A value json can write: NumPy scalars and arrays as Python numbers
    and lists, pandas timestamps as ISO 8601 text."""
    if hasattr(v, "isoformat") and callable(v.isoformat):
        return v.isoformat()
    if hasattr(v, "tolist") and callable(v.tolist):
        return v.tolist()
    if hasattr(v, "item") and callable(v.item):
        return v.item()
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")


def is_missing(v: Any) -> bool:
    """None or a float NaN (pandas's missing cell)."""
    return v is None or (isinstance(v, float) and math.isnan(v))


@contextmanager
def output_path(out: Optional[PathLike], suffix: str) -> Iterator[str]:
    """The file a command writes: out when given, else a temporary one that
    is removed on exit (genlens never overwrites a file it did not write)."""
    if out is not None:
        yield os.fspath(out)
        return
    with tempfile.TemporaryDirectory(prefix="genlens-py-") as tmp:
        yield str(Path(tmp, "out" + suffix))


def as_sequence(value: Union[str, Sequence[str], None]) -> Optional[list]:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return list(value)
