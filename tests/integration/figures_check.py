#!/usr/bin/python3
# Needs Debian's /usr/bin/python3 (h5py, numpy, matplotlib); called by figures_paper.sh.
"""Checks that each figure draws exactly the numbers of its results file.

    figures_check.py REPO FIGURE_DIR FILE[=FIGURE] ...

For every file: the figure module draws it; then
  1. every Series it reports is what the figure shows: the line with gid = series key has the
     series' x and y, and the band (gid key:band) passes through (x, lo) and (x, hi);
  2. every Series equals numbers recomputed here from the file with plain h5py (no loader code),
     and every finished task the figure is about appears in some series;
  3. a few published values and shapes hold: the wedge constant (paper eq. 28), the N = 4
     closed forms (eqs. 36, 37), alpha_1 = 1/2 and the orderings of Fig. 3, N rho for
     independent queues, the JSQ large-deviation rate formula (docs/ldp.md);
  4. the loader returns every column of the file unchanged (ragged rows, text, status);
  5. FIGURE_DIR/<file stem>.png exists, is a real picture (not one flat colour) and .pdf exists;
  6. the figure faults found by looking at the PNGs stay fixed: the JSQ legend off the curves,
     heat-map cells below the colour scale not white, Fig. 3's panels on one y-range, a legend
     in each panel of Fig. 4, "epsilon" written one way in section 6.
"""

import math
import os
import re
import sys

import h5py
import numpy as np


def fail(message):
    raise AssertionError(message)


def close(actual, expected, what, rtol=1e-12, atol=0.0):
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    if actual.shape != expected.shape:
        fail(f"{what}: shape {actual.shape}, expected {expected.shape}")
    if not np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        worst = np.nanmax(np.abs(actual - expected))
        fail(f"{what}: differs from the file (largest difference {worst:.3g})")


# ---- the file, read with plain h5py ----------------------------------------------------------

def raw_group(path, group):
    """Done rows of a group: name -> array; ragged columns as lists of per-row arrays."""
    with h5py.File(path, "r") as f:
        g = f[group]
        status = f["tasks/status"][...]
        done_value = h5py.check_enum_dtype(f["tasks/status"].dtype)["done"]
        out = {}
        for name in g:
            if name.endswith("_offset") or name.endswith("_count") or h5py.h5ds.is_scale(g[name].id):
                continue
            data = g[name][...]
            if name + "_offset" in g:
                offsets, counts = g[name + "_offset"][...], g[name + "_count"][...]
                data = [data[o:o + c] for o, c in zip(offsets, counts)]
            elif data.dtype.kind == "S":
                data = np.array([v.decode() for v in data])
            out[name] = data
    done = status[out["task_id"]] == done_value
    return {k: ([v[i] for i in np.flatnonzero(done)] if isinstance(v, list) else v[done])
            for k, v in out.items()}


def row_of(rows, task_id):
    hits = np.flatnonzero(rows["task_id"] == task_id)
    if len(hits) != 1:
        fail(f"task {task_id}: {len(hits)} done rows")
    return hits[0]


def tail_from(pmf):
    """P(Q >= q): each tail summed exactly (math.fsum) from q on, plus the mass beyond the pmf
    where it stands clear of the rounding of 1 - sum."""
    beyond = 1.0 - math.fsum(pmf)
    beyond = beyond if beyond > 1e-12 else 0.0
    return np.array([math.fsum(pmf[q:]) + beyond for q in range(len(pmf))])


# ---- 1. the drawing shows the series ---------------------------------------------------------

def check_artists(drawing):
    lines = {line.get_gid(): line for ax in drawing.figure.axes for line in ax.get_lines()}
    bands = {c.get_gid(): c for ax in drawing.figure.axes for c in ax.collections}
    if not drawing.series:
        fail("the figure reports no series")
    for key, s in drawing.series.items():
        if key not in lines:
            fail(f"series {key}: no line drawn with that gid")
        line = lines[key]
        if not (np.array_equal(np.asarray(line.get_xdata(), dtype=float), np.asarray(s.x, dtype=float),
                               equal_nan=True)
                and np.array_equal(np.asarray(line.get_ydata(), dtype=float), np.asarray(s.y, dtype=float),
                                   equal_nan=True)):
            fail(f"series {key}: the drawn line is not the series")
        if len(s.task_ids) != len(s.x):
            fail(f"series {key}: {len(s.task_ids)} task ids for {len(s.x)} points")
        if s.lo is None:
            continue
        if key + ":band" not in bands:
            fail(f"series {key}: it has a confidence band but none is drawn")
        vertices = np.concatenate([p.vertices for p in bands[key + ":band"].get_paths()])
        for x, lo, hi in zip(s.x, s.lo, s.hi):
            for y in (lo, hi):
                if not np.any(np.all(np.isclose(vertices, [x, y], rtol=1e-12, atol=0), axis=1)):
                    fail(f"series {key}: band misses the point ({x}, {y})")


def check_grids(drawing):
    """Every reported Grid is what the figure shows: the mesh with gid = key has its cells and values."""
    meshes = {c.get_gid(): c for ax in drawing.figure.axes for c in ax.collections}
    for key, grid in drawing.grids.items():
        if key not in meshes:
            fail(f"grid {key}: no mesh drawn with that gid")
        mesh = meshes[key]
        values = np.ma.getdata(mesh.get_array()).reshape(grid.z.shape)
        if not np.array_equal(values, grid.z, equal_nan=True):
            fail(f"grid {key}: the drawn values are not the grid")
        corners = mesh.get_coordinates()  # [rows + 1, cols + 1, 2]
        if not (np.array_equal(corners[0, :, 0], grid.x_edges) and np.array_equal(corners[:, 0, 1], grid.y_edges)):
            fail(f"grid {key}: the drawn cell edges are not the grid's")


def white(rgba):
    return tuple(rgba[:3]) == (1.0, 1.0, 1.0) and rgba[3] > 0


def check_legend_outside(drawing):
    """The legend covers no curve: it lies wholly outside the plotting area of its axes."""
    drawing.figure.canvas.draw()
    for ax in drawing.figure.axes:
        if ax.get_legend() is not None and ax.get_legend().get_window_extent().overlaps(ax.get_window_extent()):
            fail("the legend overlaps the plotting area (and the curves in it)")


def data_series(drawing):
    return {k: s for k, s in drawing.series.items() if not s.reference}


def check_coverage(drawing, expected_ids, what):
    shown = {grid.task_id for grid in drawing.grids.values()}
    for s in data_series(drawing).values():
        shown.update(int(t) for t in s.task_ids)
    missing = set(int(t) for t in expected_ids) - shown
    if missing:
        fail(f"{what}: finished tasks {sorted(missing)[:10]} are in no series")
    extra = shown - set(int(t) for t in expected_ids)
    if extra:
        fail(f"{what}: series name tasks {sorted(extra)[:10]} that are not {what}")


# ---- 2./3. per figure ------------------------------------------------------------------------

def wedge_eq26_27(lam, q, q2):
    """Paper eqs. (26)-(28): P{(Q_{1,2}, Q_{2,3}) = (q, q')} of the wedge, p = (7/12, 5/12), mu = 1."""
    l1, l2 = 3 * lam * 7 / 12, 3 * lam * 5 / 12
    c = 3 * (2 - l1) * (2 - l2) * (1 - lam) / (l1 * l2 + 12 * (1 - lam))
    if q == 0 or q2 == 0:
        return c * (l1 / 2 if q2 == 0 else l2 / 2) ** (q + q2)
    bracket = (sum(math.comb(q + q2 - k - 1, q2 - 1) * 1.5 ** k for k in range(1, q + 1))
               + sum(math.comb(q + q2 - k - 1, q - 1) * 1.5 ** k for k in range(1, q2 + 1)))
    return c * (l1 / 3) ** q * (l2 / 3) ** q2 * bracket


def check_redundancy_fig2(path, drawing):
    rows = raw_group(path, "exact")
    series = drawing.series
    with_pmf = rows["qmax"] > 0
    for r in np.flatnonzero(with_pmf):
        s = series[f"tail/lambda={rows['lambda'][r]:.6g}"]
        q = np.arange(rows["qmax"][r] + 1)
        x = (1.0 - rows["rho"][r]) * q
        keep = x <= 6.0
        close(s.x, x[keep], "wedge tail x")
        close(s.y, tail_from(rows["pmf"][r][:rows["qmax"][r] + 1])[keep], "wedge tail y")
        # Paper eq. (28): P(Q = 0) of the wedge with edge rates 3 lambda (7/12, 5/12), mu = 1.
        lam = rows["lambda"][r]
        l12, l23 = 3 * lam * 7 / 12, 3 * lam * 5 / 12
        c28 = 3 * (2 - l12) * (2 - l23) * (1 - lam) / (l12 * l23 + 12 * (1 - lam))
        close(1.0 - s.y[1], c28, f"wedge P(Q = 0) vs eq. (28) at lambda = {lam}", rtol=1e-8)
    means = np.flatnonzero(rows["joint_qmax"] < 0)
    order = means[np.argsort(rows["lambda"][means])]
    for k, name in enumerate(("{1,2}", "{2,3}")):
        s = series[f"share/{name}"]
        close(s.x, 1.0 - rows["rho"][order], "wedge share x")
        close(s.y, [rows["EQ_type"][r][k] / rows["EQ"][r] for r in order], "wedge share y")
        # Theorem 3.1: the share tends to p_S at the heaviest load.
        p = rows["type_p"][order[-1]][k]
        if abs(s.y[-1] - p) > 1e-3:
            fail(f"wedge: share of {name} at the heaviest load is {s.y[-1]}, expected ~{p}")

    # Fig. 2(c, d): the joint pmf at the lowest and highest load that have one, as the mean
    # probability per count of each bin, Q_{1,2} along x.
    joint = np.flatnonzero(rows["joint_qmax"] >= 0)
    joint = joint[np.argsort(rows["lambda"][joint])][[0, -1]]
    near_line, mean_share = {}, {}
    for r in joint:
        lam, qmax, width = rows["lambda"][r], rows["joint_qmax"][r], rows["joint_bin"][r]
        bins = -(-(qmax + 1) // width)
        if list(rows["joint_shape"][r]) != [bins, bins]:
            fail(f"wedge joint pmf at lambda = {lam}: shape {rows['joint_shape'][r]}, expected {[bins, bins]}")
        edges = np.minimum(np.arange(bins + 1) * width, qmax + 1) - 0.5
        mass = rows["joint_pmf"][r].reshape(bins, bins)
        grid = drawing.grids[f"joint/lambda={lam:.6g}"]
        close(grid.x_edges, edges, "wedge joint x edges", rtol=0)
        close(grid.y_edges, edges, "wedge joint y edges", rtol=0)
        close(grid.z, mass.T / np.outer(np.diff(edges), np.diff(edges)), f"wedge joint pmf at lambda = {lam}")
        close(mass.sum(), rows["joint_mass"][r], "wedge joint mass", rtol=1e-12)
        p = rows["type_p"][r]
        line = series[f"line/lambda={lam:.6g}"]
        close(line.y, line.x * p[1] / p[0], "wedge dashed line (p_{1,2} x, p_{2,3} x)")
        if width == 1:  # the drawn numbers are paper eqs. (26, 27) with C from eq. (28)
            for q, q2 in ((0, 0), (5, 0), (0, 7), (1, 1), (4, 9), (20, 11), (qmax, qmax)):
                close(grid.z[q2, q], wedge_eq26_27(lam, q, q2), f"wedge eq. (26)-(27) at ({q}, {q2})",
                      rtol=1e-10)
        # Mass in the bins whose centre (q, q') has q' / (q + q') within 0.1 of the line's p_{2,3}.
        centre = (edges[:-1] + edges[1:]) / 2
        share = centre[None, :] / np.maximum(centre[:, None] + centre[None, :], 1e-300)
        near_line[lam] = mass[np.abs(share - p[1]) < 0.1].sum() / mass.sum()
        mean_q = [(mass.sum(axis=1 - k) * centre).sum() for k in range(2)]
        mean_share[lam] = mean_q[1] / sum(mean_q)
    # Fig. 2(c, d)'s shape (Theorem 3.1): the mass gathers around the dashed line as lambda -> 1
    # (0.35 of it near the line at 0.9, 0.98 at 0.9999), and the grid's mean share of {2,3} is p.
    low, high = min(near_line), max(near_line)
    if not (near_line[high] > 0.95 and near_line[low] < 0.5):
        fail(f"wedge joint pmf: mass near the line {near_line[low]:.3f} at lambda = {low}, "
             f"{near_line[high]:.3f} at {high}; expected < 0.5 and > 0.95")
    if abs(mean_share[high] - p[1]) > 0.005:
        fail(f"wedge joint pmf at lambda = {high}: mean share of {{2,3}} {mean_share[high]:.4f}, "
             f"expected {p[1]:.4f}")
    check_coverage(drawing, rows["task_id"], "wedge tasks")
    # Cells below the colour scale must not look like missing data (white).
    for key in drawing.grids:
        mesh = next(c for ax in drawing.figure.axes for c in ax.collections if c.get_gid() == key)
        if white(mesh.cmap.get_under()) or white(mesh.cmap.get_bad()):
            fail(f"grid {key}: cells below the colour scale are drawn white, like missing data")


def check_redundancy_fig3(path, drawing):
    rows = raw_group(path, "exact")
    complete = {n: rows["alpha"][r] for r, n in enumerate(rows["N"]) if rows["family"][r] == "complete"}
    rings = np.flatnonzero(np.isin(rows["family"], ["ring", "hetero_ring"]))
    by_n = {}
    for r in rings:
        n, family, eps = rows["N"][r], rows["family"][r], rows["eps"][r]
        key = f"N={n}/{family}" + ("" if np.isnan(eps) else f"/eps={eps:g}")
        s = drawing.series[key]
        qmax = rows["qmax"][r]
        close(s.x, np.arange(1, qmax + 1), key + " x")
        close(s.y, complete[n][1:qmax + 1] / rows["alpha"][r][1:qmax + 1], key + " y")
        close(s.y[0], 1.0, key + ": alpha_1 = 1/2 for every graph (paper section 5)", rtol=1e-12)
        by_n.setdefault(n, {})[0.5 if family == "ring" else eps] = s.y
    # Fig. 3's shape: below one from q = 2, more so as eps moves away from 1/2, and for the
    # homogeneous ring smaller at N = 12 than at N = 4.
    for n, curves in by_n.items():
        for eps, y in curves.items():
            if not np.all(y[1:] < 1.0):
                fail(f"Fig. 3, N = {n}, eps = {eps}: a ratio >= 1 for q >= 2")
        ordered = [curves[e] for e in sorted(curves)]
        for a, b in zip(ordered, ordered[1:]):
            if not np.all(a[1:] > b[1:]):
                fail(f"Fig. 3, N = {n}: ratios do not decrease as eps moves away from 1/2")
    if 4 in by_n and 12 in by_n:
        if not np.all(by_n[12][0.5][1:] < by_n[4][0.5][1:]):
            fail("Fig. 3: the homogeneous ring's ratio does not decrease from N = 4 to N = 12")
    check_coverage(drawing, rows["task_id"][rings], "ring tasks")
    if len({ax.get_ylim() for ax in drawing.figure.axes}) != 1:
        fail("Fig. 3: the panels have different y-ranges (N = 4 and 12 must compare)")


def eq36_complete4(r, q):
    return (1 / 9) * (1 - r) * (3 - r) * (3 - 2 * r) * (-4 * (2 * r / 3) ** q + 0.5 * (r / 3) ** q
                                                         + 4.5 * r ** q)


def eq37_ring4(r, q):
    return ((1 - r) * (2 - r) * (3 - 2 * r) / (6 - r)) * (-6 * (2 * r / 3) ** q + 2 * (r / 2) ** q
                                                           + 5 * r ** q)


def check_redundancy_fig4(path, drawing):
    rows = raw_group(path, "exact")
    for r in range(len(rows["task_id"])):
        n, rho, family, eps = rows["N"][r], rows["rho"][r], rows["family"][r], rows["eps"][r]
        key = f"N={n}/rho={rho:g}/{family}" + ("" if np.isnan(eps) else f"/eps={eps:g}")
        q = np.arange(rows["qmax"][r] + 1)
        pmf = rows["pmf"][r][:len(q)]
        close(drawing.series["pmf/" + key].x, q, key + " q")
        close(drawing.series["pmf/" + key].y, pmf, key + " pmf")
        close(drawing.series["tail/" + key].y, tail_from(pmf), key + " tail")
        if n == 4 and family in ("complete", "ring"):
            formula = eq36_complete4 if family == "complete" else eq37_ring4
            close(drawing.series["pmf/" + key].y, formula(rho, q.astype(float)),
                  f"{key} vs paper eq. ({36 if family == 'complete' else 37})", rtol=1e-10)
    shown = list(rows["task_id"])
    with h5py.File(path, "r") as f:
        has_sim = "simulate" in f
    if has_sim:
        sim = raw_group(path, "simulate")
        for r in range(len(sim["task_id"])):
            n, rho, family, eps = sim["N"][r], sim["rho"][r], sim["family"][r], sim["eps"][r]
            key = f"N={n}/rho={rho:g}/{family}" + ("" if np.isnan(eps) else f"/eps={eps:g}")
            s = drawing.series["sim/pmf/" + key]
            m = sim["qmax"][r] + 1
            estimate, half_width = sim["pmf"][r][:m], sim["pmf_hw"][r][:m]
            close(s.x, np.arange(m), key + " simulated q")
            close(s.y, estimate, key + " simulated pmf")
            close(s.lo, estimate - half_width, key + " simulated band low")
            close(s.hi, estimate + half_width, key + " simulated band high")
            # The simulator agrees with the exact pmf: every q within 3 half-widths (about 7
            # standard errors with 8 replications; fixed seed, so the outcome is reproducible).
            exact = drawing.series["pmf/" + key].y[:m]
            if np.any(np.abs(estimate - exact) > 3 * half_width):
                fail(f"{key}: simulated pmf more than 3 half-widths from the exact one")
            shown.append(sim["task_id"][r])
    check_coverage(drawing, shown, "occupancy tasks")
    if any(ax.get_legend() is None for ax in drawing.figure.axes):
        fail("Fig. 4: a panel without a legend")


def check_redundancy_sec6(path, drawing):
    rows = raw_group(path, "exact")
    for n in np.unique(rows["N"]):
        for family in ("independent", "tree_singletons", "singletons_full"):
            at = np.flatnonzero((rows["N"] == n) & (rows["family"] == family))
            for eps in np.unique(rows["eps"][at]):
                sel = at[np.isnan(rows["eps"][at]) if np.isnan(eps) else rows["eps"][at] == eps]
                sel = sel[np.argsort(rows["rho"][sel])]
                key = f"N={n}/independent" if family == "independent" else f"N={n}/{family}/eps={eps:g}"
                s = drawing.series[key]
                close(s.x, 1.0 - rows["rho"][sel], key + " x")
                close(s.y, rows["scaled_EQ"][sel], key + " y")
                if family == "independent":  # N M/M/1 queues: (1 - rho) E[Q] = N rho exactly
                    close(s.y, n * rows["rho"][sel], key + ": N rho", rtol=1e-9)
                elif 1.0 - rows["rho"][sel][-1] <= 1e-5 and not abs(s.y[-1] - 1.0) < 0.1:
                    fail(f"{key}: (1 - rho) E[Q] = {s.y[-1]} at the heaviest load, expected ~1")
    check_coverage(drawing, rows["task_id"], "section 6 tasks")
    texts = [ax.get_title() for ax in drawing.figure.axes]
    texts += [t.get_text() for ax in drawing.figure.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    if any(re.search(r"\beps\b", t) for t in texts):
        fail("section 6: 'eps' and '$\\epsilon$' mixed in the titles and legend")


def jsq_rate(j, horizon, lam):
    """-lim (1/n) log P(E_j^n(T)), docs/ldp.md "Theory" (lambda <= 1, T <= c / (1 - lambda))."""
    c = j - 2
    b = c / horizon
    y = (b + math.sqrt(b * b + 4 * lam)) / (2 * lam)
    return horizon * (b * math.log(y) - math.sqrt(b * b + 4 * lam) + lam + 1)


def check_jsq_fig2(path, drawing):
    rows = raw_group(path, "ldp")
    shown = []
    for j, horizon, lam in sorted(set(zip(rows["j"], rows["T"], rows["lambda"]))):
        setting = (rows["j"] == j) & (rows["T"] == horizon) & (rows["lambda"] == lam)
        for policy, d in set(zip(rows["policy"][setting], rows["policy_d"][setting])):
            for estimator in ("exact", "monte_carlo", "importance"):
                sel = np.flatnonzero(setting & (rows["policy"] == policy) & (rows["policy_d"] == d)
                                     & (rows["estimator"] == estimator) & np.isfinite(rows["log_rate"]))
                if len(sel) == 0:
                    continue
                sel = sel[np.argsort(rows["n"][sel])]
                name = f"power_of_{d}" if policy == "power_of_d" else policy
                key = f"{name}/{estimator}/j={j}/T={horizon:g}/lambda={lam:g}"
                s = drawing.series[key]
                close(s.x, rows["n"][sel], key + " n")
                close(s.y, rows["log_rate"][sel], key + " log_rate")
                if estimator != "exact":
                    close(s.lo, rows["log_rate_low"][sel], key + " band low")
                    close(s.hi, rows["log_rate_high"][sel], key + " band high")
                shown.extend(rows["task_id"][sel])
        theory = drawing.series.get(f"theory/j={j}/T={horizon:g}/lambda={lam:g}")
        if theory is not None and lam <= 1 and horizon <= (j - 2) / max(1 - lam, 1e-300):
            close(theory.y, [-jsq_rate(j, horizon, lam)] * 2, "JSQ rate formula", rtol=1e-9)
        # Fig. 2's shape: JIQ's probability is far larger than JSQ's at every n.
        exact = setting & (rows["estimator"] == "exact")
        for n in np.unique(rows["n"][exact]):
            at = exact & (rows["n"] == n)
            rate = {p: rows["log_rate"][at & (rows["policy"] == p)] for p in ("jsq", "jiq")}
            if len(rate["jsq"]) and len(rate["jiq"]) and not rate["jiq"][0] > rate["jsq"][0]:
                fail(f"JSQ Fig. 2 at n = {n}: JIQ's (1/n) log P is not above JSQ's")
    check_coverage(drawing, shown, "ldp tasks with a finite estimate")
    check_legend_outside(drawing)


def figure_title(drawing):
    """The figure's title (suptitle; matplotlib 3.6 has no public getter)."""
    import matplotlib.text
    texts = [t.get_text() for t in drawing.figure.findobj(matplotlib.text.Text)
             if t.get_text().startswith("Redundancy d = 2")]
    return texts[0] if texts else ""


def check_random_regular(path, drawing):
    rows = raw_group(path, "exact")
    complete = rows["family"] == "complete"
    # Panels (a, b) are at the largest N the complete graph shares with a sparse graph.
    n_max = max(n for n in np.unique(rows["N"][complete]) if (rows["N"][~complete] == n).any())

    def complete_et(n, rho):
        return rows["ET"][np.flatnonzero(complete & (rows["N"] == n) & np.isclose(rows["rho"], rho, rtol=1e-12))[0]]

    rhos = np.sort(rows["rho"][complete & (rows["N"] == n_max)])
    target = rhos[np.argmin(np.abs(rhos - 0.9))]
    groups = {"complete": complete, "ring": rows["family"] == "ring"}
    for degree in np.unique(rows["degree"][rows["family"] == "random_regular"]):
        groups[f"random_regular/degree={degree}"] = (rows["family"] == "random_regular") & (rows["degree"] == degree)
    missing = [key for key, members in groups.items() if not (members & (rows["N"] == n_max)).any()]
    for key in missing:
        if f"ET/N={n_max}/{key}" in drawing.series:
            fail(f"random-regular: {key} has no rows at N = {n_max} but a curve there")
    title = figure_title(drawing)
    if "sparse graphs" in title and not [k for k in groups if k != "complete" and k not in missing]:
        fail(f"random-regular: the title says sparse graphs, none is drawn: {title}")
    if missing and f"not at N = {n_max}" not in title:
        fail(f"random-regular: the title does not say what is missing at N = {n_max}: {title}")
    for key, members in groups.items():
        if key in missing:
            continue
        et = [rows["ET"][members & (rows["N"] == n_max) & np.isclose(rows["rho"], rho, rtol=1e-12)]
              for rho in rhos]
        close(drawing.series[f"ET/N={n_max}/{key}"].y, [v.mean() for v in et], key + " E[T]")
        close(drawing.series[f"ET/N={n_max}/{key}"].x, rhos, key + " rho")
        ratio = [v / complete_et(n_max, rho) for v, rho in zip(et, rhos)]
        s = drawing.series[f"ratio/N={n_max}/{key}"]
        close(s.y, [v.mean() for v in ratio], key + " ratio")
        if s.lo is not None:
            close(s.lo, [v.min() for v in ratio], key + " ratio band low")
            close(s.hi, [v.max() for v in ratio], key + " ratio band high")
        ns = np.unique(rows["N"][members])
        by_n = [rows["ET"][members & (rows["N"] == n) & np.isclose(rows["rho"], target, rtol=1e-12)]
                / complete_et(n, target) for n in ns]
        s = drawing.series[f"ratio/rho={target:g}/{key}"]
        close(s.x, ns, key + " N")
        close(s.y, [v.mean() for v in by_n], key + " ratio against N")
        if key == "complete":
            close(s.y, np.ones(len(ns)), "complete / complete")
    # Panels (a, b) show the largest N, panel (c) the target load: those are the tasks drawn.
    drawn = (rows["N"] == n_max) | np.isclose(rows["rho"], target, rtol=1e-12)
    for s in data_series(drawing).values():
        if not set(int(t) for t in s.task_ids) <= set(int(t) for t in rows["task_id"][drawn]):
            fail(f"series {s.key}: names tasks outside the drawn N and load")


def check_random_regular_without_ring_at_largest_n(path, qsweep_results):
    """A file whose ring rows at the largest N are not finished: the ring is drawn in panel (c)
    only, and the title says so."""
    import shutil
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "no-ring-at-largest-n.h5")
        shutil.copy(path, copy)
        with h5py.File(copy, "r+") as f:
            g = f["exact"]
            family = np.array([v.decode() for v in g["family"][...]])
            largest = g["N"][...] == g["N"][...][family == "ring"].max()
            pending = h5py.check_enum_dtype(f["tasks/status"].dtype)["pending"]
            status = f["tasks/status"][...]
            status[g["task_id"][...][(family == "ring") & largest]] = pending
            f["tasks/status"][...] = status
        drawing = qsweep_results.FIGURES["random-regular"].draw(copy)
        check_random_regular(copy, drawing)
        if not any(key.endswith("/ring") and key.startswith("ratio/rho=") for key in drawing.series):
            fail("random-regular: the ring is missing from panel (c) too")
        print("figures_check: random-regular without the ring at the largest N: "
              f"{figure_title(drawing).splitlines()[-1]}")


def check_loader(path, qsweep_results):
    """load_group returns every column of the file unchanged; select() matches as documented."""
    with h5py.File(path, "r") as f:
        groups = [g for g in ("exact", "simulate", "ldp") if g in f]
        enum = {v: k for k, v in h5py.check_enum_dtype(f["tasks/status"].dtype).items()}
        status = np.array([enum[int(v)] for v in f["tasks/status"][...]])
        for group in groups:
            table = qsweep_results.load_group(path, group, statuses=None)
            g = f[group]
            for name in g:
                if name.endswith("_offset") or name.endswith("_count"):
                    continue
                if h5py.h5ds.is_scale(g[name].id):
                    continue  # a named dimension (task, pmf_index, ...) holds no values
                raw = g[name][...]
                if name + "_offset" in g:
                    offsets, counts = g[name + "_offset"][...], g[name + "_count"][...]
                    for r, (o, c) in enumerate(zip(offsets, counts)):
                        if not np.array_equal(table[name][r], raw[o:o + c], equal_nan=True):
                            fail(f"loader: {group}/{name} row {r} differs from the flat slice")
                elif raw.dtype.kind == "S":
                    if list(table[name]) != [v.decode() for v in raw]:
                        fail(f"loader: {group}/{name} text differs")
                elif not np.array_equal(table[name], raw, equal_nan=raw.dtype.kind == "f"):
                    fail(f"loader: {group}/{name} differs")
            if list(table["status"]) != list(status[g["task_id"][...]]):
                fail(f"loader: {group} status differs from /tasks/status")
            done = qsweep_results.load_group(path, group)
            if done.rows != int(np.sum(table["status"] == "done")):
                fail(f"loader: {group} default rows are not the finished tasks")
            if "eps" in table:
                eps = table["eps"]
                if not np.array_equal(table.mask(eps=float("nan")), np.isnan(eps)):
                    fail("loader: select(eps=nan) is not the rows without eps")
                values = [v for v in np.unique(eps[~np.isnan(eps)])][:2]
                if values and not np.array_equal(table.mask(eps=values), np.isin(eps, values)):
                    fail("loader: select(eps=[a, b]) is not the rows with eps a or b")


CHECKS = {
    "redundancy-fig2": check_redundancy_fig2,
    "redundancy-fig3": check_redundancy_fig3,
    "redundancy-fig4": check_redundancy_fig4,
    "redundancy-sec6": check_redundancy_sec6,
    "jsq-fig2": check_jsq_fig2,
    "random-regular": check_random_regular,
}


def check_picture(figure_dir, stem):
    import matplotlib.image
    png = os.path.join(figure_dir, stem + ".png")
    pdf = os.path.join(figure_dir, stem + ".pdf")
    for path in (png, pdf):
        if not os.path.exists(path) or os.path.getsize(path) < 10_000:
            fail(f"{path}: missing or under 10 kB")
    pixels = matplotlib.image.imread(png)
    if pixels.shape[0] < 300 or pixels.shape[1] < 500:
        fail(f"{png}: only {pixels.shape[1]} x {pixels.shape[0]} pixels")
    if np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0).shape[0] < 50:
        fail(f"{png}: fewer than 50 distinct colours (an empty figure?)")


def check_tail_precision(qsweep_results):
    """Tails keep their relative precision far below the rounding of 1: the pmf (1 - r) r^q,
    q = 0..40, sums to r^q - r^41 from q on (its mass beyond, 1e-41, is below what 1 - sum can
    resolve and is left out)."""
    r = 0.1
    q = np.arange(41)
    tail = qsweep_results.plotting.tail_from_pmf((1 - r) * r ** q)
    close(tail, r ** q - r ** 41, "tail of a geometric pmf", rtol=1e-13)


def main():
    repo, figure_dir, *files = sys.argv[1:]
    sys.path.insert(0, os.path.join(repo, "python"))
    import qsweep_results
    check_tail_precision(qsweep_results)

    if not set(CHECKS) == set(qsweep_results.FIGURES):
        fail(f"figures without a check: {set(qsweep_results.FIGURES) - set(CHECKS)}")
    checked = set()
    for item in files:
        path, _, figure = item.partition("=")
        chosen = bool(figure)  # drawn with --figure: named after the figure too
        if not figure:
            figure = qsweep_results.SWEEPS[qsweep_results.read_attributes(path)["sweep_name"]]
        check_loader(path, qsweep_results)
        drawing = qsweep_results.FIGURES[figure].draw(path)
        check_artists(drawing)
        check_grids(drawing)
        check_legend_outside(drawing)
        CHECKS[figure](path, drawing)
        if figure == "random-regular":
            check_random_regular_without_ring_at_largest_n(path, qsweep_results)
        stem = os.path.splitext(os.path.basename(path))[0]
        check_picture(figure_dir, stem + (f"-{figure}" if chosen else ""))
        print(f"figures_check: {figure} from {os.path.basename(path)}: "
              f"{len(data_series(drawing))} series match the file")
        checked.add(figure)
    unchecked = set(CHECKS) - checked
    if unchecked:
        fail(f"no results file given for the figures {sorted(unchecked)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
