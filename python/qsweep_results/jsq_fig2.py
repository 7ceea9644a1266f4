"""JSQ paper, Figure 2: (1/n) log P(E_j^n(T)) against n for JSQ and JIQ.

Sweeps: sweeps/paper-jsq-fig2.yaml (CI-sized) and sweeps/large-jsq-fig2.yaml (cluster-sized).
Every (policy, estimator) pair present in the file is one curve: the exact lumped chain (a
rigorous interval, far thinner than the line), plain Monte Carlo (the paper's estimator) and
importance sampling, both with their 95% confidence interval as a bar at each n. The dashed line
is -theory_rate, the large-deviation limit of (1/n) log P for JSQ. A Monte Carlo task with no hit
has log P = -inf and is left out (the file keeps it), and so are tasks with other initial_counts.

Each (policy, estimator) pair has its own colour and marker. A relative error r of P is a bar of
about +-1.96 r / n in (1/n) log P: importance sampling, which stops at a fixed relative error
(target_rel_error), has long bars at small n and short ones at large n; the legend says so.
"""

import numpy as np

from .loader import load_group
from .plotting import Series, new_drawing, plain_log_ticks, plot_series, require

ESTIMATOR_STYLE = {"exact": dict(linestyle="-", marker="."),
                   "monte_carlo": dict(linestyle="none", marker="o", markersize=5, markerfacecolor="none"),
                   "importance": dict(linestyle="none", marker="s", markersize=4)}
ESTIMATOR_LABEL = {"exact": "exact chain", "monte_carlo": "Monte Carlo",
                   "importance": "importance sampling"}
# One colour per (policy, estimator): each estimate and its bars can be told apart.
COLOR = {("jsq", "exact"): "C0", ("jsq", "monte_carlo"): "C2", ("jsq", "importance"): "C4",
         ("jiq", "exact"): "C3", ("jiq", "monte_carlo"): "C1", ("jiq", "importance"): "C6",
         ("power_of_d", "exact"): "C7", ("power_of_d", "monte_carlo"): "C8",
         ("power_of_d", "importance"): "C9"}


def policy_name(policy, policy_d):
    """jsq, jiq, or power_of_2 (power_of_d with its d)."""
    return f"power_of_{policy_d}" if policy == "power_of_d" else policy


def draw(path):
    ldp = load_group(path, "ldp")
    default_start = np.array([len(c) == 0 for c in ldp["initial_counts"]], dtype=bool)
    ldp = require(ldp.where(default_start), "ldp tasks starting with all queues at length 1", path)
    drawing, (ax,) = new_drawing(1, width_per_panel=10.0, height=4.8)
    settings = sorted({(j, t, lam) for j, t, lam in zip(ldp["j"], ldp["T"], ldp["lambda"])})
    for j, horizon, lam in settings:
        setting = ldp.select(j=j, T=horizon, **{"lambda": lam})
        suffix = "" if len(settings) == 1 else f", j = {j}, T = {horizon:g}, $\\lambda$ = {lam:g}"
        for policy, policy_d in sorted(set(zip(setting["policy"], setting["policy_d"]))):
            name = policy_name(policy, policy_d)
            for estimator in ESTIMATOR_STYLE:
                curve = setting.select(policy=policy, policy_d=policy_d, estimator=estimator).sorted_by("n")
                curve = curve.where(np.isfinite(curve["log_rate"]))
                if curve.rows == 0:
                    continue
                key = f"{name}/{estimator}/j={j}/T={horizon:g}/lambda={lam:g}"
                band = estimator != "exact"
                plot_series(ax, drawing,
                            Series(key, curve["n"].astype(float), curve["log_rate"], curve["task_id"],
                                   lo=curve["log_rate_low"] if band else None,
                                   hi=curve["log_rate_high"] if band else None),
                            bars=band, color=COLOR[policy, estimator], label=f"{name.upper()}, "
                            f"{ESTIMATOR_LABEL[estimator]}{suffix}", **ESTIMATOR_STYLE[estimator])
        theory = setting.select(policy="jsq", theory_rate=np.isfinite)
        if theory.rows:
            rate = theory["theory_rate"][0]
            n = np.array([ldp["n"].min(), ldp["n"].max()], dtype=float)
            plot_series(ax, drawing,
                        Series(f"theory/j={j}/T={horizon:g}/lambda={lam:g}", n, np.full(2, -rate),
                               np.full(2, -1), reference=True),
                        color="black", linestyle="--", linewidth=1,
                        label=f"JSQ large-deviation limit {-rate:.4g}{suffix}")
    ax.set_xscale("log")
    plain_log_ticks(ax, "x")
    ax.set_xlabel("n (servers)")
    ax.set_ylabel("(1/n) log P($E_j^n$(T))")
    if len(settings) == 1:
        j, horizon, lam = settings[0]
        ax.set_title(f"Some queue reaches j = {j} by T = {horizon:g}, $\\lambda$ = {lam:g}, "
                     "queues start at length 1")
    # The legend goes right of the plot, clear of the curves and the limit line; its title says
    # what the bars are and why importance sampling's are long at small n.
    note = "bars: 95% confidence intervals"
    targets = np.unique(ldp.select(estimator="importance")["target_rel_error"])
    if len(targets) == 1 and targets[0] > 0:
        note += (f"\nimportance sampling stops at {100 * targets[0]:g}% relative error,"
                 f"\na bar of about $\\pm${1.96 * targets[0]:.2g}/n: long at small n")
    ax.legend(fontsize="small", title=note, title_fontsize="small", alignment="left",
              loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return drawing
