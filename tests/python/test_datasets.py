"""qsweep.open(...).dataset(group): a group as an xarray Dataset on the sweep's axes (docs/python.md,
"Datasets on the sweep's axes"), and the meanings of version 6 in files of version 5.

Usage: test_datasets.py QSWEEP_BINARY SOURCE_DIR, under /usr/bin/python3 with the build's python
directory on PYTHONPATH (tests/CMakeLists.txt sets it); needs python3-xarray.
"""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import xarray

QSWEEP, SOURCE = sys.argv[1], sys.argv[2]

import qsweep  # noqa: E402

# A grid: family x N x lambda (linspace: its second value is 0.30000000000000004), exact and
# simulate on the same points.
SWEEP = """
name: datasets
seed: 5
blocks:
  - method: exact
    family: ring
    N: [4, 6]
    lambda: {linspace: [0.1, 0.5, 3]}
    qmax: 10
  - method: exact
    family: complete
    d: 2
    N: [4, 6]
    lambda: {linspace: [0.1, 0.5, 3]}
    qmax: 10
  - method: simulate
    family: ring
    N: [4, 6]
    lambda: {linspace: [0.1, 0.5, 3]}
    horizon: 4000
  - method: simulate
    family: complete
    d: 2
    N: [4, 6]
    lambda: {linspace: [0.1, 0.5, 3]}
    horizon: 4000
  - method: meanfield
    policy: redundancy_coc
    policy_d: 2
    lambda: {linspace: [0.1, 0.5, 3]}
"""


def setUpModule():
    global scratch, path
    scratch = tempfile.TemporaryDirectory()
    sweep = os.path.join(scratch.name, "datasets.yaml")
    with open(sweep, "w") as f:
        f.write(SWEEP)
    path = os.path.join(scratch.name, "datasets.h5")
    subprocess.run([QSWEEP, "run", sweep, "-o", path, "--quiet"], check=True)


def tearDownModule():
    scratch.cleanup()


class Grid(unittest.TestCase):
    def test_dimensions_are_the_axes_with_units_everywhere(self):
        results = qsweep.open(path)
        for group in ("exact", "simulate"):
            ds = results.dataset(group)
            self.assertEqual(ds.attrs["layout"], "grid")
            self.assertEqual([d for d in ds["EQ"].dims], ["family", "N", "lambda"])
            self.assertEqual(list(ds["family"].values), ["ring", "complete"])
            self.assertEqual(list(ds["N"].values), [4, 6])
            self.assertEqual(list(ds["lambda"].values), [0.1, 0.3, 0.5])
            # d follows from the family: a coordinate along it, NaN where it does not apply.
            self.assertEqual(ds["d"].dims, ("family",))
            self.assertTrue(np.isnan(ds["d"].sel(family="ring")))
            self.assertEqual(float(ds["d"].sel(family="complete")), 2.0)
            for name, variable in ds.variables.items():
                if variable.dtype.kind in "fiu":
                    self.assertIn("units", variable.attrs, f"{group}/{name}")
                    self.assertIn(variable.attrs["units"], ("1", "s", "s-1"), f"{group}/{name}")
            self.assertEqual(ds["ET"].attrs["model_units"], "time")
            self.assertEqual(ds["EQ"].attrs["model_units"], "jobs")
            self.assertIn("system", ds["EQ"].attrs["description"])
            self.assertEqual(ds["warning"].dims, ("family", "N", "lambda"))
        # The stored value of the linspace point is 0.1 + 0.2; the coordinate is 0.3.
        stored = qsweep.open(path)["exact"]["lambda"]
        self.assertIn(0.1 + 0.2, list(stored))
        exact = results.dataset("exact")
        picked = exact["EQ"].sel(family="ring", N=4).sel({"lambda": 0.3})
        row = results["exact"].select(family="ring", N=4, **{"lambda": 0.1 + 0.2})
        self.assertEqual(float(picked), row["EQ"][0])
        nearest = exact["EQ"].sel(family="ring", N=4).sel({"lambda": 0.29}, method="nearest")
        self.assertEqual(float(nearest), float(picked))
        # EQ_per_server is EQ / N in every cell.
        np.testing.assert_array_equal(exact["EQ_per_server"], exact["EQ"] / exact["N"])

    def test_exact_and_simulate_join_on_their_axes(self):
        results = qsweep.open(path)
        exact, simulate = results.dataset("exact"), results.dataset("simulate")
        joined = xarray.merge([exact[["EQ", "EQ_per_server"]].rename(EQ="EQ_exact",
                                                                     EQ_per_server="q_exact"),
                               simulate[["EQ", "EQ_hw", "hw99_factor", "EQ_per_server",
                                         "EQ_per_server_hw", "flags"]]], join="exact")
        self.assertEqual(joined["EQ"].size, 12)
        # The same meaning: the exact mean within the simulated 99% interval, in each cell.
        half_width = joined["EQ_hw"] * joined["hw99_factor"]
        self.assertTrue(bool((abs(joined["EQ"] - joined["EQ_exact"]) <= half_width).all()),
                        (joined["EQ"] - joined["EQ_exact"]) / half_width)
        self.assertTrue(bool((abs(joined["EQ_per_server"] - joined["q_exact"]) <=
                              joined["EQ_per_server_hw"] * joined["hw99_factor"]).all()))
        # Per server is the whole divided by N, for the simulated interval too.
        np.testing.assert_allclose(joined["EQ_per_server_hw"], joined["EQ_hw"] / joined["N"],
                                   rtol=1e-15)

    def test_meanfield_per_server_means(self):
        mf = qsweep.open(path).dataset("meanfield")
        self.assertEqual(mf["EQ_per_server"].dims, ("lambda",))
        # Redundancy-d: d replicas per job; the job's E[T] is its E[Q] per server / lambda.
        np.testing.assert_allclose(mf["ER_per_server"], 2 * mf["EQ_per_server"], rtol=1e-15)
        np.testing.assert_allclose(mf["ET"], mf["EQ_per_server"] / mf["lambda"], rtol=1e-12)
        self.assertNotIn("EQ", mf)

    def test_missing_values_are_nan_not_minus_one(self):
        ds = qsweep.open(path).dataset("exact", statuses=("failed",))
        self.assertTrue(bool(ds["EQ"].isnull().all()))
        self.assertEqual(ds["stable"].dtype.kind, "f")  # -1 in the file: NaN here
        self.assertTrue(bool(ds["stable"].isnull().all()))
        self.assertEqual(ds["stable"].encoding["_FillValue"], -1)
        self.assertEqual(list(np.unique(ds["status"])), ["done"])  # the status, kept
        full = qsweep.open(path).dataset("exact")
        self.assertTrue(bool((full["stable"] == 1).all()))

    def test_task_layout(self):
        ds = qsweep.open(path).dataset("exact", layout="task")
        self.assertEqual(ds["EQ"].dims, ("task",))
        self.assertEqual(ds.sizes["task"], 12)
        self.assertIn("lambda", ds.coords)


class OlderFiles(unittest.TestCase):
    def test_version_5_reads_with_the_names_of_version_6(self):
        old = os.path.join(SOURCE, "tests", "integration", "fixtures", "format5-mixed.h5")
        import h5py
        with h5py.File(old, "r") as f:
            self.assertEqual(int(f.attrs["format_version"]), 5)
            stored = f["meanfield/EQ"][()]  # per server, replicas under redundancy_coc
            policy = f["meanfield/policy"].asstr()[()]
            exact_eq, exact_n = f["exact/EQ"][()], f["exact/N"][()]
        results = qsweep.open(old)
        mf = results["meanfield"]
        self.assertNotIn("EQ", mf)
        np.testing.assert_array_equal(mf["ER_per_server"], stored)
        d = np.where(policy == "redundancy_coc", 2.0, 1.0)
        np.testing.assert_array_equal(mf["EQ_per_server"], stored / d)
        np.testing.assert_allclose(mf["ET"], mf["EQ_per_server"] / mf["lambda"], rtol=1e-12)
        self.assertEqual(mf.attributes["EQ_per_server"]["units"], "1")
        exact = results.dataset("exact")
        np.testing.assert_array_equal(exact["EQ_per_server"], exact_eq / exact_n)
        self.assertEqual(exact["ET"].attrs["units"], "1")
        self.assertEqual(exact["ET"].attrs["model_units"], "time")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
