"""Tests of the package's build backend (python/_backend): the wheel and
the sdist it writes, on the standard library alone. They need no genlens
binary."""

import ast
import base64
import csv
import hashlib
import importlib.util
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # python/


def load_backend(root=ROOT):
    spec = importlib.util.spec_from_file_location("genlens_backend_under_test", root / "_backend" / "genlens_backend.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


backend = load_backend()


def tree(root):
    """Every file under root (no __pycache__), relative."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        out.update(str(Path(dirpath, f).relative_to(root)) for f in filenames)
    return out


class WheelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.before = tree(ROOT)
        cls.wheel = Path(cls.tmp.name, backend.build_wheel(cls.tmp.name))
        cls.sdist = Path(cls.tmp.name, backend.build_sdist(cls.tmp.name))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_source_tree_untouched(self):
        # No build/, no *.egg-info, nothing else left in the source tree.
        self.assertEqual(tree(ROOT), self.before)

    def test_wheel_contents(self):
        self.assertEqual(self.wheel.name, "genlens-0.1.0-py3-none-any.whl")
        with zipfile.ZipFile(self.wheel) as z:
            names = z.namelist()
            self.assertIn("genlens/__init__.py", names)
            self.assertIn("genlens/py.typed", names)
            self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")], names)
            self.assertFalse([n for n in names if n.startswith(("tests/", "_backend/"))], names)
            self.assertEqual(names[-1], "genlens-0.1.0.dist-info/RECORD")
            wheel = z.read("genlens-0.1.0.dist-info/WHEEL").decode()
            self.assertIn("Root-Is-Purelib: true", wheel)
            self.assertIn("Tag: py3-none-any", wheel)
            meta = z.read("genlens-0.1.0.dist-info/METADATA").decode()
            # Every file's hash and size in RECORD, RECORD itself without.
            rows = list(csv.reader(io.StringIO(z.read("genlens-0.1.0.dist-info/RECORD").decode())))
            self.assertEqual(sorted(r[0] for r in rows), sorted(names))
            for name, h, size in rows:
                if name.endswith("/RECORD"):
                    self.assertEqual((h, size), ("", ""))
                    continue
                data = z.read(name)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((h, int(size)), (want, len(data)), name)
        self.assertTrue(meta.startswith("Metadata-Version: 2.1\nName: genlens\nVersion: 0.1.0\n"), meta[:200])
        self.assertIn("Requires-Python: >=3.9\n", meta)
        # NumPy and pandas are extras, not requirements.
        self.assertIn('Requires-Dist: numpy ; extra == "numpy"\n', meta)
        self.assertNotIn("Requires-Dist: numpy\n", meta)
        self.assertIn("Description-Content-Type: text/markdown\n\n# genlens for Python", meta)

    def test_reproducible(self):
        with tempfile.TemporaryDirectory() as other:
            again = Path(other, backend.build_wheel(other))
            self.assertEqual(again.read_bytes(), self.wheel.read_bytes())
            sd = Path(other, backend.build_sdist(other))
            self.assertEqual(sd.read_bytes(), self.sdist.read_bytes())

    def test_sdist_builds_the_same_wheel(self):
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(self.sdist) as t:
                names = t.getnames()
                self.assertIn("genlens-0.1.0/PKG-INFO", names)
                self.assertIn("genlens-0.1.0/pyproject.toml", names)
                self.assertIn("genlens-0.1.0/_backend/genlens_backend.py", names)
                self.assertIn("genlens-0.1.0/tests/test_backend.py", names)
                for m in t.getmembers():
                    self.assertTrue(m.isfile() and not m.name.startswith("/") and ".." not in m.name, m.name)
                if hasattr(tarfile, "data_filter"):
                    t.extractall(tmp, filter="data")
                else:
                    t.extractall(tmp)
            src = Path(tmp, "genlens-0.1.0")
            # As a frontend does: a fresh interpreter in the source tree.
            out = Path(tmp, "out")
            code = "import sys; sys.path.insert(0, '_backend'); import genlens_backend as b; print(b.build_wheel(sys.argv[1]))"
            res = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertEqual(Path(out, res.stdout.strip()).read_bytes(), self.wheel.read_bytes())

    def test_metadata_hook(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = backend.prepare_metadata_for_build_wheel(tmp)
            self.assertEqual(d, "genlens-0.1.0.dist-info")
            with zipfile.ZipFile(self.wheel) as z:
                self.assertEqual(Path(tmp, d, "METADATA").read_bytes(), z.read(d + "/METADATA"))
        self.assertEqual(backend.get_requires_for_build_wheel(), [])
        self.assertEqual(backend.get_requires_for_build_sdist(), [])

    def test_editable(self):
        with tempfile.TemporaryDirectory() as tmp:
            name = backend.build_editable(tmp)
            with zipfile.ZipFile(Path(tmp, name)) as z:
                pth = [n for n in z.namelist() if n.endswith(".pth")]
                self.assertEqual(len(pth), 1)
                self.assertEqual(z.read(pth[0]).decode().strip(), str(ROOT))


class TOMLTest(unittest.TestCase):
    def test_pyproject_as_tomllib_reads_it(self):
        text = (ROOT / "pyproject.toml").read_text()
        try:
            import tomllib
        except ImportError:
            self.skipTest("no tomllib in this Python (3.11+) to compare with")
        self.assertEqual(backend._MiniTOML(text).parse(), tomllib.loads(text))

    def test_subset(self):
        text = (
            "# comment\n[a]\nx = 'lit\\\\eral'\ny = \"esc \\\"q\\\" \\u00e9\"  # trailing\n"
            "z = [\n  1,\n  2, # two\n]\nt = {k = \"v\", n = {m = true}}\n[a.b]\n\"q k\".r = false\n"
        )
        want = {"a": {"x": "lit\\\\eral", "y": 'esc "q" é', "z": [1, 2], "t": {"k": "v", "n": {"m": True}}, "b": {"q k": {"r": False}}}}
        self.assertEqual(backend._MiniTOML(text).parse(), want)
        for bad in ("x = 1.5\n", 'x = """a"""\n', "[[a]]\n", "x = 1\nx = 2\n", "x = 'a\n"):
            with self.assertRaises(ValueError, msg=bad):
                backend._MiniTOML(bad).parse()


class SyntaxTest(unittest.TestCase):
    def test_oldest_supported_python(self):
        # requires-python >= 3.9: the package and its backend parse as
        # Python 3.9 (no match statements, no parenthesised context
        # managers, ...).
        files = sorted((ROOT / "genlens").glob("*.py")) + [ROOT / "_backend" / "genlens_backend.py"]
        for f in files:
            ast.parse(f.read_text(encoding="utf-8"), filename=str(f), feature_version=(3, 9))


if __name__ == "__main__":
    unittest.main()
