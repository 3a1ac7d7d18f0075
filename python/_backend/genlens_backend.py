"""The build backend of the genlens Python package (PEP 517, with the
editable hooks of PEP 660), on the standard library alone.

pip runs it from the source tree (pyproject.toml names it with
``backend-path``), so ``pip install ./python`` needs no setuptools, no
wheel and no package index: the wheel is a zip file written here, with
the METADATA, WHEEL and RECORD files of the wheel format (PEP 427, the
core metadata 2.1) and a SHA-256 for every file. The sdist is the
source tree as a .tar.gz with PKG-INFO. Nothing is written into the
source tree, and the archives are the same bytes at every build
(timestamps from $SOURCE_DATE_EPOCH, else 1980-01-01).

What goes in comes from pyproject.toml: [project] (name, version,
description, readme, requires-python, dependencies,
optional-dependencies, license, classifiers, urls) and
[tool.genlens-backend] packages (default: the project's name) and
sdist-include (extra files of the sdist beside pyproject.toml, the readme,
the packages and this backend).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import stat
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
BACKEND_DIR = Path(__file__).resolve().parent
GENERATOR = "genlens_backend"
# Files that never go into an archive.
_SKIP_DIRS = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache", "build", "dist"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".egg-info", ".whl", ".tar.gz")


# ---------------------------------------------------------------- pyproject


def _toml(text: str) -> Dict[str, Any]:
    """pyproject.toml parsed: tomllib where Python has it (3.11+), else
    the subset of TOML a pyproject file like this one uses: [tables],
    keys = strings, integers, booleans, arrays (over several lines) and
    inline tables of those."""
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:
        return _MiniTOML(text).parse()
    return tomllib.loads(text)


class _MiniTOML:
    """A TOML reader for the subset _toml names; anything else is an
    error rather than a guess."""

    _bare = re.compile(r"[A-Za-z0-9_-]+")

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def error(self, what: str) -> ValueError:
        line = self.s.count("\n", 0, self.i) + 1
        return ValueError(f"pyproject.toml:{line}: {what} (this Python has no tomllib, and the backend reads a subset of TOML)")

    def parse(self) -> Dict[str, Any]:
        doc: Dict[str, Any] = {}
        table = doc
        while True:
            self.skip(newlines=True)
            if self.i >= len(self.s):
                return doc
            if self.s[self.i] == "[":
                if self.s.startswith("[[", self.i):
                    raise self.error("arrays of tables are not supported")
                self.i += 1
                keys = self.key()
                self.skip()
                self.expect("]")
                table = doc
                for k in keys:
                    table = table.setdefault(k, {})
                    if not isinstance(table, dict):
                        raise self.error(f"{'.'.join(keys)} is not a table")
                self.end_of_line()
                continue
            keys = self.key()
            self.skip()
            self.expect("=")
            self.skip()
            value = self.value()
            self.assign(table, keys, value)
            self.end_of_line()

    def assign(self, table: Dict[str, Any], keys: List[str], value: Any) -> None:
        for k in keys[:-1]:
            table = table.setdefault(k, {})
        if keys[-1] in table:
            raise self.error(f"{'.'.join(keys)} is defined twice")
        table[keys[-1]] = value

    def skip(self, newlines: bool = False) -> None:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            elif c == "#":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            else:
                return

    def end_of_line(self) -> None:
        self.skip()
        if self.i < len(self.s) and self.s[self.i] not in "\r\n":
            raise self.error(f"unexpected {self.s[self.i]!r}")

    def expect(self, c: str) -> None:
        if not self.s.startswith(c, self.i):
            raise self.error(f"expected {c!r}")
        self.i += len(c)

    def key(self) -> List[str]:
        keys = []
        while True:
            self.skip()
            if self.i < len(self.s) and self.s[self.i] in "\"'":
                keys.append(self.string())
            else:
                m = self._bare.match(self.s, self.i)
                if not m:
                    raise self.error("expected a key")
                keys.append(m.group())
                self.i = m.end()
            self.skip()
            if not self.s.startswith(".", self.i):
                return keys
            self.i += 1

    def value(self) -> Any:
        if self.i >= len(self.s):
            raise self.error("expected a value")
        c = self.s[self.i]
        if c in "\"'":
            return self.string()
        if c == "[":
            self.i += 1
            out = []
            while True:
                self.skip(newlines=True)
                if self.s.startswith("]", self.i):
                    self.i += 1
                    return out
                out.append(self.value())
                self.skip(newlines=True)
                if self.s.startswith(",", self.i):
                    self.i += 1
                elif not self.s.startswith("]", self.i):
                    raise self.error("expected ',' or ']' in an array")
        if c == "{":
            self.i += 1
            table: Dict[str, Any] = {}
            self.skip()
            if self.s.startswith("}", self.i):
                self.i += 1
                return table
            while True:
                keys = self.key()
                self.expect("=")
                self.skip()
                self.assign(table, keys, self.value())
                self.skip()
                if self.s.startswith("}", self.i):
                    self.i += 1
                    return table
                self.expect(",")
                self.skip()
        m = re.compile(r"true|false|[+-]?[0-9][0-9_]*(?![0-9A-Za-z.:_-])").match(self.s, self.i)
        if not m:
            raise self.error("unsupported value (strings, integers, booleans, arrays and inline tables only)")
        self.i = m.end()
        if m.group() in ("true", "false"):
            return m.group() == "true"
        return int(m.group().replace("_", ""))

    def string(self) -> str:
        q = self.s[self.i]
        if self.s.startswith(q * 3, self.i):
            raise self.error("multi-line strings are not supported")
        self.i += 1
        out = []
        while True:
            if self.i >= len(self.s) or self.s[self.i] == "\n":
                raise self.error("unterminated string")
            c = self.s[self.i]
            self.i += 1
            if c == q:
                return "".join(out)
            if c == "\\" and q == '"':
                e = self.s[self.i : self.i + 1]
                self.i += 1
                simple = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
                if e in simple:
                    out.append(simple[e])
                elif e in ("u", "U"):
                    n = 4 if e == "u" else 8
                    out.append(chr(int(self.s[self.i : self.i + n], 16)))
                    self.i += n
                else:
                    raise self.error(f"unknown escape \\{e}")
            else:
                out.append(c)


class Project:
    """What pyproject.toml says about the distribution."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root
        doc = _toml((root / "pyproject.toml").read_text(encoding="utf-8"))
        p = doc.get("project")
        if not isinstance(p, dict):
            raise ValueError("pyproject.toml has no [project] table")
        for key in ("name", "version"):
            if not isinstance(p.get(key), str):
                raise ValueError(f"pyproject.toml: [project] {key} is required here (a string; dynamic values are not supported)")
        self.p = p
        self.name: str = p["name"]
        self.version: str = p["version"]
        tool = doc.get("tool", {}).get("genlens-backend", {})
        self.packages: List[str] = list(tool.get("packages", [self.name.replace("-", "_")]))
        self.sdist_include: List[str] = list(tool.get("sdist-include", []))
        for pkg in self.packages:
            if not (root / pkg / "__init__.py").is_file():
                raise ValueError(f"pyproject.toml: package {pkg} has no {pkg}/__init__.py beside pyproject.toml")

    @property
    def dist_name(self) -> str:
        """The name as archive file names spell it (the wheel spec's escaping)."""
        return re.sub(r"[-_.]+", "_", self.name).lower()

    @property
    def dist_info(self) -> str:
        return f"{self.dist_name}-{self.version}.dist-info"

    @property
    def wheel_name(self) -> str:
        return f"{self.dist_name}-{self.version}-py3-none-any.whl"

    def readme(self) -> Tuple[Optional[str], Optional[str]]:
        """The readme's file name (relative) and content type, or Nones."""
        r = self.p.get("readme")
        if r is None:
            return None, None
        if isinstance(r, str):
            path, ctype = r, None
        else:
            path, ctype = r.get("file"), r.get("content-type")
            if path is None:
                raise ValueError("pyproject.toml: readme as a table needs file (inline text is not supported)")
        if ctype is None:
            suffix = Path(path).suffix.lower()
            ctype = {".md": "text/markdown", ".rst": "text/x-rst"}.get(suffix, "text/plain")
        return path, ctype

    def metadata(self) -> str:
        """The core metadata (METADATA in a wheel, PKG-INFO in an sdist)."""
        p = self.p
        lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}"]
        if p.get("description"):
            lines.append(f"Summary: {p['description']}")
        if p.get("requires-python"):
            lines.append(f"Requires-Python: {p['requires-python']}")
        lic = p.get("license")
        if isinstance(lic, dict) and lic.get("text"):
            lines.append(f"License: {lic['text']}")
        elif isinstance(lic, str):
            lines.append(f"License: {lic}")
        for key, field in (("authors", "Author-email"), ("maintainers", "Maintainer-email")):
            people = [a for a in p.get(key, []) if a.get("email")]
            if people:
                lines.append(f"{field}: " + ", ".join(f"{a['name']} <{a['email']}>" if a.get("name") else a["email"] for a in people))
        if p.get("keywords"):
            lines.append("Keywords: " + ",".join(p["keywords"]))
        for c in p.get("classifiers", []):
            lines.append(f"Classifier: {c}")
        for label, url in p.get("urls", {}).items():
            lines.append(f"Project-URL: {label}, {url}")
        for dep in p.get("dependencies", []):
            lines.append(f"Requires-Dist: {dep}")
        for extra, deps in p.get("optional-dependencies", {}).items():
            lines.append(f"Provides-Extra: {extra}")
            for dep in deps:
                marker = f'extra == "{extra}"'
                if ";" in dep:
                    req, cond = dep.split(";", 1)
                    lines.append(f"Requires-Dist: {req.strip()} ; ({cond.strip()}) and {marker}")
                else:
                    lines.append(f"Requires-Dist: {dep.strip()} ; {marker}")
        path, ctype = self.readme()
        body = ""
        if path is not None:
            lines.append(f"Description-Content-Type: {ctype}")
            body = (self.root / path).read_text(encoding="utf-8")
        for line in lines:
            if "\n" in line:
                raise ValueError(f"pyproject.toml: a metadata field spans lines: {line!r}")
        return "\n".join(lines) + "\n\n" + body

    def package_files(self) -> List[str]:
        """The packages' files, relative to the root, sorted."""
        out = []
        for pkg in self.packages:
            out += _walk(self.root, self.root / pkg)
        return sorted(out)

    def sdist_files(self) -> List[str]:
        """What the sdist holds besides PKG-INFO, relative to the root."""
        files = {"pyproject.toml"}
        readme, _ = self.readme()
        if readme:
            files.add(readme)
        files.update(self.package_files())
        files.update(_walk(self.root, BACKEND_DIR))
        for inc in self.sdist_include:
            p = self.root / inc
            if p.is_dir():
                files.update(_walk(self.root, p))
            elif p.is_file():
                files.add(inc)
            else:
                raise ValueError(f"pyproject.toml: sdist-include names {inc}, which is not beside pyproject.toml")
        return sorted(files)


def _walk(root: Path, top: Path) -> List[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        for f in sorted(filenames):
            if f.endswith(_SKIP_SUFFIXES):
                continue
            out.append(Path(dirpath, f).relative_to(root).as_posix())
    return out


# ---------------------------------------------------------------- archives


def _epoch() -> int:
    """The archives' timestamp: $SOURCE_DATE_EPOCH, else 1980-01-01 (the
    earliest a zip file holds)."""
    try:
        return max(int(os.environ["SOURCE_DATE_EPOCH"]), 315532800)
    except (KeyError, ValueError):
        return 315532800


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class _WheelWriter:
    """A wheel being written: files in order, then the dist-info's RECORD
    with the hash and size of each (and of the dist-info files)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records: List[Tuple[str, str, int]] = []
        self.date = time.gmtime(_epoch())[:6]

    def add(self, arcname: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(arcname, date_time=self.date)
        mode = 0o755 if executable else 0o644
        info.external_attr = (stat.S_IFREG | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        self.records.append((arcname, _record_hash(data), len(data)))

    def close(self, dist_info: str) -> None:
        record = f"{dist_info}/RECORD"
        lines = [f"{name},{h},{size}" for name, h, size in self.records]
        lines.append(f"{record},,")
        self.add(record, ("\n".join(lines) + "\n").encode("utf-8"))
        self.zip.close()


def _wheel_file() -> bytes:
    return f"Wheel-Version: 1.0\nGenerator: {GENERATOR}\nRoot-Is-Purelib: true\nTag: py3-none-any\n".encode("utf-8")


def _dist_info_files(project: Project) -> Dict[str, bytes]:
    return {
        "METADATA": project.metadata().encode("utf-8"),
        "WHEEL": _wheel_file(),
    }


def _write_wheel(project: Project, wheel_directory: str, files: Iterator[Tuple[str, bytes]]) -> str:
    out = Path(wheel_directory, project.wheel_name)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    w = _WheelWriter(tmp)
    try:
        for name, data in files:
            w.add(name, data)
        for name, data in _dist_info_files(project).items():
            w.add(f"{project.dist_info}/{name}", data)
        w.close(project.dist_info)
    except BaseException:
        w.zip.close()
        tmp.unlink()
        raise
    os.replace(tmp, out)
    return out.name


# ---------------------------------------------------------------- PEP 517 hooks


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    project = Project()
    d = Path(metadata_directory, project.dist_info)
    d.mkdir(parents=True, exist_ok=True)
    for name, data in _dist_info_files(project).items():
        (d / name).write_bytes(data)
    return project.dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    """The wheel of the packages named in pyproject.toml, in wheel_directory;
    returns its file name."""
    project = Project()
    files = ((rel, (project.root / rel).read_bytes()) for rel in project.package_files())
    return _write_wheel(project, wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    """A wheel whose .pth file puts the source tree on sys.path, so that
    edits to the packages take effect without reinstalling (PEP 660)."""
    project = Project()
    pth = (str(project.root) + "\n").encode("utf-8")
    return _write_wheel(project, wheel_directory, iter([(f"__editable__.{project.dist_name}-{project.version}.pth", pth)]))


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """The source distribution, NAME-VERSION.tar.gz in sdist_directory:
    the files that build the wheel again, and PKG-INFO."""
    project = Project()
    base = f"{project.dist_name}-{project.version}"
    out = Path(sdist_directory, base + ".tar.gz")
    out.parent.mkdir(parents=True, exist_ok=True)
    mtime = _epoch()

    def add(tar: tarfile.TarFile, rel: str, data: bytes) -> None:
        info = tarfile.TarInfo(f"{base}/{rel}")
        info.size = len(data)
        info.mtime = mtime
        info.mode = 0o644
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        tar.addfile(info, io.BytesIO(data))

    tmp = out.with_name(out.name + ".part")
    # gzip's header holds a timestamp too: write through GzipFile with it.
    import gzip

    try:
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for rel in project.sdist_files():
                    add(tar, rel, (project.root / rel).read_bytes())
                add(tar, "PKG-INFO", project.metadata().encode("utf-8"))
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise
    os.replace(tmp, out)
    return out.name
