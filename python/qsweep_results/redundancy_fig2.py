"""Redundancy paper, Figure 2: heavy-traffic state-space collapse on the wedge.

Sweep: sweeps/paper-redundancy-fig2-wedge.yaml (explicit family, N = 3, types {1,2} and {2,3}).
(b) P((1 - rho) Q >= x) for each load, from the stored pmf, against exp(-x).
(c, d) The joint pmf P{(Q_{1,2}, Q_{2,3}) = (q, q')} (column joint_pmf) at the lowest and the
highest load that have one (0.9 and 0.9999 in the sweep), as heat maps on a log colour scale with
the dashed line (p_{1,2} x, p_{2,3} x). A binned pmf is shown as its mean per count: the bin's
probability divided by the number of counts in the bin, comparable with the pointwise pmf.
Not in the paper: the shares E[Q_S] / E[Q] against 1 - rho, the same collapse seen through the
per-type means (they tend to p_S), over the loads without a joint pmf.
"""

import matplotlib.colors
import numpy as np

from .loader import load_group
from .plotting import (Drawing, Grid, Series, legend_outside, plot_grid, plot_series, require,
                       tail_from_pmf)

import matplotlib.pyplot as plt  # noqa: E402  (after .plotting, which selects the Agg backend)

X_MAX = 6.0  # panel (b) shows x = (1 - rho) q up to here
DECADES = 8  # the colour scale of the heat maps spans this many decades below their maximum
BELOW_SCALE = "0.8"  # light grey: heat-map cells below the colour scale (white is no data)
MARKERS = "osD^v"  # panel (b): one per load
MARKER_STEP = 0.6  # panel (b): a load's markers are this far apart in x


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


def bin_edges(joint_qmax, joint_bin, bins):
    """Cell edges of an axis: bin j holds the counts j * joint_bin .. (capped at joint_qmax), and a
    count q is drawn on [q - 1/2, q + 1/2)."""
    return np.minimum(np.arange(bins + 1) * joint_bin, joint_qmax + 1) - 0.5


def mean_pmf_per_count(joint, shape, x_edges, y_edges):
    """[y bin, x bin] array of the bin's probability / number of counts in it (Q_{1,2} along x)."""
    mass = np.asarray(joint, dtype=float).reshape(shape).T
    return mass / np.outer(np.diff(y_edges), np.diff(x_edges))


def wedge_rows(path):
    exact = load_group(path, "exact").select(family="explicit", N=3, per_type=1)
    exact = exact.where(np.array([len(t) == 2 for t in exact["type_servers"]], dtype=bool))
    return require(exact, "the wedge (explicit family, N = 3, two types, per_type)", path)


def joint_panel_rows(rows, path):
    """The rows drawn in panels (c, d): the lowest and highest load with a joint pmf."""
    joint = require(rows.where(rows["joint_qmax"] >= 0),
                    "the wedge's joint pmf (joint_qmax, the sweep's third block)", path)
    return joint.where(np.unique([0, joint.rows - 1]))


def draw_joint(ax, drawing, rows, r, names):
    shape = tuple(int(n) for n in rows["joint_shape"][r])
    qmax, width = int(rows["joint_qmax"][r]), int(rows["joint_bin"][r])
    x_edges, y_edges = bin_edges(qmax, width, shape[0]), bin_edges(qmax, width, shape[1])
    z = mean_pmf_per_count(rows["joint_pmf"][r], shape, x_edges, y_edges)
    lam = rows["lambda"][r]
    top = z.max()
    mesh = plot_grid(ax, drawing, Grid(f"joint/lambda={lam:.6g}", x_edges, y_edges, z, int(rows["task_id"][r])),
                     norm=matplotlib.colors.LogNorm(vmin=top * 10.0 ** -DECADES, vmax=top),
                     cmap=matplotlib.colormaps["viridis"].with_extremes(under=BELOW_SCALE, bad=BELOW_SCALE),
                     rasterized=True)
    p = rows["type_p"][r]
    x = np.array([0.0, min(x_edges[-1], y_edges[-1] * p[0] / p[1])])
    plot_series(ax, drawing, Series(f"line/lambda={lam:.6g}", x, x * p[1] / p[0], np.full(2, -1), reference=True),
                color="white", linestyle="--", linewidth=1.2)
    ax.set_xlim(x_edges[0], x_edges[-1])
    ax.set_ylim(y_edges[0], y_edges[-1])
    ax.set_aspect("equal")
    ax.set_xlabel(f"$Q_{{{names[0]}}}$")
    ax.set_ylabel(f"$Q_{{{names[1]}}}$")
    unit = "" if width == 1 else f", mean over bins of {width} x {width}"
    drawing.figure.colorbar(mesh, ax=ax, shrink=0.85, extend="min", extendfrac=0.08,
                            label=f"P{{($Q_{{{names[0]}}}$, $Q_{{{names[1]}}}$) = (q, q')}}{unit}")
    # Cells below the scale (under 10^-DECADES of the maximum, or underflowed to 0) are grey: the
    # grey triangle at the bottom of the colour bar, and a note on the panel.
    ax.text(0.02, 0.98, f"grey: below the colour scale\n(< $10^{{-{DECADES}}}$ of the maximum)",
            transform=ax.transAxes, ha="left", va="top", fontsize="small",
            bbox=dict(facecolor="white", edgecolor="none", alpha=0.8))
    shown = rows["joint_mass"][r]
    ax.set_title(f"joint pmf, $\\lambda$ = {lam:.6g} (grid holds {100 * shown:.4g}% of the mass)",
                 fontsize="medium")


def draw(path):
    rows = wedge_rows(path).sorted_by("lambda")
    joint_rows = joint_panel_rows(rows, path)
    figure, axes = plt.subplots(2, 2, figsize=(11.5, 10.0), layout="constrained")
    drawing = Drawing(figure, {})
    ax_tail, ax_share, ax_c, ax_d = axes.flat
    masks = rows["type_servers"][0]
    names = [server_set_label(m) for m in masks]

    # (b) scaled total vs Exp(1), for the loads with a pmf. Exp(1) is a wide grey line under the
    # loads; the heaviest loads lie on it (and on each other) within the line width, so each load
    # has its own marker, placed at its own x, and its largest distance from e^-x in the legend.
    x = np.linspace(0.0, X_MAX, 200)
    plot_series(ax_tail, drawing, Series("tail/exp", x, np.exp(-x), np.full(len(x), -1), reference=True),
                color="0.7", linewidth=6, solid_capstyle="butt", label="Exp(1): $e^{-x}$")
    loads = np.flatnonzero(rows["qmax"] > 0)
    for i, r in enumerate(loads):
        x, tail = scaled_tail(rows["pmf"][r], int(rows["qmax"][r]), rows["rho"][r])
        every = max(1, round(MARKER_STEP / (1.0 - rows["rho"][r])))  # a marker every MARKER_STEP in x
        gap = np.abs(tail - np.exp(-x)).max()
        plot_series(ax_tail, drawing,
                    Series(f"tail/lambda={rows['lambda'][r]:.6g}", x, tail, np.full(len(x), rows["task_id"][r])),
                    drawstyle="steps-post", linewidth=1.2, marker=MARKERS[i % len(MARKERS)],
                    markevery=(i * every // len(loads), every), markersize=6, markerfacecolor="none",
                    label=f"$\\lambda$ = {rows['lambda'][r]:.6g}: max |P - $e^{{-x}}$| = {gap:.1g}")
    ax_tail.set_xlabel("x")
    ax_tail.set_ylabel("P((1 - $\\rho$) Q $\\geq$ x)")
    ax_tail.set_title("(b) scaled total number of jobs")
    legend_outside(ax_tail, title="the heaviest loads lie on $e^{-x}$ (see the markers)",
                   title_fontsize="small")

    # (c, d) the joint pmf with the line (p_1 x, p_2 x)
    for ax, letter, r in zip((ax_c, ax_d), "cd", range(joint_rows.rows)):
        draw_joint(ax, drawing, joint_rows, r, names)
        ax.set_title(f"({letter}) " + ax.get_title(), fontsize="medium")
    if joint_rows.rows < 2:
        ax_d.set_axis_off()

    # Not in the paper: the share of each type among the jobs, over the loads without a joint pmf.
    means = rows.where(rows["joint_qmax"] < 0)
    p = rows["type_p"][0]
    for k in range(2):
        share = np.array([means["EQ_type"][r][k] for r in range(means.rows)]) / means["EQ"]
        line = plot_series(ax_share, drawing, Series(f"share/{names[k]}", 1.0 - means["rho"], share, means["task_id"]),
                           marker="o", label=f"E[$Q_{{{names[k]}}}$] / E[Q]")
        ax_share.axhline(p[k], color=line.get_color(), linestyle="--", linewidth=1)
    ax_share.set_xscale("log")
    ax_share.invert_xaxis()
    ax_share.set_xlabel("1 - $\\rho$")
    ax_share.set_ylabel("share of the jobs (dashed: $p_S$)")
    ax_share.set_title("type shares E[$Q_S$] / E[Q] $\\to$ $p_S$ (not in the paper)")
    legend_outside(ax_share)
    figure.suptitle("Wedge, N = 3: state-space collapse in heavy traffic (exact)")
    return drawing
