#include "expand.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "canonical.hpp"
#include "cost_detail.hpp"
#include "keys.hpp"
#include "method.hpp"
#include "qsweep/common/checked.hpp"
#include "qsweep/common/closest_match.hpp"
#include "qsweep/sweep/columns.hpp"

namespace qsweep::sweep::detail {
namespace {

std::string key_ref(bool from_flags, std::string_view name) {
  return from_flags ? fmt::format("--{}", printable(name))
                    : fmt::format("key '{}'", printable(name));
}
std::string key_ref(const BlockInput& block, std::string_view name) {
  return key_ref(block.from_flags, name);
}

// Where a message about a key as a whole points: the key in a file; for flags the message names
// the flag itself ("qsweep eval: --lambda gives 2 values").
std::string key_where(const BlockInput& block, const std::string& where_in_file) {
  return block.from_flags ? block.where : where_in_file;
}

[[noreturn]] void unknown_key(const BlockInput& block, const Entry& entry) {
  const std::string where = key_where(block, entry.loc.at(entry.key_node));
  std::string others;
  for (Method other : kMethods)
    if (other != block.method && find_key(entry.key, other))
      others += fmt::format("{}{}", others.empty() ? "" : " or ", name_of(other));
  if (!others.empty())
    fail(where, fmt::format("{} does not apply to method {}; expected it only in {} blocks",
                            key_ref(block, entry.key), name_of(block.method), others));
  std::vector<std::string_view> names{"method", "zip", "refine"};
  for (const auto& spec : method_adapter(block.method).keys) names.push_back(spec.name);
  const std::string guess = closest_match(entry.key, names);
  std::string list;
  for (auto n : names) list += (list.empty() ? "" : ", ") + std::string(n);
  fail(where, fmt::format("unknown key '{}' for method {}{}; expected one of: {}",
                          printable(entry.key), name_of(block.method),
                          guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess), list));
}

// The axes of the block, in the order the keys are written.
struct Axes {
  std::vector<Axis> axes;
  std::vector<const Entry*> entries;                           // where each axis comes from
  std::map<std::string_view, std::size_t, std::less<>> index;  // key name -> axis
  const Axis* find(std::string_view name) const {
    const auto it = index.find(name);
    return it == index.end() ? nullptr : &axes[it->second];
  }
};

// The keys of the block checked and their lengths known, their values not yet made: the grid
// is sized before anything proportional to it is allocated.
Axes declare_axes(const BlockInput& block, std::uint64_t max_values) {
  Axes out;
  for (const auto& entry : block.entries) {
    const KeySpec* spec = find_key(entry.key, block.method);
    if (!spec) unknown_key(block, entry);
    const std::string where = key_where(block, entry.loc.at(entry.key_node));
    if (const Axis* earlier = out.find(spec->name))
      fail(where, fmt::format("{} is given twice (first at {}); expected each key once",
                              key_ref(block, spec->name), earlier->where));
    for (const auto& other : out.axes)
      if (other.key->alternative == spec->name || spec->alternative == other.key->name)
        fail(where, fmt::format("{} and {} are both given; expected one of them",
                                key_ref(block, other.key->name), key_ref(block, spec->name)));
    Axis axis;
    axis.key = spec;
    axis.where = entry.loc.at(entry.key_node);
    axis.length = axis_length(*spec, entry.value, entry.loc, max_values);
    out.axes.push_back(std::move(axis));
    out.entries.push_back(&entry);
    out.index[spec->name] = out.axes.size() - 1;
    if (block.from_flags && out.axes.back().length > 1)
      fail(where, fmt::format("{} gives {} values; expected one (qsweep eval evaluates one point, "
                              "a sweep file sweeps)",
                              key_ref(block, spec->name), out.axes.back().length));
  }
  return out;
}

void parse_values(Axes& axes, std::uint64_t max_values) {
  for (std::size_t a = 0; a < axes.axes.size(); ++a) {
    const Entry& entry = *axes.entries[a];
    axes.axes[a] =
        parse_axis(*axes.axes[a].key, entry.key_node, entry.value, entry.loc, max_values);
  }
}

// Dimensions of the grid: each is one axis, or the axes of a zip group walked together; a
// group sits where its first key is written. The last dimension varies fastest.
std::vector<std::vector<std::size_t>> dimensions(const BlockInput& block, const Axes& axes) {
  std::vector<std::vector<std::size_t>> groups;
  if (block.zip) {
    const Entry& zip = *block.zip;
    const YAML::Node& node = zip.value;
    const std::string expected = "a list of keys of this block, or a list of such lists";
    if (!node.IsSequence() || node.size() == 0)
      fail(zip.loc.at(node), fmt::format("zip is {}; expected {}", show(node), expected));
    std::vector<YAML::Node> group_nodes;
    if (std::all_of(node.begin(), node.end(), [](const YAML::Node& n) { return n.IsScalar(); })) {
      group_nodes.push_back(node);
    } else {
      for (const auto& g : node) {
        if (!g.IsSequence())
          fail(zip.loc.at(g), fmt::format("a zip group is {}; expected {}", show(g), expected));
        group_nodes.push_back(g);
      }
    }
    std::vector<bool> zipped(axes.axes.size(), false);
    for (const auto& g : group_nodes) {
      std::vector<std::size_t> group;
      for (const auto& name_node : g) {
        const std::string name = read_string(name_node, zip.loc, "a zip entry", "a key name");
        const auto it = axes.index.find(name);
        if (it == axes.index.end())
          fail(zip.loc.at(name_node), fmt::format("zip names '{}', which is not a key of this "
                                                  "block; expected {}",
                                                  printable(name), expected));
        const Axis& axis = axes.axes[it->second];
        if (axis.key->kind == Kind::fixed)
          fail(zip.loc.at(name_node), fmt::format("zip names '{}', whose value is one fixed "
                                                  "structure, not a list of values; expected keys "
                                                  "with lists of values",
                                                  name));
        if (zipped[it->second])
          fail(zip.loc.at(name_node), fmt::format("zip names '{}' twice; expected each key in "
                                                  "at most one zip group",
                                                  name));
        zipped[it->second] = true;
        group.push_back(it->second);
      }
      if (group.size() < 2)
        fail(zip.loc.at(g),
             "a zip group has fewer than 2 keys; expected at least 2 keys to walk "
             "together");
      const Axis& first = axes.axes[group[0]];
      for (std::size_t a : group)
        if (axes.axes[a].length != first.length)
          fail(zip.loc.at(g), fmt::format("zip walks {} ({} values) and {} ({} values) together; "
                                          "expected lists of equal length",
                                          first.key->name, first.length, axes.axes[a].key->name,
                                          axes.axes[a].length));
      std::sort(group.begin(), group.end());
      groups.push_back(std::move(group));
    }
    std::sort(groups.begin(), groups.end());
  }
  std::vector<std::vector<std::size_t>> dims;
  std::vector<bool> placed(axes.axes.size(), false);
  for (std::size_t a = 0; a < axes.axes.size(); ++a) {
    if (placed[a]) continue;
    auto group =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.front() == a; });
    dims.push_back(group == groups.end() ? std::vector<std::size_t>{a} : *group);
    for (std::size_t b : dims.back()) placed[b] = true;
  }
  return dims;
}

// The block's `refine:` mapping checked against its axes (docs/sweep-format.md, "Refinement"),
// with the index of the axis refined; nullopt without one. `grid` is the block's full grid.
std::optional<std::pair<Refinement, std::size_t>> parse_refine(
    const BlockInput& block, const Axes& axes, const std::vector<std::vector<std::size_t>>& dims,
    std::uint64_t grid, std::uint64_t room, std::uint64_t max_tasks) {
  if (!block.refine) return std::nullopt;
  const Entry& entry = *block.refine;
  const Locator& loc = entry.loc;
  const YAML::Node& node = entry.value;
  const std::string shape =
      "a mapping {axis: KEY, quantity: COLUMN, tolerance: NUMBER} with optional max_points and "
      "crossing";
  if (!node.IsMap())
    fail(loc.at(node), fmt::format("refine is {}; expected {}", show(node), shape));
  Refinement r;
  r.block = block.index;
  r.method = block.method;
  r.where = loc.at(entry.key_node);
  const MethodAdapter& method = method_adapter(block.method);
  std::map<std::string, std::pair<YAML::Node, YAML::Node>, std::less<>> given;
  static constexpr std::array<std::string_view, 5> kKeys{"axis", "quantity", "tolerance",
                                                         "max_points", "crossing"};
  for (const auto& kv : node) {
    const std::string key = read_string(kv.first, loc, "a refine key", "a name");
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      const std::string guess = closest_match(key, {kKeys.begin(), kKeys.end()});
      fail(loc.at(kv.first),
           fmt::format("unknown refine key '{}'{}; expected one of: {}", printable(key),
                       guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess),
                       fmt::join(kKeys, ", ")));
    }
    if (given.count(key))
      fail(loc.at(kv.first),
           fmt::format("refine key '{}' is given twice; expected each key once", key));
    given[key] = {kv.first, kv.second};
  }
  const auto value = [&](std::string_view key) -> const YAML::Node* {
    const auto it = given.find(key);
    return it == given.end() ? nullptr : &it->second.second;
  };

  // axis: a numeric key the block gives, walked on its own, with at least two values.
  std::vector<std::string_view> numeric;
  for (const Axis& axis : axes.axes)
    if (axis.key->kind == Kind::integer || axis.key->kind == Kind::real ||
        axis.key->kind == Kind::load)
      numeric.push_back(axis.key->name);
  const std::string numeric_list =
      numeric.empty() ? std::string("none") : fmt::format("{}", fmt::join(numeric, ", "));
  const YAML::Node* axis_node = value("axis");
  if (!axis_node)
    fail(r.where, fmt::format("refine has no axis; expected axis: one of the numeric keys this "
                              "block gives ({})",
                              numeric_list));
  r.axis = read_string(*axis_node, loc, "refine axis", "a key name");
  const auto found = axes.index.find(r.axis);
  if (found == axes.index.end()) {
    const std::string guess = closest_match(r.axis, numeric);
    fail(loc.at(*axis_node),
         fmt::format("refine axis '{}' is not a key this block gives{}; expected one of the "
                     "numeric keys it gives ({})",
                     printable(r.axis),
                     guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess),
                     numeric_list));
  }
  const std::size_t a = found->second;
  const Axis& axis = axes.axes[a];
  if (std::find(numeric.begin(), numeric.end(), axis.key->name) == numeric.end())
    fail(loc.at(*axis_node), fmt::format("refine axis '{}' is not numeric; expected one of the "
                                         "numeric keys this block gives ({})",
                                         r.axis, numeric_list));
  for (const auto& dim : dims)
    if (dim.size() > 1 && std::find(dim.begin(), dim.end(), a) != dim.end())
      fail(loc.at(*axis_node), fmt::format("refine axis '{}' is walked with other keys by zip; "
                                           "expected an axis of its own",
                                           r.axis));
  if (axis.length < 2)
    fail(loc.at(*axis_node),
         fmt::format("refine axis '{}' has {} value; expected at least 2 initial values (a list "
                     "or a generator such as {{linspace: [0.1, 0.9, 5]}})",
                     r.axis, axis.length));
  r.spec.integer_axis = axis.key->kind == Kind::integer;
  r.initial_points = axis.length;
  r.curves = grid / axis.length;

  // quantity: a number the method's group stores per task (its half-width alongside, if any).
  std::vector<std::string_view> results;
  for (const Column& column : method.columns)
    if (!column.spec.parameter && column.spec.type == ColumnType::f64 &&
        !column.spec.name.ends_with("_hw"))
      results.push_back(column.spec.name);
  const YAML::Node* quantity = value("quantity");
  if (!quantity)
    fail(r.where, fmt::format("refine has no quantity; expected quantity: a result of method {} "
                              "({})",
                              name_of(block.method), fmt::join(results, ", ")));
  r.quantity = read_string(*quantity, loc, "refine quantity", "a result column name");
  if (std::find(results.begin(), results.end(), r.quantity) == results.end()) {
    const std::string guess = closest_match(r.quantity, results);
    fail(loc.at(*quantity),
         fmt::format("refine quantity '{}' is not a result of method {}{}; expected one of: {}",
                     printable(r.quantity), name_of(block.method),
                     guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess),
                     fmt::join(results, ", ")));
  }
  for (const Column& column : method.columns)
    if (column.spec.name == r.quantity + "_hw") r.half_width = column.spec.name;

  // crossing: the value whose crossings are bracketed; without it, the interpolation criterion.
  if (const YAML::Node* crossing = value("crossing")) {
    r.spec.criterion = refine::Criterion::crossing;
    r.spec.crossing = read_number(*crossing, loc, "refine crossing", "a finite number");
    if (!std::isfinite(r.spec.crossing))
      fail(loc.at(*crossing), "refine crossing is not finite; expected a finite number");
  }
  const bool interpolation = r.spec.criterion == refine::Criterion::interpolation;
  const std::string tolerance_expected =
      interpolation
          ? "a number in (0, 1): the relative error of piecewise-linear interpolation"
          : fmt::format("a number > 0: the width of the final bracket in units of {}", r.axis);
  const YAML::Node* tolerance = value("tolerance");
  if (!tolerance)
    fail(r.where,
         fmt::format("refine has no tolerance; expected tolerance: {}", tolerance_expected));
  r.spec.tolerance = read_number(*tolerance, loc, "refine tolerance", tolerance_expected);
  if (!(r.spec.tolerance > 0) || !std::isfinite(r.spec.tolerance) ||
      (interpolation && r.spec.tolerance >= 1))
    fail(loc.at(*tolerance), fmt::format("refine tolerance = {} is out of range; expected {}",
                                         r.spec.tolerance, tolerance_expected));

  // max_points: every curve's budget, its initial values included.
  r.spec.max_points = std::max<std::uint64_t>(kDefaultRefinePoints, axis.length);
  if (const YAML::Node* max_points = value("max_points")) {
    const std::string expected = fmt::format(
        "an integer in [{}, {}]: the points of a curve, its {} initial values "
        "included",
        axis.length, max_tasks, axis.length);
    const std::int64_t n = read_integer(*max_points, loc, "refine max_points", expected);
    if (n < static_cast<std::int64_t>(axis.length) || static_cast<std::uint64_t>(n) > max_tasks)
      fail(loc.at(*max_points),
           fmt::format("refine max_points = {} is out of range; expected {}", n, expected));
    r.spec.max_points = static_cast<std::uint64_t>(n);
  }
  const std::optional<std::uint64_t> most = checked_mul(r.curves, r.spec.max_points);
  if (!most || *most > room)
    fail(r.where,
         fmt::format("refine may grow this block to {} curves x max_points {} = {:.4g} tasks and "
                     "the plan would exceed max_tasks = {}; expected a smaller max_points, fewer "
                     "curves, or a larger max_tasks at the top of the file",
                     r.curves, r.spec.max_points,
                     static_cast<double>(r.curves) * static_cast<double>(r.spec.max_points),
                     max_tasks));
  return std::make_pair(std::move(r), a);
}

// Fails unless the grid fits in the `room` tasks max_tasks leaves. The count is exact (checked
// 64-bit products); the message shows it as a float, which also covers a count beyond 2^64.
std::uint64_t check_grid(const BlockInput& block, const Axes& axes,
                         const std::vector<std::vector<std::size_t>>& dims, std::uint64_t room,
                         std::uint64_t max_tasks) {
  std::optional<std::uint64_t> grid = 1;
  long double shown = 1;
  for (const auto& dim : dims) {
    const std::uint64_t length = axes.axes[dim[0]].length;
    if (grid) grid = checked_mul(*grid, length);
    shown *= static_cast<long double>(length);
  }
  if (!grid || *grid > room)
    fail(block.where, fmt::format("this block expands to {:.4g} tasks and the plan would "
                                  "exceed max_tasks = {}; expected a smaller grid, or a larger "
                                  "max_tasks at the top of the file",
                                  static_cast<double>(shown), max_tasks));
  return *grid;
}

// Where the task at one grid point is drafted, derived and prepared.
class PointContext final : public BlockContext {
 public:
  PointContext(const BlockGrid& grid, bool on_unstable_error)
      : grid_(grid), on_unstable_error_(on_unstable_error) {}
  std::uint64_t point = 0;

 private:
  const std::string& where() const override { return grid_.where(); }
  const std::string& where_of(std::string_view key) const override {
    return grid_.where_of(key, point);
  }
  bool gives(std::string_view key) const override {
    return std::any_of(grid_.axes().begin(), grid_.axes().end(),
                       [key](const Axis& axis) { return axis.key->name == key; });
  }
  bool on_unstable_error() const override { return on_unstable_error_; }

  const BlockGrid& grid_;
  bool on_unstable_error_;
};

// Asks for 2 MiB pages for the reserved, not yet touched memory of `v`: the plan's arrays and the
// table of tasks seen take tens of MB for 10^6 tasks, touched in random order (the table), and
// with 4 KiB pages a page fault and a TLB miss per few tasks were a fifth of expansion. Only a
// hint (memory without such pages works the same).
template <class T>
void ask_huge_pages(std::vector<T>& v) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  char* const data = reinterpret_cast<char*>(v.data());
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t last = (begin + v.capacity() * sizeof(T)) & ~(kHuge - 1);
  if (last > first) ::madvise(data + (first - begin), last - first, MADV_HUGEPAGE);
}

}  // namespace

// The keys of the tasks so far, for duplicate removal: open addressing on the keys' own bits (a
// SHA-256, so uniform), two 8-byte slots per point of every block's grid; a match is confirmed
// on the whole key (a task is named by its key: equal keys, equal content).
class SeenTasks {
 public:
  explicit SeenTasks(std::uint64_t points) {
    const std::uint64_t slots = std::bit_ceil(std::max<std::uint64_t>(2 * points, 2));
    slots_.reserve(slots);
    ask_huge_pages(slots_);
    slots_.resize(slots);
    shift_ = 64 - std::countr_zero(slots);
  }
  // The table is much larger than the caches: expansion fetches the slots of the keys ahead.
  void prefetch(const KeyBits& key) const { __builtin_prefetch(&slots_[slot_of(key)], 1); }
  // Records `key` as task `id`'s, or returns the earlier task of the same key (`keys`: every
  // earlier task's, by id).
  std::optional<std::uint64_t> insert(const KeyBits& key, std::uint64_t id,
                                      const std::vector<KeyBits>& keys) {
    const std::uint64_t mask = slots_.size() - 1;
    const auto tag = static_cast<std::uint32_t>(key[1]);
    for (std::uint64_t i = slot_of(key);; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.id_plus_one == 0) {
        s = {static_cast<std::uint32_t>(id + 1), tag};
        return std::nullopt;
      }
      if (s.tag == tag && keys[s.id_plus_one - 1] == key) return s.id_plus_one - 1;
    }
  }

 private:
  std::uint64_t slot_of(const KeyBits& key) const { return key[0] >> shift_; }
  struct Slot {
    std::uint32_t id_plus_one = 0;  // 0: empty (ids < max_tasks <= 10^7)
    std::uint32_t tag = 0;          // the key's low bits
  };
  std::vector<Slot> slots_;
  int shift_ = 0;  // 64 - log2(slots)
};

BlockGrid::BlockGrid(const BlockInput& block, const PlanState& state, std::uint64_t room)
    : where_(block.where),
      index_(block.index),
      method_(block.method),
      seed_(state.seed),
      on_unstable_error_(state.on_unstable_error),
      from_flags_(block.from_flags) {
  Axes axes = declare_axes(block, state.max_tasks);
  for (const auto& key : method_adapter(method_).keys) {
    if (!key.required) continue;
    if (axes.find(key.name) || (!key.alternative.empty() && axes.find(key.alternative))) continue;
    absent_required_.push_back(&key);
  }
  const auto dims = dimensions(block, axes);
  points_ = check_grid(block, axes, dims, room, state.max_tasks);
  if (auto refinement = parse_refine(block, axes, dims, points_, room, state.max_tasks)) {
    refinement_ = std::move(refinement->first);
    refine_axis_ = refinement->second;
  }
  parse_values(axes, state.max_tasks);
  axes_ = std::move(axes.axes);
  stride_.assign(axes_.size(), 1);
  std::uint64_t stride = 1;
  for (std::size_t k = dims.size(); k-- > 0;) {
    for (std::size_t a : dims[k]) stride_[a] = stride;
    stride *= axes_[dims[k][0]].length;
  }
}

std::size_t BlockGrid::value_index(std::size_t axis, std::uint64_t point) const {
  return static_cast<std::size_t>(point / stride_[axis] % axes_[axis].length);
}

const std::string& BlockGrid::where_of(std::string_view key, std::uint64_t point) const {
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    if (axes_[a].key->name != key) continue;
    const auto& where = axes_[a].value_where;
    return where.size() == 1 ? where[0] : where[value_index(a, point)];
  }
  return where_;
}

double BlockGrid::refined_x(std::uint64_t point) const {
  const Axis& axis = axes_[refine_axis_];
  const std::size_t i = value_index(refine_axis_, point);
  if (!axis.generated.empty()) return axis.generated[i];
  const Value& value = axis.values[i];
  if (const auto* n = std::get_if<std::int64_t>(&value)) return static_cast<double>(*n);
  if (const auto* x = std::get_if<double>(&value)) return *x;
  if (const auto* load = std::get_if<Load>(&value)) return load->value;
  throw std::logic_error("refine: the refined axis is not numeric");
}

Value BlockGrid::refined_value(double x) const {
  const Axis& axis = axes_[refine_axis_];
  if (axis.key->kind == Kind::integer) return static_cast<std::int64_t>(std::llround(x));
  if (axis.key->kind == Kind::load) {
    const Load* first = axis.values.empty() ? nullptr : std::get_if<Load>(&axis.values.front());
    return Load{x, first ? first->relative : axis.relative};
  }
  return x;
}

std::uint64_t BlockGrid::curve_of(std::uint64_t point) const {
  return point - value_index(refine_axis_, point) * stride_[refine_axis_];
}

Task BlockGrid::task(std::uint64_t point, std::vector<bool>* used, const Value* refined) const {
  Draft d;
  d.task.params = default_params(method_);
  d.task.block = index_;
  d.task.seed = seed_;
  for (bool selectors : {true, false})
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      const KeySpec& key = *axes_[a].key;
      if (key.selector != selectors) continue;
      if (key.applies && !key.applies(d)) continue;
      const Axis& axis = axes_[a];
      const std::size_t i = value_index(a, point);
      if (refined && refinement_ && a == refine_axis_)
        key.apply(d, *refined);
      else if (axis.generated.empty())
        key.apply(d, axis.values[i]);
      else
        key.apply(d, axis.generated_value(i));
      if (used) (*used)[a] = true;
    }
  for (const KeySpec* required : absent_required_) {
    const KeySpec& key = *required;
    if (key.applies && !key.applies(d)) continue;
    fail(where_,
         fmt::format("{} is missing{}; expected {}{}", key_ref(from_flags_, key.name),
                     key.used_by.empty() ? "" : fmt::format(" (required for {})", key.used_by),
                     key.expected(),
                     key.alternative.empty()
                         ? ""
                         : fmt::format(" (or {})", key_ref(from_flags_, key.alternative))));
  }
  PointContext context(*this, on_unstable_error_);
  context.point = point;
  method_adapter(method_).derive(d, context);
  return std::move(d.task);
}

namespace {

// A planning team member's share of a block's points: a run of consecutive points each, of
// equal lengths.
struct Share {
  std::uint64_t points = 0;
  int members = 1;
  std::uint64_t begin(int member) const {
    return points * static_cast<std::uint64_t>(member) / static_cast<std::uint64_t>(members);
  }
  std::uint64_t end(int member) const { return begin(member + 1); }
  int member_of(std::uint64_t point) const {
    int member = static_cast<int>(point * static_cast<std::uint64_t>(members) / points);
    while (begin(member) > point) --member;
    while (end(member) <= point) ++member;
    return member;
  }
};

// What a member met while making its share, besides each point's key, estimate and list bytes.
struct ShareNotes {
  std::uint64_t error_point = 0;  // the first point whose task is bad; points: none
  bool error_at_prepare = false;  // raised by the method's prepare (after the lists' check)
  std::string error;
  bool stopped = false;         // a stop was asked
  std::vector<bool> used;       // the axes its tasks apply
  std::vector<TaskKind> kinds;  // indexed by its estimates' kind (but kUnstable)
};

// In a member's estimates until the plan takes them: the task is unstable (its kind below).
constexpr std::uint32_t kUnstable = std::uint32_t{1} << 31;

std::string encode_notes(const ShareNotes& notes) {
  std::string bytes;
  const auto number = [&bytes](std::uint64_t value) {
    for (int b = 0; b < 8; ++b) bytes.push_back(static_cast<char>(value >> (8 * b)));
  };
  const auto text = [&](const std::string& value) {
    number(value.size());
    bytes += value;
  };
  number(notes.error_point);
  number(notes.error_at_prepare ? 1 : 0);
  text(notes.error);
  number(notes.stopped ? 1 : 0);
  number(notes.used.size());
  for (const bool used : notes.used) bytes.push_back(used ? '\1' : '\0');
  number(notes.kinds.size());
  for (const TaskKind& kind : notes.kinds) {
    number(static_cast<std::uint64_t>(kind.method));
    text(kind.category);
  }
  return bytes;
}

ShareNotes decode_notes(std::string_view bytes) {
  std::size_t at = 0;
  const auto take = [&](std::size_t n) {
    if (bytes.size() - at < n) throw std::logic_error("planning team: truncated notes");
    const std::string_view part = bytes.substr(at, n);
    at += n;
    return part;
  };
  const auto number = [&] {
    std::uint64_t value = 0;
    const std::string_view part = take(8);
    for (int b = 0; b < 8; ++b)
      value |= std::uint64_t{static_cast<unsigned char>(part[static_cast<std::size_t>(b)])}
               << (8 * b);
    return value;
  };
  const auto text = [&] { return std::string(take(number())); };
  ShareNotes notes;
  notes.error_point = number();
  notes.error_at_prepare = number() != 0;
  notes.error = text();
  notes.stopped = number() != 0;
  notes.used.resize(number());
  for (std::size_t a = 0; a < notes.used.size(); ++a) notes.used[a] = take(1)[0] != '\0';
  notes.kinds.resize(number());
  for (TaskKind& kind : notes.kinds) {
    kind.method = static_cast<Method>(number());
    kind.category = text();
  }
  return notes;
}

// Every member's notes, in member order.
std::vector<ShareNotes> exchange_notes(const PlanTeam* team, const ShareNotes& mine) {
  if (team == nullptr || team->size == 1) return {mine};
  std::vector<ShareNotes> notes;
  for (const std::string& bytes : team->all_gather(encode_notes(mine)))
    notes.push_back(decode_notes(bytes));
  return notes;
}

// Every member's share of `values` [first + point] in place (each holds its own on entry).
template <class T>
void gather_share(const PlanTeam* team, std::vector<T>& values, std::uint64_t first,
                  const Share& share) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (team == nullptr || team->size == 1) return;
  std::vector<std::uint64_t> bytes(static_cast<std::size_t>(share.members));
  for (int m = 0; m < share.members; ++m)
    bytes[static_cast<std::size_t>(m)] = (share.end(m) - share.begin(m)) * sizeof(T);
  team->gather_parts(reinterpret_cast<char*>(values.data() + first), bytes);
}

// Makes the tasks of points [begin, end) of the block's grid up to the first bad one: each
// point's key, estimate and the bytes of its lists at keys[point], estimates[point] and
// list_bytes[point].
ShareNotes make_share(const BlockInput& block, const BlockGrid& grid, const PlanState& state,
                      std::uint64_t begin, std::uint64_t end, KeyBits* keys,
                      TaskEstimate* estimates, std::uint32_t* list_bytes) {
  const MethodAdapter& method = method_adapter(block.method);
  ShareNotes notes;
  notes.error_point = grid.points();
  notes.used.assign(grid.axes().size(), false);
  PointContext context(grid, state.on_unstable_error);  // its memo lives through the share
  const NoFormulas no_formulas;  // the plan keeps the estimates' numbers only
  const bool refining = grid.refinement().has_value();
  std::vector<bool> used;  // a refining block's: the axes the point's task applies
  TextMemo memo;           // the parts of the previous point's text
  std::string text;
  for (std::uint64_t point = begin; point < end; ++point) {
    if (state.stopped && state.stopped()) {
      notes.stopped = true;
      break;
    }
    bool preparing = false;
    try {
      Task task;
      if (refining) {
        used.assign(notes.used.size(), false);
        task = grid.task(point, &used);
        for (std::size_t a = 0; a < used.size(); ++a)
          if (used[a]) notes.used[a] = true;
      } else {
        task = grid.task(point, &notes.used);
      }
      text.clear();
      task.block = 0;  // the content text (id 0, no cost)
      append_canonical_text(text, task, &memo);
      task.block = block.index;
      if (refining && !used[grid.refine_axis()]) {
        const Refinement& r = *grid.refinement();
        fail(r.where,
             fmt::format("refine axis '{}' does not apply to the task '{}' of this block "
                         "(it is used by {}); expected an axis every task of the block "
                         "uses (a block of its own for the others)",
                         r.axis, describe(task), grid.axes()[grid.refine_axis()].key->used_by));
      }
      keys[point] = key_bits(task, text);
      list_bytes[point] = static_cast<std::uint32_t>(std::min<std::uint64_t>(
          method.list_bytes(task), std::numeric_limits<std::uint32_t>::max()));
      preparing = true;
      context.point = point;
      TaskEstimate estimate;
      estimate.ranks = task.ranks;
      std::uint32_t unstable = 0;
      if (const std::optional<CostEstimate> cost = method.prepare(task, context)) {
        estimate = {cost->seconds, static_cast<float>(cost->memory.bytes),
                    static_cast<float>(cost->memory.result_bytes), task.ranks};
      } else {
        unstable = kUnstable;
      }
      estimate.kind = kind_index(notes.kinds, {task.method(), category(task)}) | unstable;
      estimates[point] = estimate;
    } catch (const InputError& e) {
      notes.error_point = point;
      notes.error_at_prepare = preparing;
      notes.error = e.what();
      break;
    }
  }
  return notes;
}

}  // namespace

std::uint32_t kind_index(std::vector<TaskKind>& kinds, const TaskKind& kind) {
  for (std::size_t k = 0; k < kinds.size(); ++k)  // a plan has a few kinds
    if (kinds[k].method == kind.method && kinds[k].category == kind.category)
      return static_cast<std::uint32_t>(k);
  kinds.push_back(kind);
  return static_cast<std::uint32_t>(kinds.size() - 1);
}

void expand_block(const BlockInput& block, PlanState& state) {
  PlanTasks& tasks = state.tasks;
  auto grid = std::make_shared<const BlockGrid>(block, state, state.max_tasks - tasks.size());
  if (tasks.estimates_.empty()) {  // every block's grid, at most max_tasks
    tasks.points_.reserve(state.planned);
    tasks.estimates_.reserve(state.planned);
    tasks.keys_.reserve(state.planned);
    ask_huge_pages(tasks.points_);
    ask_huge_pages(tasks.estimates_);
    ask_huge_pages(tasks.keys_);
  }
  // Sized for every block's grid (a plan from flags is one block), or for this block's when
  // duplicates of earlier blocks are kept.
  if (state.block_duplicates == BlockDuplicates::kept)
    state.seen = std::make_shared<SeenTasks>(grid->points());
  else if (!state.seen)
    state.seen = std::make_shared<SeenTasks>(std::max(state.planned, grid->points()));
  SeenTasks& seen = *state.seen;

  // Each member of the planning team makes the tasks of its share of the points (a plan of 10^6
  // tasks: a second of work on each rank of a run otherwise) and they exchange them: every
  // point's key, estimate and list bytes at first + point, then what each met.
  const std::uint64_t first = tasks.size();
  const std::uint64_t points = grid->points();
  const Share share{points, state.team != nullptr ? state.team->size : 1};
  const int member = state.team != nullptr ? state.team->rank : 0;
  tasks.keys_.resize(first + points);
  tasks.estimates_.resize(first + points);
  tasks.points_.resize(first + points);  // the lists' bytes of each point's task, for now
  const ShareNotes mine = make_share(block, *grid, state, share.begin(member), share.end(member),
                                     tasks.keys_.data() + first, tasks.estimates_.data() + first,
                                     tasks.points_.data() + first);
  gather_share(state.team, tasks.keys_, first, share);
  gather_share(state.team, tasks.estimates_, first, share);
  gather_share(state.team, tasks.points_, first, share);
  const std::vector<ShareNotes> notes = exchange_notes(state.team, mine);
  if (std::any_of(notes.begin(), notes.end(), [](const ShareNotes& n) { return n.stopped; }))
    throw PlanStopped();
  const ShareNotes* error = nullptr;  // the first bad point's (shares are in point order)
  for (const ShareNotes& n : notes)
    if (n.error_point < points) {
      error = &n;
      break;
    }
  const std::uint64_t error_point = error != nullptr ? error->error_point : points;

  // In point order, as one process would: each task kept once, at the next id.
  std::vector<std::vector<std::optional<std::uint32_t>>> kinds(notes.size());
  for (std::size_t m = 0; m < notes.size(); ++m) kinds[m].resize(notes[m].kinds.size());
  constexpr std::uint64_t kAhead = 8;  // slots fetched ahead
  std::uint64_t id = first;
  for (std::uint64_t point = 0; point < points; ++point) {
    if (point + kAhead < error_point) seen.prefetch(tasks.keys_[first + point + kAhead]);
    if (point == error_point && !error->error_at_prepare) throw InputError(error->error);
    const KeyBits key = tasks.keys_[first + point];
    if (const auto earlier = seen.insert(key, id, tasks.keys_)) {
      // Kept once: parameters no task uses differ, or an earlier block computes it already.
      if (*earlier < first) ++state.duplicates;
      if (point == error_point) throw InputError(error->error);
      continue;
    }
    tasks.keys_[id] = key;
    state.list_bytes += tasks.points_[first + point];
    if (state.list_bytes > kMaxPlanListBytes) {
      Task task = grid->task(point);
      task.id = id;
      fail(block.where, fmt::format("the lists of the tasks up to '{}' (speeds, types, ...) take "
                                    "{:.3g} GB and every rank holds the plan; expected at most "
                                    "{} GiB (fewer tasks with long lists, or a smaller N with "
                                    "speed_profile)",
                                    describe(task), static_cast<double>(state.list_bytes) * 1e-9,
                                    kMaxPlanListBytes >> 30));
    }
    if (point == error_point) throw InputError(error->error);
    TaskEstimate estimate = tasks.estimates_[first + point];
    const auto m = static_cast<std::size_t>(share.member_of(point));
    std::optional<std::uint32_t>& kind = kinds[m].at(estimate.kind & ~kUnstable);
    if (!kind) kind = kind_index(tasks.kinds_, notes[m].kinds[estimate.kind & ~kUnstable]);
    if ((estimate.kind & kUnstable) != 0) state.unstable_tasks.push_back(id);
    estimate.kind = *kind;
    tasks.estimates_[id] = estimate;
    tasks.points_[id] = static_cast<std::uint32_t>(point);
    state.hash.add(id, block.index, key);
    ++id;
  }
  tasks.keys_.resize(id);
  tasks.estimates_.resize(id);
  tasks.points_.resize(id);

  for (std::size_t a = 0; a < grid->axes().size(); ++a) {
    const bool used =
        std::any_of(notes.begin(), notes.end(), [a](const ShareNotes& n) { return n.used[a]; });
    if (used) continue;
    const Axis& axis = grid->axes()[a];
    fail(key_where(block, axis.where),
         fmt::format("{} applies to no task of this {} (it is used by {}); "
                     "expected it only where such tasks are",
                     key_ref(block.from_flags, axis.key->name),
                     block.from_flags ? "evaluation" : "block", axis.key->used_by));
  }
  if (grid->refinement()) state.refinements.push_back(*grid->refinement());
  tasks.grids_.push_back(std::move(grid));
  tasks.grid_first_.push_back(first);
}

std::uint64_t block_grid_size(const BlockInput& block, std::uint64_t room,
                              std::uint64_t max_tasks) {
  const Axes axes = declare_axes(block, max_tasks);
  const auto dims = dimensions(block, axes);
  const std::uint64_t grid = check_grid(block, axes, dims, room, max_tasks);
  // A refining block reserves what it may grow to.
  const auto refinement = parse_refine(block, axes, dims, grid, room, max_tasks);
  return refinement ? std::max(grid, refinement->first.most_tasks()) : grid;
}

}  // namespace qsweep::sweep::detail

namespace qsweep::sweep {
namespace {

const detail::BlockGrid& refining_grid(const Plan& plan, std::size_t r) {
  const Refinement& refinement = plan.refinements.at(r);
  const detail::BlockGrid* grid = plan.tasks.block_grid(refinement.block);
  if (!grid || !grid->refinement())
    throw std::logic_error(
        fmt::format("refine: block {} of the plan has no grid that refines", refinement.block));
  return *grid;
}

// The block's task at `point` (with the refined axis at `refined`, if given), costed.
Task costed_task(const detail::BlockGrid& grid, std::uint64_t point, const detail::Value* refined) {
  Task task = grid.task(point, nullptr, refined);
  detail::PointContext context(grid, grid.on_unstable_error());
  context.point = point;
  if (const std::optional<CostEstimate> cost =
          detail::method_adapter(grid.method()).prepare(task, context)) {
    task.cost = cost->seconds;
    task.memory = cost->memory.bytes;
    task.result_memory = cost->memory.result_bytes;
  }
  return task;
}

}  // namespace

std::vector<std::vector<RefinedPoint>> refinement_curves(const Plan& plan, std::size_t r) {
  const detail::BlockGrid& grid = refining_grid(plan, r);
  std::map<std::uint64_t, std::vector<RefinedPoint>> by_curve;
  for (std::uint64_t point = 0; point < grid.points(); ++point) {
    RefinedPoint p;
    p.x = grid.refined_x(point);
    p.task = costed_task(grid, point, nullptr);
    p.grid_point = grid.curve_of(point);
    by_curve[p.grid_point].push_back(std::move(p));
  }
  std::vector<std::vector<RefinedPoint>> curves;
  std::set<std::string> seen;  // the keys of each curve's tasks
  for (auto& [base, curve] : by_curve) {
    std::stable_sort(curve.begin(), curve.end(),
                     [](const RefinedPoint& a, const RefinedPoint& b) { return a.x < b.x; });
    std::string keys;
    for (const RefinedPoint& p : curve) keys += task_key(p.task);
    if (seen.insert(keys).second) curves.push_back(std::move(curve));
  }
  return curves;
}

RefinedPoint refined_point(const Plan& plan, std::size_t r, const RefinedPoint& on_curve, double x,
                           int round) {
  const detail::BlockGrid& grid = refining_grid(plan, r);
  const detail::Value value = grid.refined_value(x);
  RefinedPoint p;
  p.x = x;
  p.task = costed_task(grid, on_curve.grid_point, &value);
  p.task.round = round;
  p.round = round;
  p.grid_point = on_curve.grid_point;
  return p;
}

refine::Point curve_point(const Refinement& refinement, double x, const Row& row) {
  const std::vector<ColumnSpec>& columns = group_columns(refinement.method);
  const auto number = [&](const std::string& name) {
    for (std::size_t i = 0; i < columns.size() && i < row.cells.size(); ++i)
      if (columns[i].name == name)
        if (const double* v = std::get_if<double>(&row.cells[i])) return *v;
    return std::numeric_limits<double>::quiet_NaN();
  };
  refine::Point point;
  point.x = x;
  point.y = number(refinement.quantity);
  point.half_width = refinement.half_width.empty() ? 0.0 : number(refinement.half_width);
  if (std::isnan(point.half_width)) point.half_width = 0.0;
  return point;
}

std::vector<std::string> PlanTeam::all_gather(const std::string& mine) const {
  const auto members = static_cast<std::size_t>(size);
  const auto me = static_cast<std::size_t>(rank);
  std::vector<std::uint64_t> sizes(members, 0);
  sizes[me] = mine.size();
  gather_parts(reinterpret_cast<char*>(sizes.data()),
               std::vector<std::uint64_t>(members, sizeof(std::uint64_t)));
  std::vector<std::uint64_t> starts(members + 1, 0);
  for (std::size_t m = 0; m < members; ++m) starts[m + 1] = starts[m] + sizes[m];
  std::string all(starts.back(), '\0');
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(starts[me]));
  gather_parts(all.data(), sizes);
  std::vector<std::string> parts;
  for (std::size_t m = 0; m < members; ++m) parts.push_back(all.substr(starts[m], sizes[m]));
  return parts;
}

}  // namespace qsweep::sweep
