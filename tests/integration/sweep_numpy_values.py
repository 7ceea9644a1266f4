"""Compares the lambda values of linspace/logspace sweeps with numpy's, bitwise (see the .sh)."""
import json
import random
import subprocess
import sys

import numpy as np

qsweep, work = sys.argv[1], sys.argv[2]
random.seed(20261201)

# (generator, first, last, count): the case, one value, two values, descending, a tiny
# range, then random ranges of lambda in (0, 1) (linspace) and of exponents (logspace). (Equal
# ends would give equal tasks, which the plan keeps once.)
cases = [("linspace", 0.05, 0.95, 19), ("linspace", 0.1, 0.9, 9), ("linspace", 0.7, 0.7, 1),
         ("linspace", 0.01, 0.99, 2), ("linspace", 0.9, 0.1, 17), ("linspace", 0.5, 0.5 + 1e-12, 7),
         ("logspace", -3.0, -0.01, 30), ("logspace", -6.5, -1e-3, 1), ("logspace", -0.5, -4.0, 11)]
while len(cases) < 50:
    if len(cases) % 2 == 0:
        a, b = random.uniform(1e-6, 0.99), random.uniform(1e-6, 0.99)
        cases.append(("linspace", a, b, random.randint(2, 200)))
    else:
        a, b = random.uniform(-8.0, -1e-3), random.uniform(-8.0, -1e-3)
        cases.append(("logspace", a, b, random.randint(2, 200)))

blocks = []
for case, (generator, a, b, n) in enumerate(cases):
    # repr: the shortest text that reads back to the same double, as a user would type it; a
    # qmax of its own per case, so that a value two cases share is not one task of the plan
    blocks.append(f"  - method: exact\n    family: ring\n    N: 4\n    qmax: {5 + case}\n"
                  f"    lambda: {{{generator}: [{a!r}, {b!r}, {n}]}}\n")
sweep = f"{work}/values.yaml"
with open(sweep, "w") as f:
    f.write("name: numpy-values\nblocks:\n" + "".join(blocks))
out = subprocess.run([qsweep, "plan", "--tasks", "--json", sweep], check=True,
                     capture_output=True, text=True).stdout
got = [t["parameters"]["lambda"] for t in json.loads(out)["task_list"]]

expected = []
for generator, a, b, n in cases:
    values = np.linspace(a, b, n) if generator == "linspace" else np.logspace(a, b, n)
    expected.extend(float(v) for v in values)

assert len(got) == len(expected), (len(got), len(expected))
wrong = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
assert not wrong, f"{len(wrong)} of {len(got)} values differ from numpy, first: {wrong[:5]}"
# The test can fail: the previous formula a + (b - a) * i / (n - 1) differs on 12 of 19 values of
# the first case (0.09999999999999999 for 0.1).
old = [0.05 + (0.95 - 0.05) * (i / 18) for i in range(18)] + [0.95]
assert sum(o != g for o, g in zip(old, got[:19])) >= 10
print(f"sweep_numpy_values: {len(got)} values of {len(cases)} cases equal numpy's")
