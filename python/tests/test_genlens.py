"""Tests of the genlens Python package against the real binary
($GENLENS_BIN, else genlens on PATH) and a real `genlens serve`.

NumPy and pandas are optional: the tests that need them skip without
them, and those on paths run in a virtual environment that has neither
(cmd/genlens/python_test.go runs both ways)."""

import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest
import warnings
from pathlib import Path

try:
    import numpy as np
except ImportError:
    np = None
try:
    import pandas as pd
except ImportError:
    pd = None

import genlens
from genlens._cli import document_warnings, flags

needs_numpy = unittest.skipIf(np is None, "NumPy is not installed")
needs_pandas = unittest.skipIf(pd is None or np is None, "pandas is not installed")


def shared_data():
    """The test data beside the repository, or None."""
    d = Path(os.environ.get("GENLENS_SHARED_DATA") or Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
    return d if d.is_dir() else None


def write_rows(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        if header:
            w.writerow(header)
        w.writerows(rows)


def gauss_rows(seed, n, d, shift=0.0):
    r = random.Random(seed)
    return [[r.gauss(shift, 1.0) for _ in range(d)] for _ in range(n)]


def cli_json(*args):
    """What the binary prints with --json, run directly."""
    out = subprocess.run([genlens.binary(), *map(str, args), "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


class FlagsTest(unittest.TestCase):
    def test_flags(self):
        cases = [
            ({"batch_size": 50}, ["--batch-size", "50"]),
            ({"recursive": True}, ["--recursive"]),
            ({"recursive": False, "weights": None}, []),
            ({"metrics": ["fid", "kid"]}, ["--metrics", "fid,kid"]),
            ({"gamma": 0.1}, ["--gamma", "0.1"]),
            ({"out": Path("/tmp/x.npz")}, ["--out", "/tmp/x.npz"]),
        ]
        for options, want in cases:
            self.assertEqual(flags(options), want, options)

    def test_installed(self):
        # Under `go test ./python` the package comes from pip's target.
        want = os.environ.get("GENLENS_EXPECT_PACKAGE_IN")
        if want:
            self.assertTrue(genlens.__file__.startswith(want), genlens.__file__)

    def test_missing_binary(self):
        genlens.set_binary("/nonexistent/genlens")
        try:
            with self.assertRaises(genlens.BinaryNotFound) as cm:
                genlens.version()
            self.assertIn("/nonexistent/genlens", str(cm.exception))
        finally:
            genlens.set_binary(None)


class PathsTest(unittest.TestCase):
    """What works without NumPy: files in, dicts out."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_compare_equals_command_line(self):
        a, b = self.dir / "a.csv", self.dir / "b.csv"
        write_rows(a, ["f0", "f1", "f2"], gauss_rows(1, 200, 3))
        write_rows(b, ["f0", "f1", "f2"], gauss_rows(2, 200, 3, shift=0.5))
        self.assertEqual(genlens.compare(a, b)["fid"], cli_json("compare", a, b)["fid"])
        self.assertEqual(genlens.fid(str(a), str(b)), cli_json("compare", a, b)["fid"])

    def test_input_starting_with_a_dash(self):
        # A file named "-answers.jsonl" given as the positional input is
        # passed after "--", not read as a flag.
        rows = [{"id": f"q{i}", "samples": ["a b", "a b", "a c"], "answer": "a b", "reference": "a b" if i % 2 else "x"} for i in range(6)]
        (self.dir / "-answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            got = genlens.entropy("-answers.jsonl")
        finally:
            os.chdir(cwd)
        self.assertEqual(got["summary"]["n"], 6)

    def test_entropy_rows_and_auroc_reason(self):
        # Every answer correct: genlens leaves the AUROCs empty and says
        # why in its JSON's warnings; the package raises that as a
        # GenlensWarning and keeps it beside the AUROCs.
        rows = [{"id": f"q{i}", "samples": ["paris", "paris", "lyon"], "answer": "paris", "reference": "paris"} for i in range(4)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = genlens.entropy(rows)
        self.assertIsNone(got["summary"]["auroc"]["kernel_entropy"])
        self.assertIn("every one of the 4 labelled answers is correct", got["summary"]["auroc_reason"])
        self.assertTrue(any(issubclass(w.category, genlens.GenlensWarning) and "AUROC" in str(w.message) for w in caught), [str(w.message) for w in caught])
        # With correct and incorrect answers there is an AUROC and no reason.
        rows[0]["reference"] = "rome"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = genlens.entropy(rows)
        self.assertIsNotNone(got["summary"]["auroc"]["kernel_entropy"])
        self.assertNotIn("auroc_reason", got["summary"])

    def test_device(self):
        a = self.dir / "a.csv"
        write_rows(a, None, gauss_rows(3, 50, 2))
        want = cli_json("compare", a, a)["fid"]
        # pytorch-fid's keywords: device cpu, batch_size and num_workers
        # (genlens's batch and workers) are accepted.
        # As pytorch-fid, fid() ignores batch_size and num_workers when no
        # input is a folder of images; compare() refuses a batch other than
        # its default there, as genlens does.
        self.assertEqual(genlens.fid(a, a, batch_size=50, device="cpu", num_workers=2), want)
        with self.assertRaises(genlens.GenlensError) as cm:
            genlens.compare(a, a, batch_size=64)
        self.assertIn("only to folders", str(cm.exception))
        self.assertEqual(genlens.fid(a, a, device="CPU"), want)
        for device in ("cuda", "cuda:0", "mps"):
            with self.assertRaises(genlens.GenlensError) as cm:
                genlens.fid(a, a, device=device)
            self.assertEqual(cm.exception.field, "device")
            self.assertIn("CPU only", str(cm.exception))
            self.assertIn(device, str(cm.exception))

    def test_unofficial_weights_warn(self):
        # A document as the command line writes it for folders embedded
        # with weights that are not the published file.
        doc = {"fid": 1.0, "images": {"weights": {"path": "/w/inception_random.pth", "sha256": "3807d25d7a8838957f4c", "official": False}}}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            document_warnings(doc)
        self.assertEqual(len(caught), 1)
        self.assertIn("not the published FID Inception weights", str(caught[0].message))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            document_warnings({"images": {"weights": {"path": "x", "official": True}}, "weights": {"path": "y"}})
        self.assertEqual(caught, [])

    def test_unofficial_weights_warn_from_folders(self):
        data = shared_data()
        if data is None:
            self.skipTest("shared data not found (GENLENS_SHARED_DATA): no Inception weights to embed images with")
        fx = data / "fixtures" / "inception_random"
        real, fake = self.dir / "real", self.dir / "fake"
        real.mkdir()
        fake.mkdir()
        for i in range(3):
            (real / f"img{i}.png").write_bytes((fx / "images" / f"img00{i}.png").read_bytes())
            (fake / f"img{i}.png").write_bytes((fx / "images" / f"img00{i + 3}.png").read_bytes())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = genlens.compare(real, fake, weights=fx / "inception_random.pth", no_cache=True)
        self.assertIs(got["images"]["weights"]["official"], False)
        msgs = [str(w.message) for w in caught if issubclass(w.category, genlens.GenlensWarning)]
        self.assertTrue(any("not the published FID Inception weights" in m for m in msgs), msgs)

    def test_no_numpy(self):
        # Without NumPy the package imports and works on paths, and an
        # array input or output says that it needs NumPy.
        a = self.dir / "a.csv"
        write_rows(a, None, gauss_rows(4, 30, 2))
        code = (
            "import sys; sys.modules['numpy'] = None\n"
            "import genlens\n"
            f"print(genlens.compare({str(a)!r}, {str(a)!r})['fid'])\n"
            "try:\n"
            f"    genlens.stats({str(a)!r})\n"
            "except ImportError as e:\n"
            "    print('ImportError:', e)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("ImportError: stats(), which returns mu and sigma as arrays, needs NumPy", out.stdout)


@needs_numpy
class CommandsTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(7)

    def test_fid_closed_form(self):
        # Two Gaussians with the same covariance: FID = |mu1 - mu2|^2.
        d = 5
        sigma = np.diag(np.arange(1.0, d + 1))
        a = {"mu": np.zeros(d), "sigma": sigma}
        b = {"mu": np.full(d, 0.5), "sigma": sigma}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = genlens.fid(a, b)
        self.assertAlmostEqual(got, d * 0.25, places=9)
        # Statistics without provenance are compared with one warning.
        self.assertTrue(any(issubclass(w.category, genlens.GenlensWarning) and "provenance" in str(w.message) for w in caught))

    def test_compare_arrays(self):
        a = self.rng.normal(size=(300, 4))
        b = self.rng.normal(size=(300, 4)) + 1.0
        got = genlens.compare(a, b, metrics=["fid", "kid"], kid_subset_size=100)
        self.assertEqual(got["n_real"], 300)
        self.assertEqual(got["dim"], 4)
        self.assertGreater(got["fid"], 3.0)  # |shift|^2 = 4, minus sampling noise
        self.assertIn("mean", got["kid"])

    def test_error_carries_kind_and_field(self):
        a = self.rng.normal(size=(50, 3))
        with self.assertRaises(genlens.GenlensError) as cm:
            genlens.compare(a, a, metrics="kid")
        e = cm.exception
        self.assertEqual(e.exit_code, 2)
        self.assertEqual(e.kind, "field")
        self.assertEqual(e.field, "kid_subset_size")

    def test_stats(self):
        x = self.rng.normal(size=(400, 6))
        s = genlens.stats(x)
        self.assertEqual(s["n"], 400)
        np.testing.assert_allclose(s["mu"], x.mean(axis=0), rtol=0, atol=1e-12)
        np.testing.assert_allclose(s["sigma"], np.cov(x, rowvar=False), rtol=1e-10, atol=1e-12)

    def test_stats_keeps_out(self):
        x = self.rng.normal(size=(20, 2))
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp, "s.npz")
            s = genlens.stats(x, out=out)
            self.assertTrue(out.exists())
            self.assertEqual(s["path"], str(out))
            with np.load(out) as z:
                np.testing.assert_array_equal(z["mu"], s["mu"])

    def test_stats_names_no_removed_file(self):
        # Without out the statistics file was temporary: the result names
        # no path that no longer exists.
        s = genlens.stats(self.rng.normal(size=(20, 2)))
        self.assertNotIn("path", s)
        self.assertEqual(s["n"], 20)

    def test_stats_input_starting_with_a_dash(self):
        with tempfile.TemporaryDirectory() as tmp:
            np.save(Path(tmp, "-x.npy"), self.rng.normal(size=(10, 2)))
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                s = genlens.stats("-x.npy")
            finally:
                os.chdir(cwd)
        self.assertEqual(s["n"], 10)

    def test_mse_estimate_array(self):
        rng = np.random.default_rng(11)
        x = rng.normal(size=(300, 2))
        y = x[:, 0] + 0.3 * rng.normal(size=300)
        pred = 0.9 * x[:, 0]
        with tempfile.TemporaryDirectory() as tmp:
            train = Path(tmp, "train.csv")
            write_rows(train, ["x0", "y", "x1", "pred"], zip(x[:, 0], y, x[:, 1], pred))
            model = Path(tmp, "check.json")
            genlens.mse_fit(train, target="y", prediction="pred", model=model, epochs=20)
            ops = np.column_stack([x[:200], pred[:200]])
            by_array = genlens.mse_estimate(model, ops, chunk_size=100)
            path = Path(tmp, "ops.csv")
            write_rows(path, ["x0", "x1", "pred"], ops.tolist())
            by_file = genlens.mse_estimate(model, path, chunk_size=100)
            self.assertEqual([c["estimated_mse"] for c in by_array["chunks"]], [c["estimated_mse"] for c in by_file["chunks"]])
            # A target column after the prediction: realised MSE, with NaN
            # for the labels that have not arrived.
            t = y[:200].copy()
            t[::2] = np.nan
            labelled = genlens.mse_estimate(model, np.column_stack([ops, t]), chunk_size=100)
            self.assertEqual(labelled["chunks"][0]["estimated_mse"], by_file["chunks"][0]["estimated_mse"])
            self.assertIsNotNone(labelled["chunks"][0].get("realized_mse"), labelled["chunks"][0])
            # The parsed model is accepted too.
            doc = json.loads(model.read_text())
            self.assertEqual(genlens.mse_estimate(doc, ops, chunk_size=100)["chunks"][0]["estimated_mse"], by_file["chunks"][0]["estimated_mse"])
            with self.assertRaises(genlens.GenlensError) as cm:
                genlens.mse_estimate(model, x, chunk_size=100)
            self.assertEqual(cm.exception.field, "data")
            self.assertIn("x0, x1", str(cm.exception))


@needs_pandas
class DataFrameTest(unittest.TestCase):
    """pandas DataFrames where genlens takes a table: written to CSV (or
    JSON lines for answers) for the command line."""

    def test_compare(self):
        rng = np.random.default_rng(2)
        a, b = rng.normal(size=(100, 3)), rng.normal(size=(100, 3)) + 0.3
        cols = ["f0", "f1", "f2"]
        self.assertAlmostEqual(genlens.fid(pd.DataFrame(a, columns=cols), pd.DataFrame(b, columns=cols)), genlens.fid(a, b), places=9)
        s = genlens.stats(pd.DataFrame(a, columns=cols))
        np.testing.assert_allclose(s["mu"], a.mean(axis=0), rtol=0, atol=1e-12)

    def test_mse(self):
        rng = np.random.default_rng(4)
        x = rng.normal(size=(300, 2))
        df = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "y": x[:, 0] + 0.3 * rng.normal(size=300), "pred": 0.9 * x[:, 0]})
        with tempfile.TemporaryDirectory() as tmp:
            model = Path(tmp, "check.json")
            genlens.mse_fit(df, target="y", prediction="pred", model=model, epochs=20)
            today = df.iloc[:200].copy()
            today.loc[today.index[::2], "y"] = np.nan  # labels not arrived
            got = genlens.mse_estimate(model, today, chunk_size=100, target="y")
            path = Path(tmp, "today.csv")
            today.to_csv(path, index=False)
            want = genlens.mse_estimate(model, path, chunk_size=100, target="y")
            self.assertEqual(got["chunks"], want["chunks"])

    def test_entropy(self):
        df = pd.DataFrame(
            {
                "id": ["a", "b", "c", "d"],
                "samples": [["paris", "paris"], ["rome", "milan"], ["oslo", "oslo"], ["bonn", "berlin"]],
                "answer": ["paris", "rome", "oslo", "bonn"],
                "reference": ["paris", "milan", "oslo", "berlin"],
                "correct": [True, np.nan, None, False],  # a missing cell is left out of its row
            }
        )
        got = genlens.entropy(df)
        self.assertEqual({i["id"]: i["correct"] for i in got["items"]}, {"a": True, "b": False, "c": True, "d": False})



def start_serve(tmp):
    token = "py-test-token-0123456789"
    env = dict(os.environ, GENLENS_TEST_TOKEN=token)
    proc = subprocess.Popen(
        [genlens.binary(), "serve", "--addr", "127.0.0.1:0", "--db", str(Path(tmp, "genlens.db")), "--token-env", "GENLENS_TEST_TOKEN"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp,
    )
    for line in proc.stderr:
        m = re.search(r"url=(http://\S+)", line)
        if m:
            return proc, m.group(1), token
    proc.kill()
    raise RuntimeError("genlens serve did not start")


class ClientOfflineTest(unittest.TestCase):
    """What the client refuses before sending anything."""

    def test_nan_row(self):
        c = genlens.Client("http://127.0.0.1:9")  # nothing listens: nothing must be sent
        rows = [{"id": "r0", "features": {"x0": 0.5}, "prediction": 1.0}, {"id": "r1", "features": {"x0": float("nan")}, "prediction": 1.0}]
        with self.assertRaises(genlens.GenlensError) as cm:
            c.send_rows(1, rows)
        e = cm.exception
        self.assertEqual((e.kind, e.field, e.index), ("input", "features.x0", 1))
        self.assertIn("rows[1] (id 'r1') features.x0: nan is not a finite number", str(e))
        rows[1]["features"]["x0"] = 0.1
        rows[0]["prediction"] = float("inf")
        with self.assertRaises(genlens.GenlensError) as cm:
            c.send_rows(1, rows)
        self.assertEqual((cm.exception.field, cm.exception.index), ("prediction", 0))
        with self.assertRaises(genlens.GenlensError) as cm:
            c.send_labels(1, {"r0": 1.0, "r1": float("nan")})
        self.assertEqual((cm.exception.field, cm.exception.index), ("target", 1))
        with self.assertRaises(genlens.GenlensError) as cm:
            c.submit("compare", gamma=float("nan"))
        self.assertEqual(cm.exception.kind, "input")

    @needs_pandas
    def test_nan_in_frame(self):
        c = genlens.Client("http://127.0.0.1:9")
        df = pd.DataFrame({"id": [1, 2], "x0": [0.1, np.nan], "prediction": [1.0, 2.0]})
        with self.assertRaises(genlens.GenlensError) as cm:
            c.send_rows(1, df)
        self.assertEqual((cm.exception.field, cm.exception.index), ("features.x0", 1))
        with self.assertRaises(genlens.GenlensError) as cm:
            c.send_rows(1, df, prediction="pred")
        self.assertIn("no column 'pred'", str(cm.exception))


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.proc, cls.url, token = start_serve(cls.tmp.name)
        cls.client = genlens.Client(cls.url, token=token + "\n")  # a secret file's newline is trimmed

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(timeout=30)
        cls.proc.stderr.close()
        cls.tmp.cleanup()

    def test_unauthorised(self):
        with self.assertRaises(genlens.GenlensError) as cm:
            genlens.Client(self.url, token="wrong-token-0123456789").monitors()
        self.assertEqual(cm.exception.status, 401)

    @needs_numpy
    def test_monitor_flow(self):
        rng = np.random.default_rng(3)
        tmp = Path(self.tmp.name)
        train = tmp / "train.csv"
        x = rng.normal(size=(400, 2))
        y = x[:, 0] + 0.3 * rng.normal(size=400)
        pred = 0.9 * x[:, 0]
        with open(train, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["x0", "x1", "y", "pred"])
            w.writerows(zip(x[:, 0], x[:, 1], y, pred))
        model = tmp / "check.json"
        fit = genlens.mse_fit(train, target="y", prediction="pred", model=model, epochs=20)
        self.assertTrue(model.exists(), fit)

        m = self.client.create_monitor("py-test", model, chunk_size=50)
        self.assertEqual(m["name"], "py-test")
        rows = [{"id": f"r{i}", "features": {"x0": float(x[i, 0]), "x1": float(x[i, 1])}, "prediction": float(pred[i])} for i in range(100)]
        self.client.send_rows(m["id"], rows)
        self.client.send_labels(m["id"], {f"r{i}": float(y[i]) for i in range(100)})
        chunks = self.client.chunks(m["id"])
        self.assertEqual(chunks["rows"], 100)
        self.assertEqual(len(chunks["chunks"]), 2)
        self.assertIn(m["id"], [mm["id"] for mm in self.client.monitors()])

        # A row naming a feature the model lacks: the service's error,
        # with its field and the row's index.
        bad = [rows[0] | {"id": "z"}, {"id": "z2", "features": {"x0": 1.0, "nope": 2.0}, "prediction": 0.0}]
        with self.assertRaises(genlens.GenlensError) as cm:
            self.client.send_rows(m["id"], bad)
        self.assertEqual(cm.exception.status, 422)
        self.assertEqual(cm.exception.index, 1)
        self.client.delete_monitor(m["id"])
        with self.assertRaises(genlens.GenlensError) as cm:
            self.client.monitor(m["id"])
        self.assertEqual(cm.exception.status, 404)

    @needs_pandas
    def test_monitor_frames(self):
        rng = np.random.default_rng(8)
        tmp = Path(self.tmp.name)
        x = rng.normal(size=(300, 2))
        df = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "y": x[:, 0] + 0.3 * rng.normal(size=300), "pred": 0.9 * x[:, 0]})
        model = tmp / "check-frames.json"
        genlens.mse_fit(df, target="y", prediction="pred", model=model, epochs=20)
        m = self.client.create_monitor("py-frames", model, period="day")
        rows = df.iloc[:60].reset_index().rename(columns={"index": "id"})
        rows["ts"] = pd.Timestamp("2026-01-01") + pd.to_timedelta(rows["id"] // 20, unit="D")
        self.client.send_rows(m["id"], rows.drop(columns=["y"]), prediction="pred", timestamp="ts")
        self.client.send_labels(m["id"], rows.set_index("id")["y"])
        chunks = self.client.chunks(m["id"])
        self.assertEqual(chunks["rows"], 60)
        self.assertEqual(len(chunks["chunks"]), 3)
        self.client.delete_monitor(m["id"])

    def test_job_artifacts(self):
        # The client snippet of docs/python.md: a stats job writes
        # stats.npz; a compare job writes nothing, and its "artifacts" is
        # an empty list rather than missing.
        tmp = Path(self.tmp.name)
        a = tmp / "feats.csv"
        write_rows(a, None, gauss_rows(6, 40, 3))
        up = self.client.upload(a)
        job = self.client.wait(self.client.submit("stats", **{"in": up["id"]})["id"], timeout=60)
        names = [x["name"] for x in job["artifacts"]]
        self.assertEqual(names, ["stats.npz"])
        self.assertEqual(self.client.artifacts(job["id"]), job["artifacts"])
        data = self.client.artifact(job["id"], names[0])
        self.assertEqual(data[:2], b"PK")  # an .npz is a zip file
        cmp = self.client.wait(self.client.submit("compare", real=up["id"], fake=up["id"])["id"], timeout=60)
        self.assertEqual(cmp["artifacts"], [])

    @needs_numpy
    def test_job_flow(self):
        rng = np.random.default_rng(5)
        tmp = Path(self.tmp.name)
        np.save(tmp / "real.npy", rng.normal(size=(200, 3)))
        np.save(tmp / "fake.npy", rng.normal(size=(200, 3)) + 0.5)
        real = self.client.upload(tmp / "real.npy")
        fake = self.client.upload(tmp / "fake.npy")
        sub = self.client.submit("compare", real=real["id"], fake=fake["id"])
        job = self.client.wait(sub["id"], timeout=60)
        want = genlens.compare(tmp / "real.npy", tmp / "fake.npy")["fid"]
        self.assertAlmostEqual(job["result"]["fid"], want, places=9)

        bad = self.client.submit("compare", real=real["id"], fake=fake["id"], metrics="kid")
        with self.assertRaises(genlens.GenlensError) as cm:
            self.client.wait(bad["id"], timeout=60)
        self.assertEqual(cm.exception.kind, "field")
        self.assertIn("kid_subset_size", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

