"""The Python module (docs/python.md) against the qsweep executable, under /usr/bin/python3.

Usage: test_module.py QSWEEP_BINARY SOURCE_DIR, with the build's python directory (BUILD/python)
on PYTHONPATH (tests/CMakeLists.txt sets it).
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

QSWEEP, SOURCE = sys.argv[1], sys.argv[2]

import qsweep  # noqa: E402
import qsweep_results  # noqa: E402

# One small task per method; values as Python gives them to qsweep.eval (floats by repr on the
# command line, which is what the module passes on).
TASKS = {
    # 0.3 + 0.6 is 0.8999999999999999: a double that a short decimal text would change.
    "exact": dict(method="exact", family="ring", N=8, qmax=20, **{"lambda": 0.3 + 0.6}),
    "exact_symmetric": dict(method="exact", family="complete", d=2, N=200, qmax=30,
                            **{"lambda": 0.95}),
    "simulate": dict(method="simulate", seed=1, family="ring", N=8, policy="jsq", horizon=1e3,
                     **{"lambda": 0.9}),
    "meanfield": dict(method="meanfield", policy="jsq", horizon=20, initial_counts=[0, 0, 1],
                      **{"lambda": 0.9}),
    "ldp": dict(method="ldp", seed=1, n=20, j=3, T=1, estimator="exact", **{"lambda": 0.99}),
}
# Measured on the process that ran the task, not computed: they differ between two runs (the
# timings are those scripts/compare-results.sh leaves out too).
MEASURED = {"wall_seconds", "baseline_memory_bytes", "peak_memory_bytes", "cpu_seconds",
            "events_per_second"}


def flag_text(value):
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(flag_text(v) for v in value) + "]"
    return str(value)


def cli(*args, check=True):
    run = subprocess.run([QSWEEP, *args], capture_output=True, text=True)
    if check and run.returncode != 0:
        raise AssertionError(f"qsweep {' '.join(args)}: exit {run.returncode}: {run.stderr}")
    return run


def cli_eval(parameters):
    args = ["eval", "--json"]
    for key, value in parameters.items():
        args += [f"--{key}", flag_text(value)]
    return json.loads(cli(*args).stdout)


def same_number(a, b):
    """b (from JSON: None for NaN) is the double a, bit for bit."""
    if b is None:
        return isinstance(a, float) and math.isnan(a)
    if isinstance(b, float) or isinstance(a, float):
        return float(a).hex() == float(b).hex() and type(a) is float
    return a == b and type(a) is int


class Eval(unittest.TestCase):
    def test_each_method_equals_eval_json_bit_for_bit(self):
        for name, parameters in TASKS.items():
            with self.subTest(task=name):
                mine, theirs = qsweep.eval(**parameters), cli_eval(parameters)
                self.assertEqual(list(mine), list(theirs))  # the same keys in the same order
                self.assertEqual(mine["status"], "done", mine["error"])
                compared = 0
                for key, expected in theirs.items():
                    if key in MEASURED:
                        continue
                    value = mine[key]
                    if isinstance(expected, list):
                        self.assertIsInstance(value, np.ndarray, key)
                        self.assertEqual(len(value), len(expected), key)
                        bad = [i for i, (a, b) in enumerate(zip(value.tolist(), expected))
                               if not same_number(a, b)]
                        self.assertEqual(bad, [], f"{key}: elements differ from eval --json")
                    elif isinstance(expected, str):
                        self.assertEqual(value, expected, key)
                    else:
                        self.assertTrue(same_number(value, expected),
                                        f"{key}: {value!r} != eval --json's {expected!r}")
                    compared += 1
                self.assertGreater(compared, 10)

    def test_arrays_are_numpy_and_scalars_python_numbers(self):
        r = qsweep.eval(family="ring", N=4, qmax=10, lambda_=0.5)  # lambda_ is lambda
        self.assertEqual(r["lambda"], 0.5)
        self.assertIs(type(r["EQ"]), float)
        self.assertIs(type(r["N"]), int)
        self.assertEqual(r["pmf"].dtype, np.float64)
        self.assertEqual(r["pmf"].shape, (11,))
        self.assertTrue(np.all(r["pmf"] >= 0) and 0.99 < r["pmf"].sum() <= 1.0)  # up to qmax

    def test_numpy_values_are_accepted(self):
        a = qsweep.eval(family="ring", N=np.int64(4), qmax=10, lambda_=np.float64(0.5))
        b = qsweep.eval(family="ring", N=4, qmax=10, lambda_=0.5)
        self.assertEqual(a["EQ"].hex(), b["EQ"].hex())

    def test_bad_value_raises_the_clis_message(self):
        run = cli("eval", "--family", "ring", "--N", "eight", "--lambda", "0.5", check=False)
        self.assertEqual(run.returncode, 2)
        message = run.stderr.strip().removeprefix("qsweep: error: ")
        with self.assertRaises(qsweep.InputError) as raised:
            qsweep.eval(family="ring", N="eight", lambda_=0.5)
        self.assertEqual(str(raised.exception), message)
        self.assertIn("--N", message)

    def test_unknown_key_is_an_input_error_naming_it(self):
        with self.assertRaisesRegex(qsweep.InputError, "qmaxx"):
            qsweep.eval(family="ring", N=4, lambda_=0.5, qmaxx=10)
        with self.assertRaisesRegex(qsweep.InputError, "max.task.memory: 'lots'"):
            qsweep.eval(family="ring", N=4, lambda_=0.5, max_task_memory="lots")

    def test_unstable_task_is_returned_with_its_status(self):
        r = qsweep.eval(family="ring", N=4, qmax=10, lambda_=1.5)
        self.assertEqual(r["status"], "unstable")
        self.assertTrue(math.isnan(r["EQ"]))


class Sweeps(unittest.TestCase):
    def test_plan_equals_plan_json(self):
        path = os.path.join(SOURCE, "sweeps", "paper-jsq-fig2.yaml")
        mine = qsweep.plan(path, top=3)
        theirs = json.loads(cli("plan", "--json", "--top", "3", path).stdout)
        self.assertEqual(mine["tasks"], 37)
        for measured in ("baseline_memory_bytes",):  # this process's resident memory
            del mine[measured], theirs[measured]
        self.assertEqual(mine, theirs)
        self.assertNotIn("task_list", mine)
        self.assertEqual(len(qsweep.plan(path, tasks=True)["task_list"]), 37)

    def test_validate_good_and_bad(self):
        self.assertIsNone(qsweep.validate(os.path.join(SOURCE, "sweeps", "paper-jsq-fig2.yaml")))
        bad = os.path.join(SOURCE, "tests", "sweep", "bad", "duplicate_key.yaml")
        run = cli("validate", bad, check=False)
        self.assertEqual(run.returncode, 2)
        message = run.stderr.strip().removeprefix("qsweep: error: ")
        with self.assertRaises(qsweep.InputError) as raised:
            qsweep.validate(bad)
        self.assertEqual(str(raised.exception), message)
        self.assertRegex(message, r"duplicate_key\.yaml:\d+:\d+: .*'lambda' is given twice")
        with self.assertRaises(qsweep.Error):
            qsweep.plan(bad)


class Reading(unittest.TestCase):
    def test_open_is_the_loader(self):
        path = os.path.join(SOURCE, "tests", "integration", "fixtures", "format3-simulate.h5")
        results = qsweep.open(path)
        self.assertIn("simulate", results.groups)
        self.assertEqual(results.attributes, qsweep_results.read_attributes(path))
        table, expected = results["simulate"], qsweep_results.load_group(path, "simulate")
        self.assertIsInstance(table, qsweep_results.Table)
        self.assertEqual(list(table), list(expected))
        self.assertTrue(np.array_equal(table["ET"], expected["ET"], equal_nan=True))
        with tempfile.TemporaryDirectory() as scratch:
            other = os.path.join(scratch, "other.h5")
            h5py.File(other, "w").close()
            with self.assertRaisesRegex(ValueError, "other.h5: not a qsweep results file"):
                qsweep.open(other)


class Module(unittest.TestCase):
    def test_errors_docstrings_and_no_mpi(self):
        self.assertTrue(issubclass(qsweep.Error, RuntimeError))
        self.assertTrue(issubclass(qsweep.InputError, qsweep.Error))
        self.assertTrue(issubclass(qsweep.InputError, ValueError))
        for function in (qsweep.eval, qsweep.plan, qsweep.validate, qsweep.open):
            self.assertGreater(len(function.__doc__ or ""), 100, function.__name__)
        self.assertTrue(qsweep.__file__.startswith(os.environ["QSWEEP_PYTHON_DIR"]))
        # The module loads neither MPI nor HDF5's C library (the reader's h5py has its own).
        qsweep.eval(family="ring", N=4, lambda_=0.5)
        with open("/proc/self/maps") as maps:
            libraries = {line.split()[-1] for line in maps if ".so" in line}
        self.assertEqual([lib for lib in libraries if "libmpi" in lib or "openmpi" in lib], [])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
