// qsweep._core: the compiled part of the Python package `qsweep` (python/qsweep/__init__.py
// re-exports it). Each function calls what the CLI's command calls (the local layer), so that
// qsweep.eval gives the numbers of `qsweep eval --json` and qsweep.plan those of `plan --json`.
// No MPI: a task runs in this process, as `qsweep eval` runs it (docs/python.md).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/local/evaluate.hpp"
#include "qsweep/local/plan_summary.hpp"
#include "qsweep/version.hpp"

namespace py = pybind11;

namespace qsweep::python {
namespace {

// One computation at a time: with the GIL released, two Python threads could otherwise run
// kernels at once, and the exact engine keeps one block of memory for the next task
// (exact/kept_memory.hpp) that is not shared between threads.
std::mutex& kernel_mutex() {
  static std::mutex mutex;
  return mutex;
}

// A Python value as the YAML text of a command-line flag (`qsweep eval --KEY TEXT`), so that the
// sweep layer reads it as it reads the CLI's: floats by repr (the shortest text that reads back
// to the same double), lists as [a, b], dicts as {k: v}, strings as typed.
std::string yaml_text(const py::handle& value, const std::string& key) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::int_>(value) || py::hasattr(value, "__index__"))
    return py::str(py::int_(py::reinterpret_borrow<py::object>(value)));
  if (py::isinstance<py::float_>(value) || py::hasattr(value, "__float__")) {
    const double x = py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>();
    if (std::isnan(x)) return ".nan";
    if (std::isinf(x)) return x > 0 ? ".inf" : "-.inf";
    return py::repr(py::float_(x));
  }
  std::string text;
  if (py::isinstance<py::dict>(value)) {
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(value))
      text += (text.empty() ? "" : ", ") + yaml_text(k, key) + ": " + yaml_text(v, key);
    return "{" + text + "}";
  }
  if (py::isinstance<py::iterable>(value)) {
    for (const auto& item : py::reinterpret_borrow<py::iterable>(value))
      text += (text.empty() ? "" : ", ") + yaml_text(item, key);
    return "[" + text + "]";
  }
  throw InputError(key + ": cannot pass a " +
                   py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>() +
                   "; expected a number, a string, a list or a dict");
}

// A results cell as Python: numbers as float or int, lists as numpy arrays.
py::object to_python(const CellValue& cell) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Repeated>) {
          py::array_t<double> array(static_cast<py::ssize_t>(v.count));
          std::fill_n(array.mutable_data(), v.count, v.value);
          return array;
        } else if constexpr (std::is_same_v<T, std::vector<double>> ||
                             std::is_same_v<T, std::vector<std::int64_t>>) {
          return py::array_t<typename T::value_type>(static_cast<py::ssize_t>(v.size()), v.data());
        } else if constexpr (std::is_same_v<T, std::string>) {
          return py::str(v);
        } else {
          return py::cast(v);
        }
      },
      cell);
}

py::object json_to_python(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(json.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(json.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(json.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(json.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(json.get<std::string>());
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& item : json) list.append(json_to_python(item));
      return list;
    }
    default: {
      py::dict dict;
      for (const auto& [key, item] : json.items()) dict[py::str(key)] = json_to_python(item);
      return dict;
    }
  }
}

std::string memory_text(const py::object& max_task_memory) {
  return max_task_memory.is_none() ? std::string() : yaml_text(max_task_memory, "max_task_memory");
}

py::dict eval(const py::kwargs& parameters) {
  std::vector<sweep::Flag> flags;
  std::string max_task_memory;
  for (const auto& [name, value] : parameters) {
    std::string key = name.cast<std::string>();
    if (key == "max_task_memory") {
      max_task_memory = memory_text(py::reinterpret_borrow<py::object>(value));
      continue;
    }
    // lambda is a Python keyword: lambda_=0.9 (PEP 8's trailing underscore) or **{"lambda": 0.9}.
    if (key.size() > 1 && key.back() == '_') key.pop_back();
    flags.push_back({key, yaml_text(value, "--" + key)});
  }
  std::vector<std::pair<std::string, CellValue>> fields;
  {
    py::gil_scoped_release release;
    const std::lock_guard lock(kernel_mutex());
    const local::Prepared prepared = local::prepare(flags, max_task_memory);
    fields = local::result_fields(prepared.task, local::run(prepared));
  }
  py::dict result;
  for (const auto& [name, cell] : fields) result[py::str(name)] = to_python(cell);
  return result;
}

// The plan of a sweep file, checked against the memory limit (as `qsweep plan` and `validate`).
sweep::Plan checked_plan(const std::string& path, const std::string& max_task_memory,
                         sweep::MemoryLimit& limit) {
  sweep::Plan plan = sweep::load_plan(path);
  limit = local::memory_limit(max_task_memory);
  sweep::check_task_memory(plan, limit);
  return plan;
}

py::object plan(const std::string& path, std::size_t top, bool tasks,
                const py::object& max_task_memory) {
  const std::string memory = memory_text(max_task_memory);
  nlohmann::ordered_json summary;
  {
    py::gil_scoped_release release;
    const std::lock_guard lock(kernel_mutex());
    sweep::MemoryLimit limit;
    const sweep::Plan loaded = checked_plan(path, memory, limit);
    summary = local::plan_json(loaded, limit, top, tasks);
  }
  return json_to_python(summary);
}

void validate(const std::string& path, const py::object& max_task_memory) {
  const std::string memory = memory_text(max_task_memory);
  py::gil_scoped_release release;
  const std::lock_guard lock(kernel_mutex());
  sweep::MemoryLimit limit;
  checked_plan(path, memory, limit);
}

}  // namespace
}  // namespace qsweep::python

PYBIND11_MODULE(_core, m) {
  using namespace qsweep::python;
  m.doc() =
      "qsweep's compiled core: eval, plan and validate as the qsweep commands of those names "
      "compute them, in this process (no MPI). Import the package `qsweep`, not this module.";
  m.attr("__version__") = qsweep::kVersion;

  // qsweep.Error (a RuntimeError) for every error qsweep reports; qsweep.InputError, also a
  // ValueError, for bad input (the CLI's exit code 2). Made here so that C++ can raise them.
  static PyObject* const error =
      PyErr_NewExceptionWithDoc("qsweep.Error",
                                "An error qsweep reports: the message is one line and names the "
                                "place (a flag, FILE:LINE:COLUMN).",
                                PyExc_RuntimeError, nullptr);
  static PyObject* const input_error = PyErr_NewExceptionWithDoc(
      "qsweep.InputError",
      "Bad input (parameters, a sweep file, an option): the CLI exits with code 2 on it.",
      py::make_tuple(py::handle(error), py::handle(PyExc_ValueError)).release().ptr(), nullptr);
  m.attr("Error") = py::handle(error);
  m.attr("InputError") = py::handle(input_error);
  // pybind11 gives the exception by value: its translator type is void(*)(std::exception_ptr).
  py::register_exception_translator(
      [](std::exception_ptr thrown) {  // NOLINT(performance-unnecessary-value-param)
        try {
          if (thrown) std::rethrow_exception(thrown);
        } catch (const qsweep::InputError& e) {
          PyErr_SetString(input_error, e.what());
        } catch (const qsweep::Error& e) {
          PyErr_SetString(error, e.what());
        }
      });

  m.def("eval", &eval, R"(eval(method="exact", *, max_task_memory=None, **parameters) -> dict

Evaluate one task in this process, as `qsweep eval --json` does, and return the same values.

The keyword arguments are the keys of a sweep block (docs/sweep-format.md) and `method`
(exact, simulate, ldp, meanfield) and `seed`, each with one value: numbers, strings, lists and
dicts as in YAML (`load={"heavy_traffic": 2}`). `lambda` is a Python keyword: write
`lambda_=0.9` or `**{"lambda": 0.9}`. `max_task_memory` ("4G") refuses a task whose estimated
peak memory exceeds it (default: this machine's memory).

Returns a dict in the order of `eval --json`: method, status, error, warning, wall_seconds,
estimated/baseline/peak_memory_bytes, then the columns of the method's results group. Numbers
are float or int (NaN where `eval --json` prints null), lists numpy arrays. A task that fails
or is unstable is returned with its status and error, not raised.

Raises qsweep.InputError for bad parameters (the message names the key) and qsweep.Error for
other errors. The GIL is released while the task runs; tasks run one at a time per process.)");
  m.def("plan", &plan, py::arg("path"), py::kw_only(), py::arg("top") = 5, py::arg("tasks") = false,
        py::arg("max_task_memory") = py::none(),
        R"(plan(path, *, top=5, tasks=False, max_task_memory=None) -> dict

The plan of a sweep file, as `qsweep plan --json PATH` prints it: task counts, estimated cost
and memory per method and kind, the `top` biggest tasks; with tasks=True every task with its
parameters. Raises qsweep.InputError (FILE:LINE:COLUMN: message) for an invalid sweep file or a
task that does not fit max_task_memory.)");
  m.def("validate", &validate, py::arg("path"), py::kw_only(),
        py::arg("max_task_memory") = py::none(),
        R"(validate(path, *, max_task_memory=None) -> None

Check a sweep file as `qsweep validate PATH` does (keys, types, values, stability, memory).
Returns None if it is valid; raises qsweep.InputError with the FILE:LINE:COLUMN message if not.)");
}
