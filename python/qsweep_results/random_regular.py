"""Exact E[T] on random regular graphs against the uniform complete graph and the ring.

Sweep: sweeps/large-random-regular.yaml (cluster-sized; tests use a small variant).
(a) E[T] against rho at the largest N; (b) E[T] / E[T](complete) against rho at the largest N;
(c) the same ratio against N at the load closest to 0.9. Random regular graphs: the mean over the
graph seeds in the file, and a band from the smallest to the largest value over those graphs
(graph-to-graph spread; the values themselves are exact).
"""

import numpy as np

from .loader import load_group
from .plotting import Series, legend_outside, new_drawing, plain_log_ticks, plot_series, require

TARGET_RHO = 0.9


def structures(exact):
    """(key, label, rows) per compared structure, complete first; random_regular per degree."""
    out = [("complete", "uniform complete graph (d = 2)", exact.select(family="complete", d=2))]
    regular = exact.select(family="random_regular")
    for degree in sorted(regular.unique("degree"), reverse=True):
        out.append((f"random_regular/degree={degree}", f"random {degree}-regular graphs",
                    regular.select(degree=degree)))
    out.append(("ring", "ring", exact.select(family="ring")))
    return [(key, label, rows) for key, label, rows in out if rows.rows]


def over_graphs(rows, n, rho_values, values):
    """Mean, min and max over the graphs of `values` at each rho; task ids of the first graph."""
    mean, low, high, ids = [], [], [], []
    for rho in rho_values:
        at = rows.mask(N=n, rho=rho)
        mean.append(values[at].mean())
        low.append(values[at].min())
        high.append(values[at].max())
        ids.append(rows["task_id"][at][0])
    return np.array(mean), np.array(low), np.array(high), np.array(ids)


def draw(path):
    exact = load_group(path, "exact").select(family=["complete", "random_regular", "ring"])
    groups = structures(exact)
    complete = require(exact.select(family="complete", d=2), "the complete graph (d = 2)", path)
    sparse = [rows for key, _, rows in groups if key != "complete"]
    if not sparse:
        raise ValueError(f"{path}: no finished random_regular or ring tasks to compare with the "
                         "complete graph; run the figure's sweep first (qsweep status shows what "
                         "is missing)")
    # Panels (a, b): the largest N at which the complete graph and a sparse graph both have rows.
    shared = [n for n in complete.unique("N") if any(rows.mask(N=n).any() for rows in sparse)]
    if not shared:
        raise ValueError(f"{path}: the sparse graphs' N and the complete graph's share no value")
    n_max = int(max(shared))
    drawing, (ax_et, ax_ratio, ax_n) = new_drawing(3)
    reference = complete.select(N=n_max).sorted_by("rho")
    rho = reference["rho"]
    target = rho[np.argmin(np.abs(rho - TARGET_RHO))]
    sizes = list(complete.unique("N"))

    missing = []  # structures without rows at n_max: in panel (c) only, and named in the title
    for key, label, rows in groups:
        several = len(rows.unique("graph_seed")) > 1
        if not rows.select(N=n_max).rows:
            missing.append(label)
            plot_against_n(ax_n, drawing, rows, complete, sizes, target, key, label, several)
            continue
        # (a) E[T] and (b) ratio to complete, at the largest N
        largest = rows.select(N=n_max, rho=list(rho))
        loads = np.array([r for r in rho if largest.mask(rho=r).any()])
        et, et_lo, et_hi, ids = over_graphs(largest, n_max, loads, largest["ET"])
        ratio_values = largest["ET"] / np.array(
            [reference["ET"][np.isclose(rho, r, rtol=1e-12)][0] for r in largest["rho"]])
        ratio, r_lo, r_hi, _ = over_graphs(largest, n_max, loads, ratio_values)
        plot_series(ax_et, drawing, Series(f"ET/N={n_max}/{key}", loads, et, ids,
                                           lo=et_lo if several else None, hi=et_hi if several else None),
                    marker=".", label=label)
        plot_series(ax_ratio, drawing, Series(f"ratio/N={n_max}/{key}", loads, ratio, ids,
                                              lo=r_lo if several else None, hi=r_hi if several else None),
                    marker=".", label=label)
        plot_against_n(ax_n, drawing, rows, complete, sizes, target, key, label, several)
    ax_et.set_yscale("log")
    plain_log_ticks(ax_et)
    ax_et.set_xlabel("load $\\rho$")
    ax_et.set_ylabel("E[T]")
    ax_et.set_title(f"(a) mean sojourn time, N = {n_max}")
    ax_ratio.set_xlabel("load $\\rho$")
    ax_ratio.set_ylabel("E[T] / E[T](complete)")
    ax_ratio.set_title(f"(b) relative to the complete graph, N = {n_max}")
    ax_n.set_xlabel("N (servers)")
    ax_n.set_ylabel("E[T] / E[T](complete)")
    ax_n.set_title(f"(c) relative to the complete graph, $\\rho$ = {target:g}")
    # One legend for the three panels (the same structures in the same colours), below the middle.
    legend_outside(ax_ratio, ncols=2)
    title = "Redundancy d = 2 on sparse graphs: exact E[T] (bands: range over the random graphs)"
    if missing:
        title += f"\nnot at N = {n_max}, so in (c) only: {', '.join(missing)}"
    drawing.figure.suptitle(title)
    return drawing


def plot_against_n(ax, drawing, rows, complete, sizes, target, key, label, several):
    """Panel (c): the ratio to the complete graph against N at the target load."""
    at_target = rows.select(rho=target)
    ns = [n for n in sizes if at_target.mask(N=n).any()]
    if not ns:
        return
    ratios = [at_target.select(N=n)["ET"] / complete.select(N=n, rho=target)["ET"][0] for n in ns]
    plot_series(ax, drawing,
                Series(f"ratio/rho={target:g}/{key}", np.array(ns, dtype=float),
                       np.array([r.mean() for r in ratios]),
                       np.array([at_target.select(N=n)["task_id"][0] for n in ns]),
                       lo=np.array([r.min() for r in ratios]) if several else None,
                       hi=np.array([r.max() for r in ratios]) if several else None),
                marker="o", label=label)
