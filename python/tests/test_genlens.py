"""Tests of the genlens Python package against the real binary
($GENLENS_BIN, else genlens on PATH) and a real `genlens serve`."""

import csv
import os
import re
import subprocess
import tempfile
import unittest
import warnings
from pathlib import Path

import numpy as np

import genlens
from genlens._cli import flags


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
            with np.load(out) as z:
                np.testing.assert_array_equal(z["mu"], s["mu"])


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


class CommandLineTest(unittest.TestCase):
    def test_positional_after_double_dash(self):
        # An input named like a flag is read as a name: it comes after
        # "--", behind every flag.
        argv = genlens._cli.command_line(["stats"], ["-x.npy"], out="/tmp/s.npz")
        self.assertEqual(argv, ["stats", "--out", "/tmp/s.npz", "--json", "--", "-x.npy"])
        self.assertEqual(genlens._cli.command_line(["mse", "fit"], train="t.csv"), ["mse", "fit", "--train", "t.csv", "--json"])

    def test_dash_named_input_runs(self):
        x = np.random.default_rng(1).normal(size=(30, 2))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp, "-features.npy")
            np.save(path, x)
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                s = genlens.stats("-features.npy")
            finally:
                os.chdir(cwd)
        self.assertEqual(s["n"], 30)
