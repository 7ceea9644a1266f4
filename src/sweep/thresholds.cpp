#include "qsweep/sweep/thresholds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "qsweep/sweep/columns.hpp"

namespace qsweep::sweep {
namespace {

bool scalar(ColumnType type) {
  return type == ColumnType::f64 || type == ColumnType::i64 || type == ColumnType::str ||
         type == ColumnType::i32 || type == ColumnType::u64;
}

// "Not applicable" in a column of `type`, as the method groups write it.
CellValue not_applicable(ColumnType type) {
  switch (type) {
    case ColumnType::f64:
      return std::numeric_limits<double>::quiet_NaN();
    case ColumnType::str:
      return std::string();
    case ColumnType::u64:
      return std::uint64_t{0};
    default:
      return std::int64_t{-1};
  }
}

// The spec of a column of a method group by name (nullptr if it has none).
const ColumnSpec* find_column(Method method, const std::string& name) {
  for (const ColumnSpec& spec : group_columns(method))
    if (spec.name == name) return &spec;
  return nullptr;
}

// The identifying parameter columns: every scalar parameter of the method groups of the plan's
// crossing refinements (task_id aside), in group order, each name once; a name two methods give
// different types is kept apart as METHOD_NAME.
struct Parameter {
  ColumnSpec spec;
  // Per method: the index of its group column, if it has it.
  std::map<Method, std::size_t> source;
};

std::vector<Parameter> parameters_of(const Plan& plan) {
  std::vector<Parameter> out;
  std::vector<Method> methods;
  for (const Refinement& r : plan.refinements)
    if (r.spec.criterion == refine::Criterion::crossing &&
        std::find(methods.begin(), methods.end(), r.method) == methods.end())
      methods.push_back(r.method);
  std::sort(methods.begin(), methods.end());
  for (const Method method : methods) {
    const std::vector<ColumnSpec>& columns = group_columns(method);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const ColumnSpec& spec = columns[c];
      if (!spec.parameter || !scalar(spec.type) || spec.name == "task_id") continue;
      auto same = std::find_if(out.begin(), out.end(),
                               [&](const Parameter& p) { return p.spec.name == spec.name; });
      if (same != out.end() && same->spec.type != spec.type) {
        const std::string name = fmt::format("{}_{}", name_of(method), spec.name);
        same = std::find_if(out.begin(), out.end(),
                            [&](const Parameter& p) { return p.spec.name == name; });
        if (same == out.end()) {
          Parameter& p = out.emplace_back();
          p.spec = spec;
          p.spec.name = name;
          p.source.emplace(method, c);
          continue;
        }
      }
      if (same == out.end()) {
        Parameter& p = out.emplace_back();
        p.spec = spec;
        p.spec.per_run = false;
        p.source.emplace(method, c);
        continue;
      }
      same->spec.width = std::max(same->spec.width, spec.width);
      if (same->spec.description != spec.description) same->spec.description = spec.name;
      same->source.emplace(method, c);
    }
  }
  return out;
}

ColumnSpec number(std::string name, std::string description, std::string units = "") {
  return {std::move(name), std::move(description), std::move(units), ColumnType::f64};
}
ColumnSpec integer(std::string name, std::string description, ColumnType type = ColumnType::i64) {
  return {std::move(name), std::move(description), "", type};
}
ColumnSpec text(std::string name, std::string description, std::size_t width = kMaxStringLength) {
  return {std::move(name), std::move(description), "", ColumnType::str, false, width};
}

// The units of the refinement's axis and quantity (their method group columns').
std::string units_of(const Plan& plan, std::string Refinement::*field) {
  std::string units;
  for (const Refinement& r : plan.refinements) {
    if (r.spec.criterion != refine::Criterion::crossing) continue;
    const ColumnSpec* spec = find_column(r.method, r.*field);
    const std::string these = spec ? spec->units : "";
    if (units.empty()) {
      units = these;
    } else if (units != these) {
      return "";  // several refinements in other units: none said
    }
  }
  return units;
}

std::string shortest(double value) { return fmt::format("{}", value); }

}  // namespace

bool has_crossings(const Plan& plan) {
  return std::any_of(plan.refinements.begin(), plan.refinements.end(), [](const Refinement& r) {
    return r.spec.criterion == refine::Criterion::crossing;
  });
}

ThresholdTable threshold_table(const Plan& plan, const std::vector<CurveCrossings>& curves) {
  ThresholdTable table;
  std::vector<Parameter> parameters = parameters_of(plan);
  std::vector<ColumnSpec>& c = table.columns;
  c.push_back({"block", "0-based index of the refining sweep block (as /tasks/block)", "",
               ColumnType::i32, true});
  c.push_back({"method", "method of the block", "", ColumnType::str, true, kMethodWidth});
  for (const Parameter& p : parameters) {
    ColumnSpec spec = p.spec;
    spec.description +=
        " (not applicable where it varies along the curve: the axis and what "
        "derives from it)";
    c.push_back(spec);
  }
  const std::string axis_units = units_of(plan, &Refinement::axis);
  const std::string quantity_units = units_of(plan, &Refinement::quantity);
  c.push_back(text("axis", "the block key refined (refine: axis)"));
  c.push_back(text("quantity", "the result column followed (refine: quantity)"));
  c.push_back(number("crossing",
                     "the value of quantity whose crossing is sought (refine: crossing)",
                     quantity_units));
  c.push_back(number("refine_tolerance", "the width a bracket is narrowed to (refine: tolerance)",
                     axis_units));
  c.push_back(integer("max_points", "the most points of a curve (refine: max_points)"));
  c.push_back(integer("crossing_index",
                      "0, 1, ...: the crossings of the curve in ascending axis order; -1: none"));
  c.push_back(integer("found",
                      "1: quantity crosses the value between two points of the curve "
                      "(or at one); 0: it does not in the range computed",
                      ColumnType::i32));
  c.push_back(number("threshold",
                     "where quantity crosses the value: the zero of the chord over the bracket "
                     "(a point's own axis value when quantity equals it there); NaN if not found",
                     axis_units));
  c.push_back(number("bracket_lo",
                     "the axis value of the bracket's lower end (a computed point; NaN if not "
                     "found)",
                     axis_units));
  c.push_back(number("bracket_hi", "the axis value of the bracket's upper end", axis_units));
  c.push_back(number("value_lo", "quantity at bracket_lo", quantity_units));
  c.push_back(number("value_hi", "quantity at bracket_hi", quantity_units));
  c.push_back(integer("task_lo", "the task (row of /tasks) at bracket_lo; -1 if not found"));
  c.push_back(integer("task_hi", "the task (row of /tasks) at bracket_hi; -1 if not found"));
  c.push_back(integer("converged",
                      "1: bracket_hi - bracket_lo <= tolerance (integer axes: neighbouring "
                      "integers), or a point exactly on the value; 0 otherwise",
                      ColumnType::i32));
  c.push_back(text("state",
                   "converged; refining (the next round narrows it); budget (max_points left it "
                   "wider than tolerance); noisy (an end within its 95% half-width of the value); "
                   "stalled (the point that splits it gave no value); not_found"));
  c.push_back(integer("points", "finished points of the curve the row comes from"));
  c.push_back(integer("round", "the last refinement round among those points", ColumnType::i32));
  c.push_back(text("note", "in words: why not converged, or the range of quantity when not found",
                   kThresholdNoteWidth));
  // A parameter named as a column of the table's own is kept apart as METHOD_NAME.
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    ColumnSpec& spec = c[2 + i];
    const auto clash = [&](const ColumnSpec& other) {
      return &other != &spec && other.name == spec.name;
    };
    if (std::any_of(c.begin(), c.end(), clash)) {
      spec.name = fmt::format("{}_{}", name_of(parameters[i].source.begin()->first), spec.name);
      parameters[i].spec.name = spec.name;
    }
  }

  for (const CurveCrossings& curve : curves) {
    const Refinement& r = plan.refinements.at(curve.refinement);
    const Task first = plan.tasks.at(curve.tasks.at(0));
    std::vector<CellValue> identity;
    identity.emplace_back(std::int64_t{r.block});
    identity.emplace_back(std::string(name_of(r.method)));
    // A column is the curve's when every task of it has the same value.
    std::vector<Task> tasks;
    tasks.reserve(curve.tasks.size());
    for (const std::uint64_t id : curve.tasks) tasks.push_back(plan.tasks.at(id));
    for (const Parameter& p : parameters) {
      const auto source = p.source.find(r.method);
      if (source == p.source.end()) {
        identity.push_back(not_applicable(p.spec.type));
        continue;
      }
      CellValue value = group_cell(first, source->second);
      const bool varies = std::any_of(tasks.begin(), tasks.end(), [&](const Task& t) {
        return !(group_cell(t, source->second) == value);
      });
      identity.push_back(varies || p.spec.name == r.axis ? not_applicable(p.spec.type)
                                                         : std::move(value));
    }
    identity.emplace_back(r.axis);
    identity.emplace_back(r.quantity);
    identity.emplace_back(r.spec.crossing);
    identity.emplace_back(r.spec.tolerance);
    identity.emplace_back(static_cast<std::int64_t>(r.spec.max_points));

    const std::string where =
        fmt::format("refine (block {}, the curve through {})", r.block, describe(first));
    const auto add_row = [&](std::vector<CellValue> cells, const std::string& note,
                             const std::string& warning) {
      Row row;
      row.cells = identity;
      for (CellValue& cell : cells) row.cells.push_back(std::move(cell));
      row.cells.emplace_back(note);
      table.rows.push_back(std::move(row));
      table.warnings.push_back(warning);
    };
    const auto points = static_cast<std::int64_t>(curve.points);
    const auto round = std::int64_t{curve.round};
    if (curve.thresholds.empty()) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      const std::string note =
          curve.points == 0
              ? std::string("no finished point with a value")
              : fmt::format("{} stays {} {} on {} in [{}, {}] (from {} to {})", r.quantity,
                            curve.y_min > r.spec.crossing ? "above" : "below",
                            shortest(r.spec.crossing), r.axis, shortest(curve.x_min),
                            shortest(curve.x_max), shortest(curve.y_min), shortest(curve.y_max));
      add_row(
          {std::int64_t{-1}, std::int64_t{0}, nan, nan, nan, nan, nan, std::int64_t{-1},
           std::int64_t{-1}, std::int64_t{0}, std::string(kThresholdNotFound), points, round},
          note,
          fmt::format("{}: no threshold: {} {}; /thresholds holds its row with found = 0", where,
                      note, curve.points == 0 ? "" : "(widen the axis' values to bracket it)"));
      continue;
    }
    for (std::size_t i = 0; i < curve.thresholds.size(); ++i) {
      const CurveThreshold& t = curve.thresholds[i];
      const refine::Threshold& b = t.bracket;
      const double width = b.hi - b.lo;
      std::string state, note, warning;
      if (b.converged) {
        state = kThresholdConverged;
        note = b.lo == b.hi ? fmt::format("{} equals {} at this point", r.quantity,
                                          shortest(r.spec.crossing))
                            : fmt::format("bracket {} wide", shortest(width));
      } else if (b.noisy) {
        state = kThresholdNoisy;
        note = fmt::format(
            "bracket {} wide (tolerance {}): an end is within its 95% half-width of {}, so no "
            "narrower bracket can be trusted (more replications would)",
            shortest(width), shortest(r.spec.tolerance), shortest(r.spec.crossing));
      } else if (t.stalled) {
        state = kThresholdStalled;
        note = fmt::format(
            "bracket {} wide (tolerance {}): the task at {} = {} gave no value (unstable or NaN), "
            "so no round can narrow it",
            shortest(width), shortest(r.spec.tolerance), r.axis, shortest(b.next));
      } else if (b.refining) {
        state = kThresholdRefining;
        note = fmt::format("bracket {} wide (tolerance {}): the next round computes {} = {}",
                           shortest(width), shortest(r.spec.tolerance), r.axis, shortest(b.next));
      } else {
        state = kThresholdBudget;
        note = fmt::format("bracket {} wide (tolerance {}): the curve has its max_points {} points",
                           shortest(width), shortest(r.spec.tolerance), r.spec.max_points);
      }
      if (!b.converged && !b.refining)
        warning = fmt::format("{}: threshold {} = {} not converged: {}", where, r.axis,
                              shortest(b.value), note);
      add_row({static_cast<std::int64_t>(i), std::int64_t{1}, b.value, b.lo, b.hi, b.y_lo, b.y_hi,
               static_cast<std::int64_t>(t.task_lo), static_cast<std::int64_t>(t.task_hi),
               std::int64_t{b.converged ? 1 : 0}, state, points, round},
              note, warning);
    }
  }
  return table;
}

}  // namespace qsweep::sweep
