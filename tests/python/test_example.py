"""docs/examples/join_methods.py runs as a script and draws a readable figure from numbers that
agree: the simulated E[Q] per server within its 99% interval of the exact one, and the exact one
closer to the mean-field limit as N grows.

Usage: test_example.py QSWEEP_BINARY SOURCE_DIR, under /usr/bin/python3 with the build's python
directory on PYTHONPATH (tests/CMakeLists.txt sets it).
"""

import os
import subprocess
import sys
import tempfile
import unittest

import matplotlib.image
import numpy as np

QSWEEP, SOURCE = sys.argv[1], sys.argv[2]

import qsweep  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class JoinMethods(unittest.TestCase):
    def test_example_runs_and_agrees(self):
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run(
                [sys.executable, os.path.join(SOURCE, "docs", "examples", "join_methods.py"),
                 "--qsweep", QSWEEP, "--out", out], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            figure = os.path.join(out, "join_methods.png")
            with open(figure, "rb") as f:
                self.assertEqual(f.read(8), PNG_SIGNATURE)
            self.assertGreater(os.path.getsize(figure), 20_000)
            image = matplotlib.image.imread(figure)  # decodes: a valid PNG
            self.assertGreaterEqual(image.shape[0], 400)
            self.assertGreaterEqual(image.shape[1], 1000)
            colours = np.unique(image.reshape(-1, image.shape[-1]).round(2), axis=0)
            self.assertGreater(len(colours), 50)  # lines, markers, text: not a blank canvas

            results = qsweep.open(os.path.join(out, "join_methods.h5"))
            exact, simulate = results.dataset("exact"), results.dataset("simulate")
            meanfield = results.dataset("meanfield")
            self.assertEqual(exact["EQ_per_server"].dims, ("N", "lambda"))
            self.assertEqual(meanfield["EQ_per_server"].dims, ("lambda",))
            for n in (4, 8):
                e, s = exact.sel(N=n), simulate.sel(N=n)
                off = abs(s["EQ_per_server"] - e["EQ_per_server"])
                self.assertTrue(bool((off <= s["EQ_per_server_hw"] * s["hw99_factor"]).all()),
                                f"N = {n}: {off.values} against {s['EQ_per_server_hw'].values}")
                # The same per server as in the whole system over N.
                np.testing.assert_allclose(e["EQ_per_server"] * n, e["EQ"], rtol=1e-14)
            # The limit: the exact value per server falls towards it at every load.
            gap = exact["EQ_per_server"] - meanfield["EQ_per_server"]
            self.assertTrue(bool((gap > 0).all()), gap.values)
            self.assertTrue(bool((gap.diff("N") < 0).all()), gap.values)
            self.assertIn("exact inside the simulated 95% interval", run.stdout)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
