"""qsweep_results: load qsweep results files into numpy arrays and draw the papers' figures.

Needs Debian's /usr/bin/python3 (python3-h5py, python3-numpy, python3-matplotlib); pandas is
optional (Table.to_dataframe). docs/figures.md describes the figures and the walkthrough.
"""

from . import jsq_fig2, random_regular, redundancy_fig2, redundancy_fig3, redundancy_fig4, redundancy_sec6
from .dataset import load_dataset
from .loader import (FORMAT_VERSION, STATUS_NAMES, Table, group_names, load_group, load_tasks,
                     load_thresholds, paired_difference, read_attributes, sojourn_quantile,
                     sojourn_tail)
from .plotting import Drawing, Grid, Series, save

# Figure modules by name (make_figures.py --figure NAME).
FIGURES = {
    "redundancy-fig2": redundancy_fig2,
    "redundancy-fig3": redundancy_fig3,
    "redundancy-fig4": redundancy_fig4,
    "redundancy-sec6": redundancy_sec6,
    "jsq-fig2": jsq_fig2,
    "random-regular": random_regular,
}

# The ready sweeps (sweeps/<name>.yaml, results/<name>.h5) and the figure each one feeds.
# Large sweeps are cluster-sized: make_figures.py draws them only with --large.
SWEEPS = {
    "paper-redundancy-fig2-wedge": "redundancy-fig2",
    "paper-redundancy-fig3-alpha": "redundancy-fig3",
    "paper-redundancy-fig4-occupancy": "redundancy-fig4",
    "paper-redundancy-sec6-sparse": "redundancy-sec6",
    "paper-jsq-fig2": "jsq-fig2",
    "large-jsq-fig2": "jsq-fig2",
    "large-random-regular": "random-regular",
}


def figure_for(path, figure=None):
    """The figure module for a results file: `figure` if given, else by the file's sweep name."""
    if figure is not None:
        if figure not in FIGURES:
            raise KeyError(f"unknown figure '{figure}'; figures: {', '.join(FIGURES)}")
        return FIGURES[figure]
    name = read_attributes(path).get("sweep_name", "")
    if name not in SWEEPS:
        raise KeyError(f"{path}: sweep '{name}' has no figure of its own; choose one with "
                       f"--figure ({', '.join(FIGURES)})")
    return FIGURES[SWEEPS[name]]


__all__ = ["FIGURES", "FORMAT_VERSION", "SWEEPS", "STATUS_NAMES", "Drawing", "Grid", "Series", "Table",
           "figure_for", "group_names", "load_dataset", "load_group", "load_tasks", "load_thresholds",
           "paired_difference", "read_attributes", "save", "sojourn_quantile", "sojourn_tail"]
