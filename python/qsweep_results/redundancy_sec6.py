"""Redundancy paper, section 6: the N-fold heavy-traffic gain of sparse locally stable structures.

Sweep: sweeps/paper-redundancy-sec6-sparse.yaml. (1 - rho) E[Q] against 1 - rho for independent
queues (eps = 0: tends to N) and for tree_singletons and singletons_full with eps > 0 (tend to 1,
Theorem 3.1): one panel per N.
"""

import numpy as np

from .loader import load_group
from .plotting import Series, new_drawing, plain_log_ticks, plot_series, require

FAMILY_STYLE = {"independent": "-", "tree_singletons": "-", "singletons_full": "--"}


def draw(path):
    exact = load_group(path, "exact").select(family=list(FAMILY_STYLE))
    exact = require(exact, "independent, tree_singletons or singletons_full", path)
    sizes = exact.unique("N")
    drawing, axes = new_drawing(len(sizes))
    eps_values = exact.unique("eps")
    eps_values = eps_values[~np.isnan(eps_values)]
    colors = {eps: f"C{i + 1}" for i, eps in enumerate(eps_values)}
    for ax, n in zip(axes, sizes):
        same_n = exact.select(N=n)
        for family in FAMILY_STYLE:
            rows = same_n.select(family=family)
            for eps in rows.unique("eps"):
                curve = rows.select(eps=eps).sorted_by("rho")
                if curve.rows == 0:
                    continue
                x = 1.0 - curve["rho"]
                if family == "independent":
                    key, label, color = f"N={n}/independent", "independent (eps = 0)", "C0"
                else:
                    key = f"N={n}/{family}/eps={eps:g}"
                    label, color = f"{family}, $\\epsilon$ = {eps:g}", colors[eps]
                plot_series(ax, drawing, Series(key, x, curve["scaled_EQ"], curve["task_id"]),
                            color=color, linestyle=FAMILY_STYLE[family], marker=".", label=label)
        ax.axhline(1.0, color="gray", linewidth=0.8, linestyle=":")
        ax.axhline(float(n), color="gray", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_ticks(ax)
        ax.invert_xaxis()
        ax.set_xlabel("1 - $\\rho$")
        ax.set_ylabel("(1 - $\\rho$) E[Q]")
        ax.set_title(f"N = {n}: limit N for eps = 0, 1 for any eps > 0")
        ax.legend(fontsize="x-small", ncol=1)
    drawing.figure.suptitle("Sparse locally stable structures in heavy traffic (exact)")
    return drawing
