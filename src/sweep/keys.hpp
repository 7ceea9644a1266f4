#pragma once
// Private to the sweep layer: block keys (each method adapter lists its own, method.hpp) and the
// parsing of a key's value into an axis of the sweep. docs/sweep-format.md documents each key;
// block_keys() (plan.hpp) exposes them to `qsweep eval` and its --help.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "qsweep/sweep/task.hpp"
#include "yaml_input.hpp"

namespace qsweep::sweep::detail {

// A per-server arrival rate as given: absolute, or a fraction of the mean server speed
// (`rho:` and `heavy_traffic` values).
struct Load {
  double value = 0.0;
  bool relative = false;
  friend bool operator==(const Load&, const Load&) = default;
};

// One value of a key: a sweep axis point, or the whole value of a fixed (non-sweepable) key.
using Value = std::variant<std::int64_t, double, bool, std::string, Load, std::vector<double>,
                           std::vector<std::int64_t>, std::vector<model::ExplicitType>,
                           std::vector<std::pair<int, int>>>;

// A task under construction: what a block combination sets before derived values (torus N,
// speeds from a profile, lambda from rho) are filled in.
struct Draft {
  Task task;
  std::string speed_profile;  // "" = none
  double fast = 0.0;
  Load load;
  bool has_load = false;
};

enum class Kind { integer, real, boolean, choice, load, fixed };

// Numeric range of a key, checked on every value (also generated ones).
struct Bounds {
  double lo = -1e300, hi = 1e300;
  bool lo_open = false, hi_open = false;
  bool contains(double x) const;
  bool contains(std::int64_t x) const;    // exactly: x as an integer, not rounded to a double
  std::string describe(Kind kind) const;  // "an integer >= 1", "a number in (0, 1)"
};

struct KeySpec {
  std::string_view name;
  Kind kind = Kind::real;
  std::string_view help;                  // one line: what it means (docs, --help)
  Bounds bounds;                          // integer, real, load
  std::vector<std::string_view> choices;  // choice
  bool selector = false;         // applied before the others: other keys' applies() read it
  bool required = false;         // must be given whenever it applies
  std::string_view alternative;  // a key that may be given instead (lambda / rho), not with it
  std::string_view used_by;      // when it applies, for messages ("family complete"); "" = always
  bool (*applies)(const Draft&) = nullptr;  // nullptr = always
  void (*apply)(Draft&, const Value&) = nullptr;
  Value (*parse_fixed)(const YAML::Node&, const Locator&) = nullptr;  // kind fixed

  std::string expected() const;  // "an integer >= 1", "one of: a, b", ... for messages
};

// The key `name` of a block of `method`, or nullptr.
const KeySpec* find_key(std::string_view name, Method method);

// ---- for the keys of the method adapters ------------------------------------------------------

// Value accessors: parse_axis guarantees the alternative that matches the key's kind.
inline std::int64_t integer(const Value& v) { return std::get<std::int64_t>(v); }
inline int small_int(const Value& v) { return static_cast<int>(std::get<std::int64_t>(v)); }
inline double real(const Value& v) { return std::get<double>(v); }
inline bool boolean(const Value& v) { return std::get<bool>(v); }
inline const std::string& text(const Value& v) { return std::get<std::string>(v); }

inline constexpr double kIntMax = std::numeric_limits<int>::max();

inline Bounds at_least(double lo) { return {lo, 1e300, false, false}; }
inline Bounds above(double lo) { return {lo, 1e300, true, false}; }
inline Bounds between(double lo, double hi, bool lo_open, bool hi_open) {
  return {lo, hi, lo_open, hi_open};
}

// A fixed key's non-empty list of numbers > 0; `what` names it in messages.
std::vector<double> positive_list(const YAML::Node& node, const Locator& loc,
                                  std::string_view what);

// A fixed key's non-empty list of at most max_entries numbers >= 0 with a finite positive sum:
// the weight (count or fraction) of queues of length k = 0, 1, ... at time 0.
std::vector<double> length_weights(const YAML::Node& node, const Locator& loc,
                                   std::string_view what, std::size_t max_entries);

// A fixed key's non-empty list of at most max_entries increasing numbers within `bounds`
// (levels, times), or with `linspace` also {linspace: [a, b, n]} (n values as numpy.linspace
// gives them, a < b); `expected` says what is expected in messages.
std::vector<double> increasing_list(const YAML::Node& node, const Locator& loc,
                                    std::string_view what, const Bounds& bounds,
                                    std::string_view expected, std::size_t max_entries,
                                    bool linspace);

// A key's values: one point for a scalar or fixed key, several for a list or a generator.
struct Axis {
  const KeySpec* key = nullptr;
  std::string where;          // location of the key
  std::vector<Value> values;  // a list's values (one for a scalar or a fixed key)
  // Or a linspace's or logspace's, 8 bytes each rather than a Value's 40 (every rank keeps them
  // with the plan): integers, numbers or loads (relative: `rho`) as the key's kind says.
  std::vector<double> generated;
  bool relative = false;
  // Location of each value, or one for all (a generator's values: the generator).
  std::vector<std::string> value_where;
  std::uint64_t length = 0;  // number of values (known before they are parsed)

  // Value i of a generator's, as a list would give it.
  Value generated_value(std::size_t i) const {
    const double x = generated[i];
    if (key->kind == Kind::integer) return static_cast<std::int64_t>(x);
    if (key->kind == Kind::load) return Load{x, relative};
    return x;
  }
};

// The number of values `value` gives `key`, without making them (a list's length, a
// generator's count), so that a grid is sized before anything is allocated. Refuses a list or
// generator longer than max_values; other errors are left to parse_axis.
std::uint64_t axis_length(const KeySpec& key, const YAML::Node& value, const Locator& loc,
                          std::uint64_t max_values);

// Parses the value of `key` (scalar, list, generator mapping, or a fixed key's structure).
// A list or generator longer than max_values is refused (a typo in a linspace count must not
// allocate a billion values).
Axis parse_axis(const KeySpec& key, const YAML::Node& key_node, const YAML::Node& value,
                const Locator& loc, std::uint64_t max_values);

}  // namespace qsweep::sweep::detail
