"""Redundancy paper, Figure 3: light-traffic ratios alpha*_q / alpha_q(P).

Sweep: sweeps/paper-redundancy-fig3-alpha.yaml. alpha*_q is the uniform complete graph's
(family complete, d = 2) coefficient, alpha_q(P) that of a sparser graph on the same N: the
homogeneous ring (family ring, or hetero_ring with eps = 1/2) and heterogeneous rings (eq. 35).
One panel per N, on one y-range; values below 1 mean the complete graph has fewer jobs in light
traffic.
"""

import numpy as np

from .loader import load_group
from .plotting import Series, legend_outside, new_drawing, plot_series, require


def ring_label(family, eps):
    if family == "ring" or eps == 0.5:
        return "homogeneous ring"
    return f"heterogeneous ring, $\\epsilon$ = {eps:g}"


def draw(path):
    exact = load_group(path, "exact").select(light_traffic=1)
    complete = require(exact.select(family="complete", d=2), "the complete graph (d = 2) with alpha", path)
    rings = require(exact.select(family=["ring", "hetero_ring"]), "rings with alpha", path)
    sizes = [n for n in complete.unique("N") if n in set(rings["N"])]
    if not sizes:
        raise ValueError(f"{path}: no N has both the complete graph and a ring")
    drawing, axes = new_drawing(len(sizes), sharey=True)  # one y-range: N = 4 vs 12 compare
    for ax, n in zip(axes, sizes):
        star = complete.select(N=n)
        star_alpha = star["alpha"][0]
        same_n = rings.select(N=n)
        # homogeneous first, then by eps
        order = np.lexsort((np.nan_to_num(same_n["eps"], nan=0.5), same_n["family"] != "ring"))
        for r in order:
            qmax = int(min(same_n["qmax"][r], star["qmax"][0]))
            q = np.arange(1, qmax + 1)
            ratio = star_alpha[1:qmax + 1] / same_n["alpha"][r][1:qmax + 1]
            family, eps = same_n["family"][r], same_n["eps"][r]
            key = f"N={n}/{family}" + ("" if np.isnan(eps) else f"/eps={eps:g}")
            plot_series(ax, drawing,
                        Series(key, q, ratio, np.full(len(q), same_n["task_id"][r])),
                        marker="o", markersize=3, label=ring_label(family, eps))
        ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.set_xlabel("q")
        ax.set_title(f"N = {n}")
        legend_outside(ax)
    axes[0].set_ylabel("$\\alpha^*_q$ / $\\alpha_q(P)$")
    drawing.figure.suptitle("Light traffic: uniform complete graph vs rings (exact, eq. 30)")
    return drawing
