"""Redundancy paper, Figure 2: heavy-traffic state-space collapse on the wedge.

Sweep: sweeps/paper-redundancy-fig2-wedge.yaml (explicit family, N = 3, types {1,2} and {2,3}).
(a) Fig. 2(b): P((1 - rho) Q >= x) for each load, from the stored pmf, against exp(-x).
(b) The file has the per-type means E[Q_S], not the joint pmf of Fig. 2(c, d), so the collapse
onto the line (p_{1,2} x, p_{2,3} x) is shown through the means: the share E[Q_S] / E[Q] of each
type tends to p_S (and (1 - rho) E[Q] to 1).
"""

import numpy as np

from .loader import load_group
from .plotting import Series, new_drawing, plot_series, require, tail_from_pmf

X_MAX = 6.0  # panel (a) shows x = (1 - rho) q up to here


def server_set_label(mask):
    """'{1,2}' for the bitmask 0b11 (bit n: server n + 1; bit 63 is stored as a negative int64)."""
    bits = int(mask) % (1 << 64)
    return "{" + ",".join(str(n + 1) for n in range(64) if bits >> n & 1) + "}"


def scaled_tail(pmf, qmax, rho):
    """x = (1 - rho) q and P(Q >= q) for q = 0..qmax, cut at x <= X_MAX."""
    tail = tail_from_pmf(pmf[:qmax + 1])
    x = (1.0 - rho) * np.arange(qmax + 1)
    keep = x <= X_MAX
    return x[keep], tail[keep]


def wedge_rows(path):
    exact = load_group(path, "exact").select(family="explicit", N=3, per_type=1)
    exact = exact.where(np.array([len(t) == 2 for t in exact["type_servers"]], dtype=bool))
    return require(exact, "the wedge (explicit family, N = 3, two types, per_type)", path)


def draw(path):
    rows = wedge_rows(path).sorted_by("lambda")
    drawing, (ax_tail, ax_share) = new_drawing(2)
    one_minus_rho = 1.0 - rows["rho"]
    masks = rows["type_servers"][0]
    p = rows["type_p"][0]
    names = [server_set_label(m) for m in masks]

    # (a) scaled total vs Exp(1), for the loads with a pmf
    for r in np.flatnonzero(rows["qmax"] > 0):
        x, tail = scaled_tail(rows["pmf"][r], int(rows["qmax"][r]), rows["rho"][r])
        plot_series(ax_tail, drawing,
                    Series(f"tail/lambda={rows['lambda'][r]:.6g}", x, tail, np.full(len(x), rows["task_id"][r])),
                    drawstyle="steps-post", label=f"$\\lambda$ = {rows['lambda'][r]:.6g}")
    x = np.linspace(0.0, X_MAX, 200)
    plot_series(ax_tail, drawing, Series("tail/exp", x, np.exp(-x), np.full(len(x), -1), reference=True),
                color="black", linestyle="--", label="Exp(1): $e^{-x}$")
    ax_tail.set_xlabel("x")
    ax_tail.set_ylabel("P((1 - $\\rho$) Q $\\geq$ x)")
    ax_tail.set_title("(a) scaled total number of jobs")
    ax_tail.legend(fontsize="small")

    # (b) share of each type among the jobs: the collapse onto the line (p_1 x, p_2 x)
    for k in range(2):
        share = np.array([rows["EQ_type"][r][k] for r in range(rows.rows)]) / rows["EQ"]
        line = plot_series(ax_share, drawing, Series(f"share/{names[k]}", one_minus_rho, share, rows["task_id"]),
                           marker="o", label=f"E[$Q_{{{names[k]}}}$] / E[Q]")
        ax_share.axhline(p[k], color=line.get_color(), linestyle="--", linewidth=1)
    ax_share.set_xscale("log")
    ax_share.invert_xaxis()
    ax_share.set_xlabel("1 - $\\rho$")
    ax_share.set_ylabel("share of the jobs (dashed: $p_S$)")
    ax_share.set_title("(b) type shares E[$Q_S$] / E[Q] $\\to$ $p_S$")
    ax_share.legend(fontsize="small")
    drawing.figure.suptitle("Wedge, N = 3: state-space collapse in heavy traffic (exact)")
    return drawing
