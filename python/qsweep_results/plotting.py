"""What every figure module shares: the plotted series, how they are drawn, how figures are saved.

A figure module's draw(path) returns a Drawing: the matplotlib figure and, for every curve it
drew, a Series holding exactly the numbers that went into the plot (and the task ids they came
from). The tests compare those numbers with the results file read independently, and with the
data of the drawn artists (found by their gid = series key).
"""

import dataclasses
import math
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display needed (batch jobs, CI)
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402


@dataclasses.dataclass
class Series:
    key: str                 # unique in its figure; the gid of the drawn line
    x: np.ndarray
    y: np.ndarray
    task_ids: np.ndarray     # task of each point (a mean over tasks: the first; -1: reference)
    lo: np.ndarray = None    # confidence band, where the estimate has one
    hi: np.ndarray = None
    reference: bool = False  # a theory curve, not results-file numbers


@dataclasses.dataclass
class Grid:
    """A heat map: z[i, j] is drawn on [x_edges[j], x_edges[j+1]) x [y_edges[i], y_edges[i+1])."""
    key: str                 # unique in its figure; the gid of the drawn mesh
    x_edges: np.ndarray
    y_edges: np.ndarray
    z: np.ndarray            # [len(y_edges) - 1, len(x_edges) - 1]
    task_id: int


@dataclasses.dataclass
class Drawing:
    figure: matplotlib.figure.Figure
    series: dict             # key -> Series
    grids: dict = dataclasses.field(default_factory=dict)  # key -> Grid

    def add(self, series):
        if series.key in self.series or series.key in self.grids:
            raise ValueError(f"series key '{series.key}' used twice")
        if isinstance(series, Grid):
            self.grids[series.key] = series
        else:
            self.series[series.key] = series
        return series


def new_drawing(panels, width_per_panel=4.6, height=3.8, sharey=False):
    """A figure with `panels` axes side by side; sharey=True gives them one y-range (to compare)."""
    figure, axes = plt.subplots(1, panels, figsize=(width_per_panel * panels, height),
                                squeeze=False, sharey=sharey, layout="constrained")
    return Drawing(figure, {}), list(axes[0])


def plot_series(ax, drawing, series, band_alpha=0.2, bars=False, **style):
    """Draws a Series as a line (gid = key) and its confidence interval, if any (gid = key +
    ':band'): a filled band, or with bars=True a vertical bar at each point (for estimates at a
    few separate x, where a band would interpolate between them)."""
    drawing.add(series)
    (line,) = ax.plot(series.x, series.y, **style)
    line.set_gid(series.key)
    if series.lo is not None:
        if bars:
            band = ax.vlines(series.x, series.lo, series.hi, color=line.get_color(), linewidth=1.2)
        else:
            band = ax.fill_between(series.x, series.lo, series.hi, color=line.get_color(),
                                   alpha=band_alpha, linewidth=0)
        band.set_gid(series.key + ":band")
    return line


def plot_grid(ax, drawing, grid, **style):
    """Draws a Grid as a pcolormesh (gid = key) and returns the mesh (for a colour bar)."""
    drawing.add(grid)
    mesh = ax.pcolormesh(grid.x_edges, grid.y_edges, grid.z, **style)
    mesh.set_gid(grid.key)
    return mesh


def save(drawing, out_dir, name, formats=("png", "pdf"), dpi=150):
    """Writes out_dir/name.png and .pdf; returns the paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for fmt in formats:
        path = os.path.join(out_dir, f"{name}.{fmt}")
        drawing.figure.savefig(path, dpi=dpi)
        paths.append(path)
    plt.close(drawing.figure)
    return paths


def tail_from_pmf(pmf):
    """P(Q >= q) for q = 0..len(pmf) - 1 from P(Q = q), the mass beyond the last q included.

    Summed from the far end, so that a tail keeps its relative precision down to the smallest
    probabilities (1 - cumsum falls to 0, a cliff on a log scale, once the tail is below the
    rounding of 1, about 1e-16). The mass beyond the last q, 1 - sum(pmf), is known only to that
    rounding: it is added where it stands clear of it (above 1e-12), else taken as 0.
    """
    pmf = np.asarray(pmf, dtype=float)
    beyond = 1.0 - math.fsum(pmf)
    beyond = beyond if beyond > 1e-12 else 0.0
    return np.cumsum(pmf[::-1])[::-1] + beyond


def legend_outside(ax, **style):
    """The axes' legend below its plotting area, where it covers no curve."""
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize="small",
                     **style)


def require(table, what, path):
    """Fails with a clear message when a figure finds none of the rows it needs."""
    if table.rows == 0:
        raise ValueError(f"{path}: no finished tasks for {what}; run the figure's sweep first "
                         "(qsweep status shows what is missing)")
    return table


def plain_log_ticks(ax, axis="y"):
    """Plain tick labels (0.5, 2, 10) on a log axis with a small range, minor ones at 2 and 5 only;
    major and minor labels in the same format."""
    target = ax.yaxis if axis == "y" else ax.xaxis

    def major(value, _position):
        return f"{value:g}"

    def minor(value, _position):
        mantissa = value / 10 ** np.floor(np.log10(value) + 1e-9)
        return f"{value:g}" if round(mantissa) in (2, 5) else ""

    target.set_major_formatter(matplotlib.ticker.FuncFormatter(major))
    target.set_minor_formatter(matplotlib.ticker.FuncFormatter(minor))
