"""Redundancy paper, Figure 4: occupancy probabilities for N = 4 servers at lambda / mu = 0.8.

Sweep: sweeps/paper-redundancy-fig4-occupancy.yaml. Uniform complete graph, homogeneous ring,
heterogeneous rings (eq. 35). (a) P(Q = q): exact (lines) and, where the file has them, the
simulator's estimates (open markers, 95% confidence band); (b) P(Q >= q) on a log scale (exact),
where the ordering of the tails is visible (a marker per curve: the complete graph and the
homogeneous ring differ by ~5%).
"""

import numpy as np

from .loader import load_group
from .plotting import Series, legend_outside, new_drawing, plot_series, require, tail_from_pmf
from .redundancy_fig3 import ring_label

FAMILIES = ["complete", "ring", "hetero_ring"]
TAIL_MARKERS = "osD^v<>"


def graph_label(family, eps):
    return "uniform complete graph" if family == "complete" else ring_label(family, eps)


def curve_key(n, rho, family, eps):
    return f"N={n}/rho={rho:g}/{family}" + ("" if np.isnan(eps) else f"/eps={eps:g}")


def simulated(path):
    """Simulated redundancy_coc rows with a pmf; None if the file has no simulate tasks."""
    try:
        table = load_group(path, "simulate")
    except KeyError:
        return None
    table = table.select(family=FAMILIES, policy="redundancy_coc")
    return table.where(table["qmax"] > 0)


def draw(path):
    exact = load_group(path, "exact").select(family=FAMILIES)
    exact = require(exact.where(exact["qmax"] > 0), "complete graphs and rings with a pmf", path)
    sim = simulated(path)
    order = np.lexsort((np.nan_to_num(exact["eps"], nan=0.5), exact["family"] != "ring",
                        exact["family"] != "complete", exact["rho"], exact["N"]))
    several = len(set(exact["N"])) > 1 or len(set(exact["rho"])) > 1
    drawing, (ax_pmf, ax_tail) = new_drawing(2)
    for i, r in enumerate(order):
        qmax = int(exact["qmax"][r])
        q = np.arange(qmax + 1)
        pmf = exact["pmf"][r][:qmax + 1]
        tail = tail_from_pmf(pmf)
        family, eps, n, rho = exact["family"][r], exact["eps"][r], exact["N"][r], exact["rho"][r]
        key = curve_key(n, rho, family, eps)
        label = graph_label(family, eps) + (f" (N = {n}, $\\rho$ = {rho:g})" if several else "")
        ids = np.full(len(q), exact["task_id"][r])
        line = plot_series(ax_pmf, drawing, Series("pmf/" + key, q, pmf, ids), label=label)
        # The tails differ by a few per cent (the complete graph's lies just under the ring's):
        # each has its own marker, at every len(order)-th q from its own start, so none is hidden.
        plot_series(ax_tail, drawing, Series("tail/" + key, q, tail, ids), color=line.get_color(),
                    marker=TAIL_MARKERS[i % len(TAIL_MARKERS)], markevery=(i, len(order)),
                    markersize=4, markerfacecolor="none", label=label)
        if sim is None:
            continue
        match = sim.select(family=family, eps=eps, N=n, rho=rho)
        if match.rows == 0:
            continue
        m = int(match["qmax"][0])
        estimate, half_width = match["pmf"][0][:m + 1], match["pmf_hw"][0][:m + 1]
        plot_series(ax_pmf, drawing,
                    Series("sim/pmf/" + key, np.arange(m + 1), estimate,
                           np.full(m + 1, match["task_id"][0]),
                           lo=estimate - half_width, hi=estimate + half_width),
                    color=line.get_color(), linestyle="none", marker="o", markersize=4,
                    markerfacecolor="none")
    ax_pmf.set_xlabel("q")
    ax_pmf.set_ylabel("P(Q = q)")
    ax_pmf.set_title("(a) occupancy probabilities")
    legend_outside(ax_pmf)
    ax_tail.set_yscale("log")
    ax_tail.set_xlabel("q")
    ax_tail.set_ylabel("P(Q $\\geq$ q)")
    ax_tail.set_title("(b) tail")
    legend_outside(ax_tail)
    rhos = ", ".join(f"{v:g}" for v in np.unique(exact["rho"]))
    ns = ", ".join(str(v) for v in np.unique(exact["N"]))
    how = "exact (lines)" + (", simulated (markers, 95% bands)" if sim is not None and sim.rows else "")
    drawing.figure.suptitle(f"Number of jobs, N = {ns} servers, $\\lambda/\\mu$ = {rhos}: {how}")
    return drawing
