#!/usr/bin/python3
# Needs Debian's /usr/bin/python3 (apt install python3-h5py python3-numpy python3-matplotlib):
# the `python3` first on PATH may lack h5py. Run it as `python/make_figures.py ...` or
# `/usr/bin/python3 python/make_figures.py ...`.
"""Regenerate the papers' figures (PNG and PDF) from qsweep results files.

    python/make_figures.py --run                 # run the small paper sweeps (mpirun), then draw
    python/make_figures.py                       # draw from results/<sweep>.h5 already there
    python/make_figures.py --large               # also the cluster-sized sweeps' figures
    python/make_figures.py results/my.h5 --figure jsq-fig2   # a chosen figure: my-jsq-fig2.png

Figures go to figures/<results file name>.png and .pdf next to the results files
(results/figures/ by default). It runs from any directory: the sweeps, the default qsweep
(build/qsweep) and the default results directory (results/) are those of the repository this
script is in (through symlinks too); paths given on the command line are relative to the current
directory. docs/figures.md has the details.
"""

import argparse
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # not the current directory
sys.path.insert(0, os.path.join(REPO, "python"))

import qsweep_results  # noqa: E402
from qsweep_results.launch import mpi_launch  # noqa: E402


def run_sweep(name, args):
    sweep = os.path.join(REPO, "sweeps", f"{name}.yaml")
    output = os.path.join(args.results, f"{name}.h5")
    os.makedirs(args.results, exist_ok=True)
    command = [args.qsweep, "run", sweep, "-o", output, "--force"]
    if args.ranks > 1:
        command = mpi_launch(args.ranks) + command
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI refuses root unless told (containers, CI)
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print("+", " ".join(command), flush=True)
    start = time.monotonic()
    code = subprocess.run(command, env=env).returncode
    if code != 0:
        raise SystemExit(f"make_figures: qsweep run {name} exited with {code}")
    print(f"make_figures: {name} ran in {time.monotonic() - start:.1f} s", flush=True)
    return output


def draw(path, out_dir, args):
    module = qsweep_results.figure_for(path, args.figure)
    name = os.path.splitext(os.path.basename(path))[0]
    # A chosen figure is named after it too: another figure of the same file does not overwrite it.
    if args.figure:
        name += f"-{args.figure}"
    drawing = module.draw(path)
    for written in qsweep_results.save(drawing, out_dir, name, args.formats, args.dpi):
        print(f"make_figures: wrote {written}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="results files to draw (default: every ready sweep)")
    parser.add_argument("--figure", choices=sorted(qsweep_results.FIGURES),
                        help="figure to draw from FILES (default: by the file's sweep name)")
    parser.add_argument("--run", action="store_true",
                        help="run the sweeps with qsweep first (overwrites their results)")
    parser.add_argument("--large", action="store_true",
                        help="include the cluster-sized sweeps/large-*.yaml")
    parser.add_argument("--qsweep", default=os.path.join(REPO, "build", "qsweep"),
                        help="qsweep executable (default: the repository's build/qsweep)")
    parser.add_argument("--ranks", type=int, default=3, help="MPI ranks for --run (default 3)")
    parser.add_argument("--results", default=os.path.join(REPO, "results"),
                        help="directory of the results files (default: the repository's results/)")
    parser.add_argument("--out", default=None,
                        help="figure directory (default: figures/ next to the results files)")
    parser.add_argument("--formats", default="png,pdf", type=lambda text: text.split(","),
                        help="comma-separated file formats (default png,pdf)")
    parser.add_argument("--dpi", type=int, default=150, help="resolution of the PNG (default 150)")
    args = parser.parse_args()

    if args.files:
        if args.run:
            parser.error("--run runs the ready sweeps; give no FILES with it")
        for path in args.files:
            draw(path, args.out or os.path.join(os.path.dirname(path), "figures"), args)
        return 0
    out_dir = args.out or os.path.join(args.results, "figures")

    missing = []
    for name in qsweep_results.SWEEPS:
        if name.startswith("large-") and not args.large:
            continue
        path = run_sweep(name, args) if args.run else os.path.join(args.results, f"{name}.h5")
        if not os.path.exists(path):
            missing.append(name)
            continue
        draw(path, out_dir, args)
    if missing:
        print("make_figures: no results yet for " + ", ".join(missing) +
              "; run them with --run, or with qsweep run sweeps/<name>.yaml", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (KeyError, ValueError, OSError) as error:  # bad file or figure: one line, no traceback
        sys.exit(f"make_figures: {error.args[0] if isinstance(error, KeyError) else error}")
