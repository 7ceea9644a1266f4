#!/usr/bin/env bash
# Every group of a results file opens with xarray (Debian's python3-xarray and python3-h5netcdf)
# and holds exactly what h5py reads; the loader's Table.to_xarray() agrees, in schema order.
# Text reads back clean (h5dump shows no NUL padding), and the loader installs from
# python/pyproject.toml into a venv on Debian's python without PyPI and works from elsewhere.
# Usage: run_xarray.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
cat >xarray.yaml <<'YAML'
name: xarray
seed: 7
blocks:
  - method: exact
    family: [ring, complete]
    N: [4, 6]
    lambda: [0.3, 0.7]
    qmax: 12
    per_type: true
  - method: simulate
    family: complete
    N: 8
    d: 2
    lambda: 0.5
    horizon: 2000
    replications: 2
  - method: ldp
    policy: jsq
    n: 6
    j: 2
    T: 2
    lambda: 0.5
    estimator: exact
  - method: meanfield
    policy: power_of_d
    lambda: [0.5, 0.9]
YAML
mpi 2 "$QSWEEP" run xarray.yaml -o xarray.h5 --quiet
PYTHONPATH="$SOURCE_DIR/python" "$PYTHON" - xarray.h5 <<'PY'
import sys
import h5py, numpy as np, xarray
from qsweep_results import load_group

path = sys.argv[1]
with h5py.File(path, "r") as f:
    groups = list(f["/"].keys())  # the root in creation order (f.keys() sorts by name)
    assert groups == ["tasks", "exact", "simulate", "ldp", "meanfield"], groups
    for group in groups:
        ds = xarray.open_dataset(path, group=group, engine="h5netcdf")
        rows = f[group]["task"].shape[0]
        assert ds.sizes["task"] == rows, (group, ds.sizes)
        columns = [n for n in f[group] if not h5py.h5ds.is_scale(f[group][n].id)]
        assert list(ds.data_vars) == columns, (group, list(ds.data_vars), columns)
        for name in columns:
            stored, opened = f[group][name][()], ds[name].values
            assert stored.shape == opened.shape, (group, name)
            if stored.dtype.kind == "f":
                assert np.array_equal(stored, opened, equal_nan=True), (group, name)
            else:
                assert np.array_equal(stored, opened), (group, name)
            if stored.ndim == 2:
                assert ds[name].dims == ("task", f"{name}_index"), (group, name, ds[name].dims)
        print(f"{group}: {len(columns)} columns over {rows} tasks")
    for group in groups[1:]:
        table = load_group(path, group, statuses=None)
        names = list(table)
        assert names[:4] == ["task_id", "status", "error", "warning"], names[:4]
        ids = table["task_id"]
        assert list(table["warning"]) == list(f["tasks/warning"].asstr()[()][ids]), group
        schema = [n for n in f[group] if not h5py.h5ds.is_scale(f[group][n].id)
                  and not n.endswith(("_offset", "_count"))]
        assert [n for n in names[4:]] == schema[1:], (group, names, schema)
        x = table.to_xarray()
        assert list(x.indexes) == ["task_id"] and x.sizes["task_id"] == table.rows
        for name in x.data_vars:
            assert np.array_equal(x[name].values, table[name],
                                  equal_nan=table[name].dtype.kind == "f"), (group, name)
PY
# Text columns are NUL terminated: h5dump shows the text alone.
h5dump -d /exact/family xarray.h5 >family.txt
grep -q '"ring"' family.txt || { cat family.txt; fail "h5dump does not show /exact/family as \"ring\""; }
if grep -q '\\000' family.txt; then cat family.txt; fail "h5dump shows NUL padding in /exact/family"; fi

# The package installs into a venv that sees Debian's h5py/numpy (a copy: pip builds in the tree).
cp -r "$SOURCE_DIR/python" package
"$PYTHON" -m venv --system-site-packages venv
venv/bin/pip install --quiet --no-build-isolation --no-index ./package >pip.log 2>&1 ||
  { cat pip.log; fail "pip could not install python/ into a venv"; }
rm -rf package
mkdir elsewhere
(cd elsewhere && ../venv/bin/python - ../xarray.h5) <<'PY'
import sys, os
import qsweep_results
from qsweep_results import load_group
assert "site-packages" in qsweep_results.__file__, qsweep_results.__file__
table = load_group(sys.argv[1], "exact")
assert table.rows == 8 and sorted(set(table["family"])) == ["complete", "ring"], table["family"]
print("installed package:", os.path.dirname(qsweep_results.__file__))
PY
echo "PASS: every group opens with xarray and equals h5py; the loader is in schema order;" \
  "text is clean; the package installs"
