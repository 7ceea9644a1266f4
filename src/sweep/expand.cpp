#include "expand.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "canonical.hpp"
#include "keys.hpp"
#include "method.hpp"
#include "qsweep/common/checked.hpp"
#include "qsweep/common/closest_match.hpp"

namespace qsweep::sweep::detail {
namespace {

std::string key_ref(const BlockInput& block, std::string_view name) {
  return block.from_flags ? fmt::format("--{}", name) : fmt::format("key '{}'", name);
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
  std::vector<std::string_view> names{"method", "zip"};
  for (const auto& spec : method_adapter(block.method).keys) names.push_back(spec.name);
  const std::string guess = closest_match(entry.key, names);
  std::string list;
  for (auto n : names) list += (list.empty() ? "" : ", ") + std::string(n);
  fail(where, fmt::format("unknown key '{}' for method {}{}; expected one of: {}", entry.key,
                          name_of(block.method),
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
                                                  name, expected));
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

struct Digest {
  std::uint64_t a, b;
  bool operator==(const Digest&) const = default;
};
struct DigestHash {
  std::size_t operator()(const Digest& d) const { return d.a ^ (d.b * 0x9e3779b97f4a7c15ULL); }
};
// 128 bits from two unrelated 64-bit hashes: a false match among 10^7 tasks has odds ~1e-24.
Digest digest(const std::string& text) {
  std::uint64_t fnv = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) fnv = (fnv ^ c) * 0x100000001b3ULL;
  return {std::hash<std::string>{}(text), fnv};
}

class BlockExpander final : public BlockContext {
 public:
  BlockExpander(const BlockInput& block, PlanState& state)
      : block_(block),
        state_(state),
        method_(method_adapter(block.method)),
        axes_(declare_axes(block, state.max_tasks)) {
    for (const auto& key : method_.keys) {
      if (!key.required) continue;
      if (axes_.find(key.name) || (!key.alternative.empty() && axes_.find(key.alternative)))
        continue;
      absent_required_.push_back(&key);
    }
  }

  void run() {
    const auto dims = dimensions(block_, axes_);
    check_grid(block_, axes_, dims, state_.max_tasks - state_.tasks.size(), state_.max_tasks);
    parse_values(axes_, state_.max_tasks);

    value_index_.assign(axes_.axes.size(), 0);
    std::vector<std::size_t> counter(dims.size(), 0);
    for (bool done = false; !done;) {
      for (std::size_t k = 0; k < dims.size(); ++k)
        for (std::size_t a : dims[k]) value_index_[a] = counter[k];
      add_task();
      done = true;  // unless some dimension can advance (odometer, last dimension fastest)
      for (std::size_t k = dims.size(); k-- > 0;) {
        if (++counter[k] < axes_.axes[dims[k][0]].values.size()) {
          done = false;
          break;
        }
        counter[k] = 0;
      }
    }

    for (const auto& axis : axes_.axes)
      if (!axis.used)
        fail(key_where(block_, axis.where),
             fmt::format("{} applies to no task of this {} (it is used by {}); "
                         "expected it only where such tasks are",
                         key_ref(block_, axis.key->name),
                         block_.from_flags ? "evaluation" : "block", axis.key->used_by));
  }

 private:
  const std::string& where() const override { return block_.where; }
  const std::string& where_of(std::string_view key) const override {
    const Axis* axis = axes_.find(key);
    return axis
               ? axis->value_where[value_index_[static_cast<std::size_t>(axis - axes_.axes.data())]]
               : block_.where;
  }
  bool gives(std::string_view key) const override { return axes_.find(key) != nullptr; }
  bool on_unstable_error() const override { return state_.on_unstable_error; }

  Draft draft() {
    Draft d;
    d.task.params = default_params(block_.method);
    d.task.block = block_.index;
    d.task.seed = state_.seed;
    for (bool selectors : {true, false})
      for (auto& axis : axes_.axes) {
        const KeySpec& key = *axis.key;
        if (key.selector != selectors) continue;
        if (key.applies && !key.applies(d)) continue;
        key.apply(d,
                  axis.values[value_index_[static_cast<std::size_t>(&axis - axes_.axes.data())]]);
        axis.used = true;
      }
    for (const KeySpec* required : absent_required_) {
      const KeySpec& key = *required;
      if (key.applies && !key.applies(d)) continue;
      fail(block_.where,
           fmt::format("{} is missing{}; expected {}{}", key_ref(block_, key.name),
                       key.used_by.empty() ? "" : fmt::format(" (required for {})", key.used_by),
                       key.expected(),
                       key.alternative.empty()
                           ? ""
                           : fmt::format(" (or {})", key_ref(block_, key.alternative))));
    }
    return d;
  }

  void add_task() {
    Draft d = draft();
    method_.derive(d, *this);
    Task& t = d.task;
    if (!seen_.insert(digest(canonical_text(t))).second) return;  // same task as an earlier point
    t.id = state_.tasks.size();
    state_.list_bytes += method_.list_bytes(t);
    if (state_.list_bytes > kMaxPlanListBytes)
      fail(block_.where, fmt::format("the lists of the tasks up to '{}' (speeds, types, ...) take "
                                     "{:.3g} GB and every rank holds the plan; expected at most "
                                     "{} GiB (fewer tasks with long lists, or a smaller N with "
                                     "speed_profile)",
                                     describe(t), static_cast<double>(state_.list_bytes) * 1e-9,
                                     kMaxPlanListBytes >> 30));
    if (const std::optional<CostEstimate> estimate = method_.prepare(t, *this)) {
      t.cost = estimate->seconds;
      t.memory = estimate->memory.bytes;
      t.result_memory = estimate->memory.result_bytes;
    } else {
      state_.unstable_tasks.push_back(t.id);
    }
    state_.tasks.push_back(std::move(t));
  }

  const BlockInput& block_;
  PlanState& state_;
  const MethodAdapter& method_;
  Axes axes_;
  std::vector<const KeySpec*> absent_required_;  // required keys the block does not give
  std::vector<std::size_t> value_index_;
  std::unordered_set<Digest, DigestHash> seen_;
};

}  // namespace

void expand_block(const BlockInput& block, PlanState& state) { BlockExpander(block, state).run(); }

std::uint64_t block_grid_size(const BlockInput& block, std::uint64_t room,
                              std::uint64_t max_tasks) {
  const Axes axes = declare_axes(block, max_tasks);
  return check_grid(block, axes, dimensions(block, axes), room, max_tasks);
}

}  // namespace qsweep::sweep::detail
