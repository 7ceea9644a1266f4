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

// The tasks of the plan so far by the hash of their content text (open addressing, two 8-byte
// slots per point of every block's grid); a match is confirmed on the texts themselves.
class SeenTasks {
 public:
  explicit SeenTasks(std::uint64_t points) {
    const std::uint64_t slots = std::bit_ceil(std::max<std::uint64_t>(2 * points, 2));
    slots_.reserve(slots);
    ask_huge_pages(slots_);
    slots_.resize(slots);
    shift_ = 64 - std::countr_zero(slots);
  }
  // The slot a text starts at; the table is much larger than the caches, so expansion fetches
  // it while it makes the next task (prefetch) and inserts the text after.
  std::uint64_t slot_of(const std::string& text, std::uint32_t& tag) const {
    const std::uint64_t hash = hash_of(text);
    tag = static_cast<std::uint32_t>(hash);
    // The slot from the high bits of a multiplicative mix: texts that differ in a few bytes
    // must not cluster.
    return (hash * 0x9e3779b97f4a7c15ULL) >> shift_ & (slots_.size() - 1);
  }
  void prefetch(std::uint64_t slot) const { __builtin_prefetch(&slots_[slot], 1); }
  // Records `text` as task `id`'s, or returns the earlier task of the same text
  // (`text_at(earlier)` makes its text again).
  template <class TextAt>
  std::optional<std::uint64_t> insert(const std::string& text, std::uint64_t slot,
                                      std::uint32_t tag, std::uint64_t id, TextAt text_at) {
    const std::uint64_t mask = slots_.size() - 1;
    for (std::uint64_t i = slot;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.id_plus_one == 0) {
        s = {static_cast<std::uint32_t>(id + 1), tag};
        return std::nullopt;
      }
      if (s.tag == tag && text_at(s.id_plus_one - 1) == text) return s.id_plus_one - 1;
    }
  }

 private:
  // 16 bytes a step, each pair of words folded by one 64 x 64 -> 128-bit product (as wyhash
  // does): std::hash took 8 bytes a step and was 5% of planning. Only speed depends on its
  // quality: a match is confirmed on the texts.
  static std::uint64_t hash_of(std::string_view text) {
    constexpr std::uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL;
    const auto fold = [](std::uint64_t a, std::uint64_t b) {
      const auto product = static_cast<unsigned __int128>(a) * b;
      return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
    };
    std::uint64_t h = text.size() ^ k1;
    std::size_t i = 0;
    for (; i + 16 <= text.size(); i += 16) {
      std::uint64_t a, b;
      std::memcpy(&a, text.data() + i, 8);
      std::memcpy(&b, text.data() + i + 8, 8);
      h = fold(a ^ h ^ k0, b ^ k1);
    }
    std::uint64_t last[2] = {0, 0};  // the rest, padded with zeros (the size is in h)
    std::memcpy(last, text.data() + i, text.size() - i);
    return fold(fold(last[0] ^ h ^ k0, last[1] ^ k1), text.size() ^ k0);
  }
  struct Slot {
    std::uint32_t id_plus_one = 0;  // 0: empty (ids < max_tasks <= 10^7)
    std::uint32_t tag = 0;          // the hash's low bits
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
  const MethodAdapter& method = method_adapter(block.method);
  PointContext context(*grid, state.on_unstable_error);  // its memo lives through the block
  std::vector<bool> used(grid->axes().size(), false);
  // Sized for every block's grid (a plan from flags is one block), or for this block's when
  // duplicates of earlier blocks are kept.
  if (state.block_duplicates == BlockDuplicates::kept)
    state.seen = std::make_shared<SeenTasks>(grid->points());
  else if (!state.seen)
    state.seen = std::make_shared<SeenTasks>(std::max(state.planned, grid->points()));
  SeenTasks& seen = *state.seen;
  const NoFormulas no_formulas;  // the plan keeps the estimates' numbers only
  const std::uint64_t first = tasks.size();
  // A point's task with its content text (id, block and cost 0) and where the text goes in `seen`;
  // the next point's is made while the current one's slot is fetched. An error making it is raised
  // when its point's turn comes, after the current point's own errors.
  struct Made {
    Task task;
    std::string text;  // reused for every other point
    std::uint64_t slot = 0;
    std::uint32_t tag = 0;
    std::exception_ptr error;
    std::vector<bool> used;  // a refining block's: the keys this point's task uses
  };
  TextMemo memo;  // the parts of the previous point's text
  const bool refining = grid->refinement().has_value();
  const auto make = [&](std::uint64_t point, Made& made) {
    try {
      if (refining) {
        made.used.assign(used.size(), false);
        made.task = grid->task(point, &made.used);
        for (std::size_t a = 0; a < used.size(); ++a)
          if (made.used[a]) used[a] = true;
      } else {
        made.task = grid->task(point, &used);
      }
    } catch (...) {
      made.error = std::current_exception();
      return;
    }
    made.text.clear();
    made.task.block = 0;  // the content text; the block is set back below
    append_canonical_text(made.text, made.task, &memo);
    made.task.block = block.index;
    made.slot = seen.slot_of(made.text, made.tag);
    seen.prefetch(made.slot);
  };
  const auto text_at = [&](std::uint64_t earlier) {
    return content_text(earlier < first ? tasks.at(earlier) : grid->task(tasks.points_[earlier]));
  };
  std::array<Made, 2> made;
  make(0, made[0]);
  for (std::uint64_t point = 0; point < grid->points(); ++point) {
    if (state.stopped && state.stopped()) throw PlanStopped();
    Made& now = made[point % 2];
    if (point + 1 < grid->points()) make(point + 1, made[(point + 1) % 2]);
    if (now.error) std::rethrow_exception(now.error);
    if (refining && !now.used[grid->refine_axis()]) {
      const Refinement& r = *grid->refinement();
      fail(r.where,
           fmt::format("refine axis '{}' does not apply to the task '{}' of this block "
                       "(it is used by {}); expected an axis every task of the block "
                       "uses (a block of its own for the others)",
                       r.axis, describe(now.task), grid->axes()[grid->refine_axis()].key->used_by));
    }
    if (const auto earlier = seen.insert(now.text, now.slot, now.tag, tasks.size(), text_at)) {
      // Kept once: parameters no task uses differ, or an earlier block computes it already.
      if (*earlier < first) ++state.duplicates;
      continue;
    }
    Task& t = now.task;
    const std::string& text = now.text;
    t.id = tasks.size();
    state.list_bytes += method.list_bytes(t);
    if (state.list_bytes > kMaxPlanListBytes)
      fail(block.where, fmt::format("the lists of the tasks up to '{}' (speeds, types, ...) take "
                                    "{:.3g} GB and every rank holds the plan; expected at most "
                                    "{} GiB (fewer tasks with long lists, or a smaller N with "
                                    "speed_profile)",
                                    describe(t), static_cast<double>(state.list_bytes) * 1e-9,
                                    kMaxPlanListBytes >> 30));
    context.point = point;
    TaskEstimate estimate;
    estimate.ranks = t.ranks;
    if (const std::optional<CostEstimate> cost = method.prepare(t, context)) {
      estimate = {cost->seconds, static_cast<float>(cost->memory.bytes),
                  static_cast<float>(cost->memory.result_bytes), t.ranks};
    } else {
      state.unstable_tasks.push_back(t.id);
    }
    estimate.kind = tasks.kind_of(t);
    tasks.points_.push_back(static_cast<std::uint32_t>(point));
    tasks.estimates_.push_back(estimate);
    tasks.keys_.push_back(key_bits(t, text));
    state.hash.add(t, tasks.keys_.back());
  }

  for (std::size_t a = 0; a < used.size(); ++a)
    if (!used[a]) {
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

}  // namespace qsweep::sweep
