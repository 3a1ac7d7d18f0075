"""Running the genlens binary: finding it, turning keyword arguments into
flags, reading its --json output and raising its errors as exceptions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

import numpy as np

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


def command_line(args: Sequence[Any], positional: Sequence[Any] = (), json_output: bool = True, **options: Any) -> list:
    """The argv after the binary: the command's words (args), its flags,
    ``--json``, then ``--`` and the positional inputs, so that an input
    whose name starts with ``-`` is read as a name, not as a flag."""
    def text(a: Any) -> str:
        return os.fspath(a) if isinstance(a, os.PathLike) else str(a)

    out = [text(a) for a in args] + flags(options)
    if json_output:
        out.append("--json")
    if positional:
        out += ["--"] + [text(a) for a in positional]
    return out


def run(*args: Any, positional: Sequence[Any] = (), json_output: bool = True, **options: Any) -> Any:
    """Run ``genlens ARGS --flags [--json] -- POSITIONAL`` and return its
    JSON document (or its standard output as text with json_output=False).
    ARGS are the command's words ("mse", "fit"); positional holds its
    positional inputs, passed after ``--``.

    Warnings genlens prints (lines "genlens: warning: ...") are raised as
    Python warnings; a failure raises GenlensError with genlens's kind and
    field."""
    cmd = [binary()] + command_line(args, positional, json_output, **options)
    proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
    for line in proc.stderr.splitlines():
        if line.startswith("genlens: warning: "):
            warnings.warn(line[len("genlens: warning: "):], GenlensWarning, stacklevel=3)
    if proc.returncode != 0:
        doc = _document(proc.stdout)
        if isinstance(doc, dict) and "error" in doc:
            raise GenlensError.from_document(doc, exit_code=proc.returncode, stderr=proc.stderr)
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        message = lines[-1] if lines else f"genlens exited with status {proc.returncode}"
        if message.startswith("genlens: "):
            message = message[len("genlens: "):]
        raise GenlensError(message, exit_code=proc.returncode, stderr=proc.stderr)
    if not json_output:
        return proc.stdout
    doc = _document(proc.stdout)
    if doc is None:
        raise GenlensError(f"genlens printed no JSON document: {proc.stdout[:200]!r}", stderr=proc.stderr)
    return doc


class GenlensWarning(UserWarning):
    """A warning genlens printed (a result that cannot mean much, weights that
    are not the published ones, ...)."""


def _document(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


@contextmanager
def as_files(*items: Any) -> Iterator[list]:
    """Paths for items that may be NumPy data: an array becomes a temporary
    .npy file, a mapping of arrays (for example {"mu": ..., "sigma": ...}) a
    temporary .npz file; a path stays as it is. The files are removed on
    exit."""
    with tempfile.TemporaryDirectory(prefix="genlens-py-") as tmp:
        paths = []
        for i, item in enumerate(items):
            if item is None or isinstance(item, (str, os.PathLike)):
                paths.append(item)
            elif isinstance(item, Mapping):
                p = Path(tmp, f"input{i}.npz")
                np.savez(p, **{k: np.asarray(v) for k, v in item.items()})
                paths.append(str(p))
            else:
                arr = np.asarray(item)
                if arr.dtype == object:
                    raise TypeError(f"argument {i + 1}: a path, a NumPy array or a mapping of arrays, not {type(item).__name__}")
                p = Path(tmp, f"input{i}.npy")
                np.save(p, arr)
                paths.append(str(p))
        yield paths


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
