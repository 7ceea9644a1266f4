#!/usr/bin/python3
"""Join exact, simulate and meanfield results on the sweep's axes: a notebook-style example.

Runs a small study of redundancy-d (cancel-on-completion, d = 2: each job replicated to two
servers chosen at random, family `complete` with d = 2), opens it with qsweep.open, joins the
three methods on their axes and draws E[Q] per server against the load: the exact value for a
few N, the simulated one with its 95% interval, and the N -> infinity limit of the mean field.

Interpreter: Debian's /usr/bin/python3 with the qsweep module importable (docs/python.md,
"Set-up") and python3-xarray, python3-matplotlib. Cells are `# %%` blocks (VS Code, Jupytext,
Spyder run them one by one); as a script:

    /usr/bin/python3 docs/examples/join_methods.py [--qsweep build/qsweep] [--out DIR]

It runs sweeps/join-methods.yaml into DIR/join_methods.h5 and draws DIR/join_methods.png (DIR: a
temporary directory unless given).
"""

# %% Set-up: where the qsweep executable is and where the files go.
import argparse
import os
import subprocess
import tempfile

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import xarray  # noqa: E402

import qsweep  # noqa: E402

try:  # the repository: two levels above this file, or (in a notebook) the working directory
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
except NameError:
    root = os.getcwd()
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--qsweep", default=os.path.join(root, "build", "qsweep"),
                    help="the qsweep executable (default: the repository's build/qsweep)")
parser.add_argument("--out", default=None, help="directory for the study's files")
args, _ = parser.parse_known_args()  # a notebook passes arguments of its own
out = args.out or tempfile.mkdtemp(prefix="join_methods-")
os.makedirs(out, exist_ok=True)

# %% The study: sweeps/join-methods.yaml, the same loads for every method: exact for N = 4..64,
# simulated at N = 4 and 8, the mean-field limit (policy_d = 2 replicas per job, as d = 2 of the
# family complete).
sweep_path = os.path.join(root, "sweeps", "join-methods.yaml")
results_path = os.path.join(out, "join_methods.h5")
qsweep.validate(sweep_path)
# One process is enough for 50 small tasks; a large study runs under mpirun (docs/running.md).
subprocess.run([args.qsweep, "run", sweep_path, "-o", results_path, "--force", "--quiet"],
               check=True)

# %% Open: one Dataset per method, its dimensions the sweep's axes.
results = qsweep.open(results_path)
exact = results.dataset("exact")          # dims (N, lambda): family and d are constant
simulate = results.dataset("simulate")    # dims (N, lambda)
meanfield = results.dataset("meanfield")  # dims (lambda,)
print(exact["EQ_per_server"])

# %% Join on the axes. EQ is the mean number of jobs in the whole system in /exact and
# /simulate; per server it is EQ_per_server in every group, the mean field's included (whose
# ER_per_server counts the d replicas of each job).
joined = xarray.merge([
    exact["EQ_per_server"].rename("exact"),
    simulate["EQ_per_server"].rename("simulate"),
    simulate["EQ_per_server_hw"].rename("simulate_hw"),
    meanfield["EQ_per_server"].rename("meanfield"),  # no N: the same at every N
], join="left").reset_coords(drop=True)  # the values alone (no rho, levels, ...)
print(joined.sel(N=[4, 8]).to_dataframe().round(4).to_string())

# The simulation agrees with the exact values (95% intervals: about one point in 20 may miss).
simulated = joined.sel(N=[4, 8])
inside = abs(simulated["simulate"] - simulated["exact"]) <= simulated["simulate_hw"]
print(f"exact inside the simulated 95% interval: {int(inside.sum())} of {int(inside.count())}")

# %% The figure: E[Q] per server against lambda.
figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), constrained_layout=True)
colours = {4: "tab:blue", 8: "tab:orange", 16: "tab:green", 64: "tab:purple"}
for n, colour in colours.items():
    left.plot(exact["lambda"], exact["EQ_per_server"].sel(N=n), color=colour, label=f"exact, N = {n}")
for n in (4, 8):
    s = simulate.sel(N=n)
    left.errorbar(s["lambda"], s["EQ_per_server"], yerr=s["EQ_per_server_hw"], fmt="o",
                  color=colours[n], markersize=4, capsize=2, label=f"simulated, N = {n} (95%)")
left.plot(meanfield["lambda"], meanfield["EQ_per_server"], "k--", label="mean field, N = inf")
left.set_xlabel("arrival rate per server, lambda")
left.set_ylabel("E[Q] per server (jobs)")
left.set_title("Redundancy-2 (cancel on completion), complete d = 2")
left.legend(fontsize=8)
left.grid(alpha=0.3)

# The mean field is the limit: the exact value approaches it as N grows.
high = 0.9
gap = exact["EQ_per_server"].sel({"lambda": high}) - meanfield["EQ_per_server"].sel({"lambda": high})
right.plot(exact["N"], gap, "o-", color="tab:red", label="exact - mean field")
right.plot(exact["N"], gap.sel(N=64) * 64 / exact["N"], ":", color="grey",
           label="slope 1/N (through N = 64)")
right.set_xscale("log")
right.set_yscale("log")
right.set_xticks(exact["N"].values, [str(n) for n in exact["N"].values])
right.set_xlabel("servers N")
right.set_ylabel("E[Q] per server: exact - mean field (jobs)")
right.legend(fontsize=8)
right.set_title(f"Distance to the limit at lambda = {high}")
right.grid(alpha=0.3, which="both")
figure_path = os.path.join(out, "join_methods.png")
figure.savefig(figure_path, dpi=120)
print(f"wrote {figure_path}")
