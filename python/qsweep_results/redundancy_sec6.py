"""Redundancy paper, section 6: the N-fold heavy-traffic gain of sparse locally stable structures.

Sweep: sweeps/paper-redundancy-sec6-sparse.yaml. (1 - rho) E[Q] against 1 - rho for independent
queues (eps = 0: tends to N) and for tree_singletons and singletons_full with eps > 0 (tend to 1,
Theorem 3.1): one panel per N.
"""

import matplotlib.ticker
import numpy as np

from .loader import load_group
from .plotting import Series, new_drawing, plot_series, require

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
                    key, label, color = f"N={n}/independent", "independent ($\\epsilon$ = 0)", "C0"
                else:
                    key = f"N={n}/{family}/eps={eps:g}"
                    label, color = f"{family}, $\\epsilon$ = {eps:g}", colors[eps]
                plot_series(ax, drawing, Series(key, x, curve["scaled_EQ"], curve["task_id"]),
                            color=color, linestyle=FAMILY_STYLE[family], marker=".", label=label)
        ax.axhline(1.0, color="gray", linewidth=0.8, linestyle=":")
        ax.axhline(float(n), color="gray", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        # y: plain numbers only, 1, 2, 5, 10, ... and the limit N (x keeps powers of ten)
        ax.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(
            [v for v in (1, 2, 5, 10, 20, 50, 100) if v < 0.8 * n] + [n]))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.invert_xaxis()
        ax.set_xlabel("1 - $\\rho$")
        ax.set_ylabel("(1 - $\\rho$) E[Q]")
        ax.set_title(f"N = {n}: limit N for $\\epsilon$ = 0, 1 for any $\\epsilon$ > 0")
    # The panels have the same curves: one legend, right of the last panel, clear of the curves.
    axes[-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    drawing.figure.suptitle("Sparse locally stable structures in heavy traffic (exact)")
    return drawing
