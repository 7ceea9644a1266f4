"""Read a qsweep results file (HDF5, docs/results-layout.md) into numpy arrays.

Runs under Debian's /usr/bin/python3 (h5py and numpy from the python3-h5py package). pandas is
optional: Table.to_dataframe() needs it, nothing else does.

    from qsweep_results import load_group
    exact = load_group("results/paper-redundancy-fig4-occupancy.h5", "exact")
    ring = exact.select(family="ring", N=4)
    ring["pmf"][0]          # P(Q = q), q = 0..qmax of the first matching task
"""

import h5py
import numpy as np

# /tasks/status is an HDF5 enum; these are its names (the file says so too).
STATUS_NAMES = ("pending", "done", "failed", "unstable")
# What this reader understands (6: one meaning per column name, UDUNITS units; 3 added
# /tasks/key, 2 /tasks/checksum and /tasks/warning; the earlier ones read the same, with the
# names of version 6: _current_names).
FORMAT_NAME, FORMAT_VERSION = "qsweep-results", 6

# Units before format version 6 (the model's own) as version 6 states them: (units, model_units).
_OLD_UNITS = {"jobs": ("1", "jobs"), "jobs^2": ("1", "jobs^2"), "time": ("1", "time"),
              "1/time": ("1", "1/time"), "s": ("s", ""), "1/s": ("s-1", "")}
# Columns of /meanfield renamed in version 6 (per-server means had the names of the whole
# system's), and the descriptions of what version 6 names and adds.
_RENAMED_BEFORE_6 = {"meanfield": {"EQ": "ER_per_server", "EQ_V": "EQ_per_server_V",
                                   "EQ_N": "EQ_per_server_N"}}
_DESCRIPTIONS_6 = {
    "ER_per_server": ("mean number of replicas per server, sum_i x_i (not truncated; jobs, but "
                      "for redundancy_coc)", "replicas"),
    "EQ_per_server": ("mean number of jobs per server", "jobs"),
    "EQ_per_server_hw": ("95% half-width of EQ_per_server", "jobs"),
    "EQ_per_server_V": ("order 1: sum_i V_i over every level, the 1/N term of EQ_per_server",
                        "jobs"),
    "EQ_per_server_N": ("order 1: EQ_per_server + EQ_per_server_V / N, mean jobs per server of "
                        "N servers", "jobs"),
}
# Where the parameters of a group of a file before version 6 (no `role` attribute) end: its first
# result column (/meanfield's order and N, appended later, are parameters too).
_FIRST_RESULT = {"exact": "stable", "simulate": "EQ", "meanfield": "EQ", "ldp": "probability"}


def _decode(values):
    """Fixed-length UTF-8 text (bytes) as a numpy array of str."""
    return np.array([v.decode("utf-8") for v in values], dtype=str)


def read_attributes(path):
    """The root attributes (provenance: sweep_name, sweep_yaml, git_commit, ...) as a dict."""
    with h5py.File(path, "r") as f:
        return {k: (v.decode("utf-8") if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


def _open(path):
    """Opens a results file read-only, refusing files that are not (or too new) qsweep results."""
    f = h5py.File(path, "r")
    name, version = f.attrs.get("format"), f.attrs.get("format_version")
    if isinstance(name, bytes):
        name = name.decode("utf-8")
    if name != FORMAT_NAME:
        f.close()
        raise ValueError(f"{path}: not a qsweep results file (format attribute {name!r})")
    if version is None or int(version) > FORMAT_VERSION:
        f.close()
        raise ValueError(f"{path}: format_version {version} is newer than this reader "
                         f"({FORMAT_VERSION}); use the python/ of the qsweep that wrote it")
    return f


def _format_version(f):
    return int(f.attrs.get("format_version", 1))


def _column_attributes(group, names, version):
    """Each column's description, units (UDUNITS-2), model_units and role ("parameter" or
    "result"), as version 6 states them (older files: converted, roles from _FIRST_RESULT)."""
    result_seen = False
    attributes = {}
    first_result = _FIRST_RESULT.get(group.name.strip("/"))
    for name in names:
        a = {k: (v.decode("utf-8") if isinstance(v, bytes) else str(v))
             for k, v in group[name].attrs.items()
             if k in ("description", "units", "model_units", "role")}
        if version < 6:
            units, model_units = _OLD_UNITS.get(a.get("units", ""), ("", ""))
            kind = group[name].dtype.kind
            a["units"] = units or ("1" if kind in "fiu" else "")
            if model_units:
                a["model_units"] = model_units
            result_seen = result_seen or name == first_result
            a["role"] = ("parameter" if not result_seen or name in ("order", "N") or
                         first_result is None else "result")
        attributes[name] = a
    return attributes


def _current_names(group, version, columns, attributes):
    """The columns of a file of an older format version with the names and meanings of version
    6: /meanfield's per-server EQ, EQ_V, EQ_N renamed, and EQ_per_server (and /simulate's
    EQ_per_server_hw) made as version 6 makes them, from EQ (EQ_hw) / N, or /meanfield's
    replicas per server / d under redundancy_coc (docs/results-layout.md, "Older files")."""
    if version >= 6:
        return columns, attributes
    renamed = _RENAMED_BEFORE_6.get(group, {})
    after = {}  # column -> the columns version 6 places after it, with their values
    if group in ("exact", "simulate") and "EQ" in columns:
        servers = columns["N"].astype(float)
        if group == "exact":
            after["EQ"] = [("EQ_per_server", columns["EQ"] / servers)]
        else:
            after["EQ_hw"] = [("EQ_per_server", columns["EQ"] / servers),
                              ("EQ_per_server_hw", columns["EQ_hw"] / servers)]
    if group == "meanfield" and "EQ" in columns:
        redundancy = columns["policy"] == "redundancy_coc"
        d = np.where(redundancy, columns["policy_d"], 1).astype(float)
        after["EQ"] = [("EQ_per_server", np.where(redundancy, columns["EQ"] / d, columns["EQ"]))]
    new_columns, new_attributes = {}, {}
    for name, values in columns.items():
        current = renamed.get(name, name)
        new_columns[current] = values
        new_attributes[current] = dict(attributes.get(name, {}))
        if current in _DESCRIPTIONS_6:
            new_attributes[current]["description"], new_attributes[current]["model_units"] = \
                _DESCRIPTIONS_6[current]
        for made, made_values in after.get(name, []):
            new_columns[made] = made_values
            new_attributes[made] = {"description": _DESCRIPTIONS_6[made][0], "units": "1",
                                    "model_units": _DESCRIPTIONS_6[made][1], "role": "result"}
    return new_columns, new_attributes


def _read_columns(group):
    """Every column of an HDF5 group, in schema order: 1-D arrays, 2-D vector columns, ragged
    columns per row. Named dimensions (dimension scales such as `task`) hold no values."""
    ordered = [n for n in group.keys() if not h5py.h5ds.is_scale(group[n].id)]  # schema order
    names = set(ordered)
    ragged = {n for n in names if f"{n}_offset" in names and f"{n}_count" in names}
    helpers = {f"{n}_{suffix}" for n in ragged for suffix in ("offset", "count")}
    columns = {}
    for name in [n for n in ordered if n not in helpers]:
        data = group[name][...]
        if name in ragged:
            offset = group[f"{name}_offset"][...]
            count = group[f"{name}_count"][...]
            rows = np.empty(len(offset), dtype=object)
            for r, (o, c) in enumerate(zip(offset, count)):
                rows[r] = data[o:o + c]
            columns[name] = rows
        elif data.dtype.kind == "S":
            columns[name] = _decode(data)
        else:
            columns[name] = data
    return columns


# The attribute that marks a group of rows derived from the method groups' rows (/thresholds),
# not one row per task (docs/results-layout.md).
DERIVED_ATTRIBUTE = "derived"
THRESHOLDS = "thresholds"


def _derived(group):
    return DERIVED_ATTRIBUTE in group.attrs


def group_names(path):
    """The method groups the file holds ("exact", "simulate", ...), in the file's order.

    Derived tables such as /thresholds are not method groups: see load_thresholds."""
    with _open(path) as f:
        return tuple(name for name in f if name != "tasks" and not _derived(f[name]))


def load_thresholds(path):
    """The /thresholds table of a refining sweep with a crossing (refine: {..., crossing: C};
    docs/results-layout.md, "/thresholds"): one row per crossing of each curve, one row (found 0)
    for a curve whose quantity does not cross, with its identifying columns (block, method, the
    parameters of the curve), the refinement (axis, quantity, crossing, tolerance, max_points) and
    the threshold (threshold, bracket_lo, bracket_hi, value_lo, value_hi, converged, state, note).

    A file without the group (older files, sweeps without a crossing, a refining run whose first
    round has not ended) gives an empty Table (no columns, 0 rows)."""
    with _open(path) as f:
        if THRESHOLDS not in f:
            return Table()
        return Table(_read_columns(f[THRESHOLDS]))


def load_tasks(path):
    """The /tasks group: id, method, block, status (as text), error, wall_seconds, rank, ..."""
    with _open(path) as f:
        tasks = _read_columns(f["tasks"])
        enum = h5py.check_enum_dtype(f["tasks/status"].dtype)
    names = {value: name for name, value in enum.items()} if enum else dict(enumerate(STATUS_NAMES))
    tasks["status"] = np.array([names[int(s)] for s in tasks["status"]], dtype=str)
    return Table(tasks)


def load_group(path, group, statuses=("done",)):
    """One method group ("exact", "simulate" or "ldp") as a Table, one row per task.

    Adds the task's `status`, `error` and `warning` from /tasks (its key, by which rows of two files of a
    study join, is load_tasks(path)["key"][table["task_id"]]). By default only finished tasks are
    returned; pass statuses=None for every row (results of unfinished rows are NaN / -1).
    Vector columns (pmf, alpha, ...) are 2-D arrays [rows, width] padded with NaN; ragged
    columns (EQ_type, ER_server, ...) are object arrays holding one 1-D array per row.
    A file of an older format version reads with the names and meanings of version 6
    (docs/results-layout.md, "Older files"); `table.attributes[name]` holds each column's
    description, units, model_units and role.
    """
    with _open(path) as f:
        if group not in f:
            raise KeyError(f"{path}: no group /{group} (the sweep has no {group} tasks)")
        if _derived(f[group]):
            raise KeyError(f"{path}: /{group} is not a method group (one row per task): "
                           f"read it with load_thresholds")
        version = _format_version(f)
        columns = _read_columns(f[group])
        attributes = _column_attributes(f[group], list(columns), version)
    columns, attributes = _current_names(group, version, columns, attributes)
    if group == "simulate":
        columns = _simulate_columns_of_version_6(columns)
    elif group == "meanfield" and "T_quantile" not in columns:
        # Files before format version 6: no levels or times asked for, no values.
        none = np.empty((len(columns["task_id"]), 0))
        columns.update(quantiles=none, tail_times=none, T_quantile=none, T_tail=none)
    tasks = load_tasks(path)
    ids = columns["task_id"]
    # The task's status, error and warning right after task_id, as `qsweep export` has the status
    # and the warning (files before format version 2 have no warnings: empty).
    ordered = {"task_id": ids, "status": tasks["status"][ids], "error": tasks["error"][ids],
               "warning": (tasks["warning"][ids] if "warning" in tasks
                           else np.full(len(ids), "", dtype=str))}
    ordered.update((name, values) for name, values in columns.items() if name != "task_id")
    table = Table(ordered)
    if statuses is not None:
        table = table.where(np.isin(table["status"], list(statuses)))
    text = {"role": "task", "units": ""}
    table.attributes = {
        "status": dict(text, description="the task's status: pending, done, failed or unstable"),
        "error": dict(text, description="failed: the error message; unstable: the violating set"),
        "warning": dict(text, description="why the row should not be trusted silently "
                        "(\"; \"-separated; empty: none)"),
        **attributes}
    return table


# Levels of the three quantiles that /simulate held as T_p50, T_p90 and T_p99 before format
# version 6, the default of `quantiles` since.
_RETIRED_QUANTILES = ((0.5, "T_p50"), (0.9, "T_p90"), (0.99, "T_p99"))


def _simulate_columns_of_version_6(columns):
    """A /simulate group's columns as a file of format version 6 has them.

    Older files hold three quantiles as T_p50, T_p90, T_p99 (and half-widths): they become
    `quantiles` (the levels 0.5, 0.9, 0.99 in every row), `T_quantile` and `T_quantile_hw`, as a
    file of version 6 stores them, so that one name reads every file. The columns new in version 6
    that such a file lacks are filled as a row without them has them: `tail_times`, `T_tail`,
    `T_tail_hw`, `observe_times`, `EQ_t`, `EQ_t_hw` with no values ([rows, 0]), `occupancy_t` and
    `occupancy_t_hw` with an empty array per row."""
    if "T_quantile" in columns:
        return columns
    rows = len(columns["task_id"])
    none = np.empty((rows, 0))

    def empty_per_row():
        cells = np.empty(rows, dtype=object)
        for r in range(rows):
            cells[r] = np.empty(0)
        return cells

    retired = all(name in columns for _, name in _RETIRED_QUANTILES)
    levels = np.tile([p for p, _ in _RETIRED_QUANTILES], (rows, 1)) if retired else none
    out = {}
    for name, values in columns.items():
        if name in ("T_p50_hw", "T_p90_hw", "T_p99_hw", "T_p90", "T_p99"):
            continue
        if name == "T_p50":
            out["T_quantile"] = np.column_stack([columns[n] for _, n in _RETIRED_QUANTILES])
            out["T_quantile_hw"] = np.column_stack(
                [columns[f"{n}_hw"] for _, n in _RETIRED_QUANTILES])
            out["T_tail"] = none
            out["T_tail_hw"] = none
            out["EQ_t"] = none
            out["EQ_t_hw"] = none
            out["occupancy_t"] = empty_per_row()
            out["occupancy_t_hw"] = empty_per_row()
            continue
        out[name] = values
        if name == "occupancy_max":  # the parameters of version 6 follow it
            out["quantiles"] = levels
            out["tail_times"] = none
            out["observe_times"] = none
    return out


def _level_column(table, levels, values, level):
    """Per row, the value of the 2-D column `values` where the row's `levels` equal `level`
    (within 1e-12 relative), NaN where the row has no such level."""
    out = np.full(table.rows, np.nan)
    if values not in table:  # no half-widths (a meanfield table)
        return out
    levels = np.asarray(table[levels], dtype=float)
    data = np.asarray(table[values], dtype=float)
    if levels.size == 0 or data.size == 0:
        return out
    match = np.isclose(levels, level, rtol=1e-12, atol=0.0)
    rows, cols = np.nonzero(match)
    out[rows] = data[rows, cols]
    return out


def sojourn_quantile(table, level):
    """The simulate rows' sojourn-time quantile at `level` and its 95% half-width: two arrays,
    NaN in rows whose `quantiles` do not list the level (docs/sim.md, "Sojourn-time
    distribution"). Works on files of every version (T_p50, T_p90, T_p99 of older files are the
    levels 0.5, 0.9, 0.99).

    A meanfield table (docs/meanfield.md) works too: its half-widths are NaN (it has none)."""
    return (_level_column(table, "quantiles", "T_quantile", level),
            _level_column(table, "quantiles", "T_quantile_hw", level))


def sojourn_tail(table, time):
    """The simulate rows' P(T > time) and its 95% half-width: two arrays, NaN in rows whose
    `tail_times` do not list the time (a meanfield table too, as in sojourn_quantile)."""
    return (_level_column(table, "tail_times", "T_tail", time),
            _level_column(table, "tail_times", "T_tail_hw", time))


def paired_difference(path, by, a, b, estimate="ET", level=0.95):
    """The paired difference of a simulate estimate between tasks that differ only in `by`.

    For every finished simulate row with `by` == a, the row with `by` == b and the same other
    parameters (the columns before EQ, the `policy_d` of other policies aside when `by` is
    "policy"), the differences of their per-replication estimates (of E[T] or E[Q]: replication r
    of both) give a Student t interval. With `common_random_numbers` listing `by` the two rows ran
    on the same arrivals and services, so the difference is much more precise than the rows' own
    intervals suggest; without, the pairs are independent and the interval is still valid
    (docs/sim.md, "Common random numbers").

    A coupled pair is compared over the window both rows observed: from the later of their
    truncation points to the earlier of their ends, each replication's estimates recomputed from
    the totals the rows store on the grid of window bounds (`cumulative_time`,
    `cumulative_replications`). Rows without them (files made before they were stored) and
    pairs that did not share their streams use each row's own window (`ET_replications`,
    `EQ_replications`), as do coupled pairs whose windows do not overlap on the grid (with a
    warning).

    Returns one dict per pair: task_id_a, task_id_b, difference (mean a - b), half_width (at
    `level`), replications, correlation (of the pair's replication estimates), unpaired_half_width
    (what independent runs of the rows' own windows would give, from their own estimates), common
    (whether the pair shared its streams), window ((start, end) in simulated time from the start of
    a replication, as `warmup_used`: the common window used, or None when each row's own window
    was), equal_windows (whether the rows' own windows are the same: the same rounds, told by their
    events, and the same warmup_used), and the matched parameters under "parameters". Needs scipy
    (python3-scipy).
    """
    import warnings

    from scipy import stats

    table = load_group(path, "simulate")
    names = list(table.keys())
    if by not in names:
        raise KeyError(f"no column '{by}'; columns: {', '.join(names)}")
    if estimate not in ("ET", "EQ"):
        raise KeyError(f"estimate '{estimate}': per-replication estimates exist for ET and EQ only")
    per_replication = f"{estimate}_replications"
    if per_replication not in table:
        raise KeyError(f"{path}: no column '{per_replication}' (a file made before per-replication "
                       f"estimates were stored)")
    ignored = {"task_id", "status", "error", "warning", by} | ({"policy_d"} if by == "policy" else set())
    parameters = [n for n in names[:names.index("EQ")] if n not in ignored]

    def key(row):
        values = []
        for name in parameters:
            value = table[name][row]
            value = np.asarray(value)
            values.append(tuple(np.where(np.isnan(value), -np.inf, value).ravel().tolist())
                          if value.dtype.kind == "f" else tuple(value.ravel().tolist()))
        return tuple(values)

    rows_b = {}
    for row in np.flatnonzero(_matches(table[by], b)):
        rows_b.setdefault(key(row), []).append(row)
    pairs = []
    for row_a in np.flatnonzero(_matches(table[by], a)):
        for row_b in rows_b.get(key(row_a), []):
            own_x = np.asarray(table[per_replication][row_a], dtype=float)
            own_y = np.asarray(table[per_replication][row_b], dtype=float)
            shared = table["common_random_numbers"][row_a] if "common_random_numbers" in table else ""
            common = by in str(shared).split(",")
            equal_windows = _equal_windows(table, row_a, row_b)
            window = _common_window(table, row_a, row_b) if common else None
            if window is not None:
                x = _window_estimates(table, row_a, window, estimate)
                y = _window_estimates(table, row_b, window, estimate)
            else:
                x, y = own_x, own_y
            keep = ~(np.isnan(x) | np.isnan(y))
            x, y = x[keep], y[keep]
            n = len(x)
            if n < 2:
                continue
            if common and window is None and not equal_windows:
                has_totals = _cumulative(table, row_a) is not None and _cumulative(table, row_b) is not None
                reason = ("their windows do not overlap on the grid of window bounds" if has_totals
                          else "the file holds no totals for a common window (made before they "
                          "were stored)")
                warnings.warn(
                    f"{path}: tasks {int(table['task_id'][row_a])} and {int(table['task_id'][row_b])}"
                    f" shared their streams but their windows differ (warmup_used "
                    f"{table['warmup_used'][row_a]:g} and {table['warmup_used'][row_b]:g}, events "
                    f"{int(table['events'][row_a])} and {int(table['events'][row_b])}: they stopped "
                    f"at different rounds) and {reason}, so each row's own window is used and the "
                    f"pairing is weak (docs/sim.md, \"Common random numbers\")", stacklevel=2)
            d = x - y
            t = stats.t.ppf(0.5 + level / 2.0, n - 1)
            # Independent runs of the rows' own windows: their own estimates, as stored.
            own_keep = ~(np.isnan(own_x) | np.isnan(own_y))
            own_x, own_y = own_x[own_keep], own_y[own_keep]
            own_n = len(own_x)
            own_t = stats.t.ppf(0.5 + level / 2.0, own_n - 1) if own_n >= 2 else float("nan")
            given = _given_warmup(table, row_a)
            pairs.append({
                "task_id_a": int(table["task_id"][row_a]),
                "task_id_b": int(table["task_id"][row_b]),
                "difference": float(d.mean()),
                "half_width": float(t * d.std(ddof=1) / np.sqrt(n)),
                "replications": n,
                "correlation": float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0
                else float("nan"),
                "unpaired_half_width": float(
                    own_t * np.sqrt((own_x.var(ddof=1) + own_y.var(ddof=1)) / own_n))
                if own_n >= 2 else float("nan"),
                "common": common,
                "window": None if window is None else (given + window[0], given + window[1]),
                "equal_windows": equal_windows,
                "parameters": {name: table[name][row_a] for name in parameters},
            })
    return pairs


def _given_warmup(table, row):
    """The warm-up a row asked for (0 when detected: NaN in the `warmup` column)."""
    warmup = float(table["warmup"][row])
    return 0.0 if np.isnan(warmup) else warmup


def _cumulative(table, row):
    """A row's grid times (after the warm-up asked for) and its totals [replication, time, 3]
    (integral of Q, sum and number of sojourn times since the warm-up asked for), or None for a
    row without them: no common random numbers, or a file made before they were stored."""
    if "cumulative_time" not in table or "cumulative_replications" not in table:
        return None
    times = np.asarray(table["cumulative_time"][row], dtype=float)
    totals = np.asarray(table["cumulative_replications"][row], dtype=float)
    if len(times) == 0 or len(totals) == 0 or len(totals) % (3 * len(times)) != 0:
        return None
    return times, totals.reshape(-1, len(times), 3)


def _common_window(table, row_a, row_b):
    """The window (start, end), after the warm-up asked for, that both rows observed: from the
    later of their own windows' starts to the earlier of their ends, on grid times both rows hold
    (or the start of the observation, where every total is 0). None without totals in both rows
    or when no such window is left."""
    grids = [_cumulative(table, row) for row in (row_a, row_b)]
    if any(g is None for g in grids):
        return None
    times = np.intersect1d(np.append(grids[0][0], 0.0), np.append(grids[1][0], 0.0))
    # Own windows: from the truncation (warmup_used beyond the warm-up asked for) to the end of
    # the last round (the last grid time).
    start = max(float(table["warmup_used"][row]) - _given_warmup(table, row) for row in (row_a, row_b))
    end = min(g[0][-1] for g in grids)
    tolerance = 1e-9 * end  # warmup_used is the warm-up asked for plus a grid time, rounded
    after = times[times >= start - tolerance]
    before = times[times <= end]
    if len(after) == 0 or len(before) == 0 or not after[0] < before[-1]:
        return None
    return float(after[0]), float(before[-1])


def _window_estimates(table, row, window, estimate):
    """Each replication's E[Q] or E[T] over `window` (after the warm-up asked for), from the
    row's totals at its two ends."""
    times, totals = _cumulative(table, row)

    def at(time):
        if time == 0.0:
            return np.zeros((totals.shape[0], 3))
        return totals[:, int(np.flatnonzero(times == time)[0]), :]

    d = at(window[1]) - at(window[0])
    if estimate == "EQ":
        return d[:, 0] / (window[1] - window[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(d[:, 2] > 0, d[:, 1] / d[:, 2], np.nan)


def _equal_windows(table, row_a, row_b):
    """Whether two simulate rows' estimates cover the same time: the same warm-up and the same
    rounds. Rounds double the length and tasks with shared streams see the same arrivals, so their
    events (all rounds) agree closely on the same rounds and differ about twofold per round."""
    warmup_a, warmup_b = table["warmup_used"][row_a], table["warmup_used"][row_b]
    events_a, events_b = float(table["events"][row_a]), float(table["events"][row_b])
    return bool(np.isclose(warmup_a, warmup_b, rtol=1e-12, atol=0.0)
                and abs(events_a - events_b) <= 0.1 * max(events_a, events_b))


class Table(dict):
    """Columns by name (numpy arrays of equal length). A dict, so `table["EQ"]` is an array."""

    @property
    def rows(self):
        """Number of rows (len() of a Table is its number of columns, as for any dict)."""
        return len(next(iter(self.values()))) if len(self.keys()) else 0

    attributes = {}  # column name -> its description, units, model_units, role (load_group)

    def where(self, mask):
        """The rows where `mask` (a boolean array or an index array) holds."""
        table = Table({name: values[mask] for name, values in self.items()})
        table.attributes = self.attributes
        return table

    def mask(self, **conditions):
        """Boolean mask of the rows matching every condition column=value.

        A float value matches within 1e-12 relative (NaN matches NaN: a parameter the family
        does not use); a list or tuple matches any of its values; a callable gets the column
        and returns a mask.
        """
        keep = np.ones(self.rows, dtype=bool)
        for name, wanted in conditions.items():
            if name not in self:
                raise KeyError(f"no column '{name}'; columns: {', '.join(sorted(self))}")
            keep &= _matches(self[name], wanted)
        return keep

    def select(self, **conditions):
        """The rows matching every condition (see mask()), in file order."""
        return self.where(self.mask(**conditions))

    def sorted_by(self, *names):
        """The rows sorted by the given columns (the last name varies fastest)."""
        order = np.lexsort([self[n] for n in reversed(names)])
        return self.where(order)

    def unique(self, name):
        """Distinct values of a column, sorted (NaN once, last)."""
        values = self[name]
        if values.dtype.kind == "f":
            finite = np.unique(values[~np.isnan(values)])
            return np.append(finite, np.nan) if np.isnan(values).any() else finite
        return np.unique(values)

    def to_dataframe(self):
        """A pandas DataFrame (needs pandas); vector and ragged cells become per-row arrays."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError("to_dataframe() needs pandas (not installed); the Table itself "
                              "is a dict of numpy arrays") from error
        data = {}
        for name, values in self.items():
            data[name] = list(values) if values.ndim > 1 else values
        return pandas.DataFrame(data)

    def to_xarray(self, index="task_id"):
        """An xarray Dataset (needs python3-xarray): one variable per column on dimension
        `task` (indexed by the `index` column), vector columns on (task, <name>_index). Ragged
        columns (per-type values, one array per row) are left out: they stay in the Table, and
        the file's groups open directly with their flat arrays and offsets:
        xarray.open_dataset(path, group="exact", engine="h5netcdf")."""
        try:
            import xarray
        except ImportError as error:
            raise ImportError("to_xarray() needs xarray (Debian: python3-xarray)") from error
        variables = {}
        for name, values in self.items():
            if values.dtype == object:
                continue  # ragged
            dims = ("task",) if values.ndim == 1 else ("task", f"{name}_index")
            variables[name] = (dims, values)
        dataset = xarray.Dataset(variables)
        return dataset.set_coords(index).swap_dims(task=index) if index in self else dataset


def _matches(column, wanted):
    if callable(wanted):
        return np.asarray(wanted(column), dtype=bool)
    if isinstance(wanted, (list, tuple, set)):
        keep = np.zeros(len(column), dtype=bool)
        for value in wanted:
            keep |= _matches(column, value)
        return keep
    if column.dtype.kind == "f":
        wanted = float(wanted)
        if np.isnan(wanted):
            return np.isnan(column)
        return np.isclose(column, wanted, rtol=1e-12, atol=0.0)
    return column == wanted
