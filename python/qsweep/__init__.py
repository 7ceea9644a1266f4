"""qsweep in Python: evaluate one system, check and plan a sweep, read a results file.

    import qsweep
    r = qsweep.eval(method="exact", family="ring", N=8, lambda_=0.9, qmax=20)
    r["EQ"], r["pmf"]                       # a float and a numpy array
    qsweep.plan("sweeps/paper-jsq-fig2.yaml")["tasks"]
    exact = qsweep.open("results/my-study.h5")["exact"]

For Debian's /usr/bin/python3 (numpy, h5py from Debian's packages). eval, plan and validate
compute in this process, as the qsweep commands of those names do (no MPI); large studies run
with `qsweep run` under mpirun. docs/python.md has the details.
"""

import qsweep_results as _results

try:
    from ._core import Error, InputError, __version__, eval, plan, validate  # noqa: A004 (eval)
except ImportError as e:  # the package of python/, not the built one of BUILD/python
    raise ImportError(f"qsweep: the compiled module qsweep._core is missing beside {__file__} "
                      f"({e}); import the package a build made, BUILD/python/qsweep "
                      "(docs/python.md)") from e


class Results:
    """A qsweep results file, read through the qsweep_results loader (docs/figures.md).

    results.attributes    the file's root attributes (provenance), a dict
    results.groups        the method groups it holds ("exact", "simulate", ...)
    results["exact"]      one group as a qsweep_results.Table of the finished tasks' rows
    results.group(name, statuses=None)   every row, whatever its status
    results.dataset("exact")   one group as an xarray Dataset on the sweep's axes
    results.datasets()    every group so, by name
    results.tasks()       the /tasks table (status, error, warning, ...)
    results.thresholds()  the thresholds a refinement found (/thresholds), empty if none
    """

    def __init__(self, path):
        self.path = str(path)
        self.groups = _results.group_names(self.path)  # refuses a file that is not qsweep results
        self.attributes = _results.read_attributes(self.path)

    def group(self, name, statuses=("done",)):
        """One method group as a Table (qsweep_results.load_group): by default finished tasks."""
        return _results.load_group(self.path, name, statuses=statuses)

    def dataset(self, name, statuses=("done",), layout="auto"):
        """One method group as an xarray Dataset whose dimensions are the sweep's axes
        (qsweep_results.load_dataset; docs/python.md, "Datasets on the sweep's axes")."""
        return _results.load_dataset(self.path, name, statuses=statuses, layout=layout)

    def datasets(self, statuses=("done",)):
        """Every group as a Dataset (dataset()), by name."""
        return {name: self.dataset(name, statuses=statuses) for name in self.groups}

    def tasks(self):
        """The /tasks table of every task (qsweep_results.load_tasks)."""
        return _results.load_tasks(self.path)

    def thresholds(self):
        """The /thresholds table (qsweep_results.load_thresholds): empty without the group."""
        return _results.load_thresholds(self.path)

    def __getitem__(self, name):
        return self.group(name)

    def __repr__(self):
        return f"qsweep.Results({self.path!r}, groups={list(self.groups)})"


def open(path):  # noqa: A001 (qsweep.open, as h5py.File or xarray.open_dataset)
    """Open a qsweep results file (HDF5) for reading: a Results (its groups as Tables).

    Raises ValueError if the file is not a qsweep results file or is newer than this reader.
    """
    return Results(path)


__all__ = ["Error", "InputError", "Results", "__version__", "eval", "open", "plan", "validate"]
