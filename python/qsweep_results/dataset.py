"""A method group of a results file as an xarray Dataset on the sweep's axes (docs/python.md,
"Datasets on the sweep's axes").

    from qsweep_results import load_dataset
    exact = load_dataset("results/my-study.h5", "exact")
    exact["EQ"].sel(family="ring", N=8).sel({"lambda": 0.3})

Needs xarray and pandas (Debian: python3-xarray, which brings python3-pandas).
"""

import numpy as np

from .loader import load_group

# Significant digits of a float coordinate: 0.1 + 0.2 (a linspace value) is 0.3 there, so
# .sel({"lambda": 0.3}) finds it; more digits where 12 would merge two values of the plan.
_DIGITS = (12, 15, 17)
# A grid with more cells than this many times the group's rows (the plan is far from a product
# of its axes) falls back to the `task` dimension.
_MOST_EMPTY = 8
# The dimension of the second axis of a vector or ragged column, by what it counts.
_VALUE_DIMS = {
    "pmf": "q", "pmf_hw": "q", "alpha": "q",
    "occupancy": "level", "occupancy_hw": "level", "occupancy_N": "level", "V": "level",
    "EQ_replications": "replication", "ET_replications": "replication",
    "speeds": "server", "ER_server": "server", "ER_server_hw": "server",
    "utilisation": "server", "utilisation_hw": "server",
    "type_servers": "type", "type_p": "type", "EQ_type": "type", "EQ_type_hw": "type",
    "ET_type": "type", "ET_type_hw": "type", "scaled_EQ_type": "type",
    "times": "time_point",
}
# What the values of those dimensions are: first value and description.
_VALUE_DIM_INFO = {
    "q": (0, "number of jobs in the system"), "level": (1, "occupancy level i"),
    "replication": (0, "replication"), "server": (1, "server n"),
    "type": (0, "job type, in type_servers order"), "time_point": (0, "time point of the trajectory"),
}
# Ragged columns of more values than this (all rows) are left out of the Dataset.
_MOST_VALUES = 20_000_000


def load_dataset(path, group, statuses=("done",), layout="auto"):
    """Method group `group` of the results file `path` as an xarray Dataset.

    Dimensions: the sweep's axes (the parameters that vary and do not follow from others, e.g.
    family, N, lambda) where the group's rows sit on a grid of them, with the other varying
    parameters (rho, d, ...) as coordinates along the axes they depend on and the constant ones
    as 0-d variables; cells of the grid the plan has no task for are missing. Otherwise (or with
    layout="task") one dimension `task`, the task ids, with every parameter a coordinate.
    Results of rows whose status is not in `statuses` (None: any) are missing: NaN, "" for text;
    integer columns with missing values (-1 in the file) become float with NaN (encoding
    _FillValue -1, as netCDF writes them back). Float coordinates are rounded to 12 significant
    digits. Every numeric variable has `units` (UDUNITS-2; "1" for numbers of the model, with
    `model_units` "jobs", "time", ...) and `description`; `status`, `warning` and `error` are text
    variables, `task_id` the task of each cell.
    """
    import pandas
    import xarray

    table = load_group(path, group, statuses=None)
    attributes = table.attributes
    keep = np.ones(table.rows, dtype=bool) if statuses is None else np.isin(table["status"],
                                                                            list(statuses))
    scalar = [n for n, v in table.items() if v.ndim == 1 and v.dtype != object]
    parameters = [n for n in scalar if attributes.get(n, {}).get("role") == "parameter"
                  and n != "task_id"]
    frame = pandas.DataFrame({n: _canonical(table[n]) for n in parameters})
    axes, dependent = _axes(frame, parameters) if layout != "task" else (None, None)
    cells = int(np.prod([frame[a].nunique(dropna=False) for a in axes])) if axes else 0
    if axes == [] and table.rows == 1:  # one task: a Dataset without dimensions
        grid, cells = True, 1
    else:
        grid = (bool(axes) and cells <= _MOST_EMPTY * table.rows + 64
                and not frame.duplicated(subset=axes).any())
    if layout == "grid" and not grid:
        raise ValueError(f"{path}: /{group} is not a grid of its axes ({axes}); use layout='task'")

    if grid:
        coords = {a: _coordinate_values(frame[a]) for a in axes}
        shape = tuple(len(coords[a]) for a in axes)
        position = np.zeros(table.rows, dtype=np.int64)
        for a in axes:
            index = pandas.Index(coords[a])
            position = position * len(coords[a]) + index.get_indexer(frame[a])
        dims = tuple(axes)
    else:
        coords = {"task": table["task_id"]}
        shape = (table.rows,)
        position = np.arange(table.rows)
        dims = ("task",)

    def spread(values, fill):
        """Row values onto the cells (and their further axes); `fill` where no row is."""
        extra = values.shape[1:]
        out = np.full((int(np.prod(shape)),) + extra, fill, dtype=values.dtype)
        out[position] = values
        return out.reshape(shape + extra)

    data_vars, coordinates, pending = {}, {}, []
    for name, values in table.items():
        a = dict(attributes.get(name, {}))
        role = a.pop("role", "result")
        is_parameter = role == "parameter"
        if values.dtype == object:  # ragged: padded to the longest row
            values = _padded(values)
            if values is None:
                continue
        values, fill = _missing(values)
        if not is_parameter and role != "task" and not keep.all():
            if values.dtype.kind in "iu":  # not -1: NaN
                values, fill = values.astype(float), np.nan
            values = values.copy()
            values[~keep] = fill
        encoding = {}
        if values.dtype.kind == "f" and table[name].dtype.kind in "iu":
            encoding = {"_FillValue": -1, "dtype": table[name].dtype.str}
        if not a.get("units") and values.dtype.kind in "fiu":
            a["units"] = "1"
        if values.dtype.kind not in "fiu":
            a.pop("units", None)
        if grid and name in axes:
            continue
        if grid and name in parameters:
            if frame[name].nunique(dropna=False) == 1:  # constant: a 0-d variable
                data_vars[name] = xarray.Variable((), values[0], a, encoding)
                continue
            on = dependent[name]
            sub = frame.groupby(on, dropna=False, sort=False)[name].first() if on else None
            values_on = _on_axes(sub, on, coords, values.dtype, fill)
            coordinates[name] = xarray.Variable(tuple(on), values_on, a, encoding)
            continue
        if name == "task_id" and grid:
            values = spread(values.astype(float), np.nan) if cells > table.rows else spread(
                values, -1)
            a = {"description": "the task of the cell (NaN: the plan has none)", "units": "1"}
        else:
            values = spread(values, fill)
        var_dims = dims + tuple(_value_dims(name, values.ndim - len(dims)))
        if values.ndim > len(dims) and values.shape[-1] == 0:
            continue  # a ragged column empty in every row (speeds of unit-speed servers)
        target = coordinates if (not grid and is_parameter) else data_vars
        pending.append((target, name, var_dims, values, a, encoding, fill))

    # Columns on one further dimension (pmf and pmf_hw on q, ...) padded to the longest.
    widths = {}
    for _, _, var_dims, values, *_ in pending:
        for dim, length in zip(var_dims[len(dims):], values.shape[len(dims):]):
            widths[dim] = max(widths.get(dim, 0), length)
    for target, name, var_dims, values, a, encoding, fill in pending:
        pad = [(0, 0)] * len(dims) + [(0, widths[d] - n)
                                      for d, n in zip(var_dims[len(dims):], values.shape[len(dims):])]
        if any(p[1] for p in pad):
            values = np.pad(values, pad, constant_values=fill)
        target[name] = xarray.Variable(var_dims, values, a, encoding)

    dataset = xarray.Dataset(data_vars, coords=coordinates)
    for name, values in coords.items():
        if name == "task":
            dataset = dataset.assign_coords(task=("task", values, {
                "description": "task id: row of the task in /tasks", "units": "1"}))
        else:
            a = {k: v for k, v in attributes.get(name, {}).items() if k != "role"}
            if np.asarray(values).dtype.kind not in "fiu":
                a.pop("units", None)
            elif not a.get("units"):
                a["units"] = "1"
            dataset = dataset.assign_coords({name: (name, values, a)})
    for dim in dataset.dims:
        if dim in _VALUE_DIM_INFO:
            first, text = _VALUE_DIM_INFO[dim]
            dataset = dataset.assign_coords({dim: (dim, np.arange(dataset.sizes[dim]) + first,
                                                   {"description": text, "units": "1"})})
    dataset.attrs.update({
        "group": group, "source": str(path), "layout": "grid" if grid else "task",
        "time_unit": "times are in the model's time unit, the mean job size at speed 1 (units "
                     "'1', model_units 'time'); rates in its inverse",
        "statuses": "any" if statuses is None else ",".join(statuses)})
    return dataset


def _canonical(values):
    """A parameter as a coordinate: floats rounded to the fewest of _DIGITS significant digits
    that keep distinct values distinct; integers with -1 (not applicable) as NaN."""
    values = np.asarray(values)
    if values.dtype.kind in "iu":
        if np.any(values == -1):
            values = np.where(values == -1, np.nan, values.astype(float))
        else:
            return values
    if values.dtype.kind != "f":
        return values
    distinct = len(np.unique(values[~np.isnan(values)]))
    for digits in _DIGITS:
        rounded = np.array([float(f"{v:.{digits}g}") for v in values])
        if len(np.unique(rounded[~np.isnan(rounded)])) == distinct:
            return rounded
    return values


def _axes(frame, names):
    """The axes among `names` (varying parameters that do not follow from earlier axes, in
    column order; one swapped for a dependent parameter where that makes the grid smaller), and
    for each other varying parameter the axes it depends on."""
    varying = [n for n in names if frame[n].nunique(dropna=False) > 1]

    def follows(name, on):
        if not on:
            return frame[name].nunique(dropna=False) <= 1
        return bool((frame.groupby(list(on), dropna=False, sort=False)[name]
                     .nunique(dropna=False) <= 1).all())

    def size(on):
        return int(np.prod([frame[a].nunique(dropna=False) for a in on]))

    axes = []
    for name in varying:
        if not follows(name, axes):
            axes.append(name)
    improved = True
    while improved:  # e.g. rho as the axis where lambda = rho x mean speed differs per N
        improved = False
        for other in [n for n in varying if n not in axes]:
            for i, axis in enumerate(axes):
                swapped = axes[:i] + [other] + axes[i + 1:]
                if size(swapped) < size(axes) and all(follows(n, swapped) for n in varying
                                                      if n not in swapped):
                    axes, improved = swapped, True
                    break
    dependent = {}
    for name in varying:
        if name in axes:
            continue
        on = list(axes)
        for axis in reversed(axes):
            fewer = [a for a in on if a != axis]
            if follows(name, fewer):
                on = fewer
        dependent[name] = on
    return axes, dependent


def _coordinate_values(column):
    """Distinct values of an axis: numbers sorted, text in the order of the plan."""
    values = np.asarray(column)
    if values.dtype.kind in "fiu":
        unique = np.unique(values)  # NaN last
        return unique
    seen = dict.fromkeys(values.tolist())
    return np.array(list(seen), dtype=values.dtype)


def _on_axes(series, on, coords, dtype, fill):
    """A dependent parameter (values by the axes it depends on) as an array on those axes."""
    import pandas
    shape = tuple(len(coords[a]) for a in on)
    if np.dtype(dtype).kind in "iu" and len(series) < np.prod(shape):
        dtype, fill = float, np.nan  # cells the plan has no task for: NaN, not -1
    out = np.full(shape, fill, dtype=dtype)
    indexes = [pandas.Index(coords[a]) for a in on]
    for key, value in series.items():
        key = key if isinstance(key, tuple) else (key,)
        out[tuple(index.get_loc(k) for index, k in zip(indexes, key))] = value
    return out


def _missing(values):
    """Values with what is missing as NaN / "" and the fill value: integer columns holding -1
    (not applicable, or not computed) become float."""
    if values.dtype.kind in "iu":
        if np.any(values == -1):
            return np.where(values == -1, np.nan, values.astype(float)), np.nan
        return values, -1
    if values.dtype.kind == "f":
        return values, np.nan
    if values.dtype.kind == "b":
        return values, False
    return values.astype(str), ""


def _padded(rows):
    """A ragged column (one array per row) as [rows, longest] float, NaN padding; None when it
    would hold more than _MOST_VALUES values or integers a float cannot hold."""
    longest = max((len(r) for r in rows), default=0)
    if longest * len(rows) > _MOST_VALUES:
        return None
    out = np.full((len(rows), longest), np.nan)
    for i, r in enumerate(rows):
        r = np.asarray(r)
        if r.dtype.kind in "iu" and len(r) and np.max(np.abs(r)) >= 2 ** 53:
            return None
        out[i, :len(r)] = r
    return out


def _value_dims(name, count):
    if count == 0:
        return []
    return [_VALUE_DIMS.get(name, f"{name}_index")] + [f"{name}_index{i}" for i in range(1, count)]
