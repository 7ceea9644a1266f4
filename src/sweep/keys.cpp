#include "keys.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "method.hpp"
#include "qsweep/common/closest_match.hpp"

namespace qsweep::sweep::detail {

std::vector<double> positive_list(const YAML::Node& node, const Locator& loc,
                                  std::string_view what) {
  const std::string expected = "a non-empty list of numbers > 0";
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node), fmt::format("{} is {}; expected {}", what, show(node), expected));
  std::vector<double> out;
  for (const auto& item : node) {
    const double x = read_number(item, loc, what, expected);
    if (!(x > 0.0))
      fail(loc.at(item), fmt::format("{} has the value {}; expected {}", what, x, expected));
    out.push_back(x);
  }
  return out;
}

std::vector<double> length_weights(const YAML::Node& node, const Locator& loc,
                                   std::string_view what, std::size_t max_entries) {
  const std::string expected =
      "a list of numbers >= 0 (index k: count or fraction of queues of length k at time 0)";
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node), fmt::format("{} is {}; expected {}", what, show(node), expected));
  if (node.size() > max_entries)
    fail(loc.at(node),
         fmt::format("{} has {} entries; expected at most {}", what, node.size(), max_entries));
  std::vector<double> weights;
  double total = 0.0;
  for (const auto& item : node) {
    const double x = read_number(item, loc, "a count", expected);
    if (!(x >= 0.0 && std::isfinite(x)))
      fail(loc.at(item), fmt::format("a count is {}; expected {}", show(item), expected));
    total += x;
    weights.push_back(x);
  }
  if (!(total > 0.0 && std::isfinite(total)))
    fail(loc.at(node), fmt::format("{} sum to {}; expected a finite positive total", what, total));
  return weights;
}

std::vector<double> increasing_list(const YAML::Node& node, const Locator& loc,
                                    std::string_view what, const Bounds& bounds,
                                    std::string_view expected, std::size_t max_entries,
                                    bool linspace) {
  std::vector<double> out;
  if (linspace && node.IsMap()) {
    const std::string generator = "{linspace: [first, last, count]}";
    if (node.size() != 1 || !node.begin()->first.IsScalar() ||
        node.begin()->first.Scalar() != "linspace")
      fail(loc.at(node),
           fmt::format("{} is {}; expected {} or {}", what, show(node), expected, generator));
    const YAML::Node args = node.begin()->second;
    if (!args.IsSequence() || args.size() != 3)
      fail(loc.at(args), fmt::format("linspace is {}; expected [first, last, count]", show(args)));
    const double a = read_number(args[0], loc, "the first linspace value", expected);
    const double b = read_number(args[1], loc, "the last linspace value", expected);
    const std::string count = fmt::format("an integer in [2, {}]", max_entries);
    const std::int64_t n = read_integer(args[2], loc, "the linspace count", count);
    if (n < 2 || static_cast<std::uint64_t>(n) > max_entries)
      fail(loc.at(args[2]), fmt::format("the linspace count is {}; expected {}", n, count));
    if (!(a < b))
      fail(loc.at(args[1]), fmt::format("the linspace of {} runs from {} to {}; expected {} "
                                        "(first < last)",
                                        what, a, b, expected));
    for (const auto& [x, at] : {std::pair{a, args[0]}, std::pair{b, args[1]}})
      if (!bounds.contains(x))
        fail(loc.at(at), fmt::format("{} has the value {}; expected {}", what, x, expected));
    // As numpy.linspace: a + i (b - a) / (n - 1), the last exactly b.
    const double step = (b - a) / static_cast<double>(n - 1);
    for (std::int64_t i = 0; i < n; ++i)
      out.push_back(i + 1 == n ? b : a + static_cast<double>(i) * step);
    return out;
  }
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node), fmt::format("{} is {}; expected {}{}", what, show(node), expected,
                                   linspace ? " or {linspace: [first, last, count]}" : ""));
  if (node.size() > max_entries)
    fail(loc.at(node),
         fmt::format("{} has {} values; expected at most {}", what, node.size(), max_entries));
  for (const auto& item : node) {
    const double x = read_number(item, loc, what, expected);
    if (!bounds.contains(x))
      fail(loc.at(item), fmt::format("{} has the value {}; expected {}", what, x, expected));
    if (!out.empty() && !(x > out.back()))
      fail(loc.at(item),
           fmt::format("{} has {} after {}; expected {}", what, x, out.back(), expected));
    out.push_back(x);
  }
  return out;
}

namespace {

std::string format_bound(double x) {
  return x == std::floor(x) && std::abs(x) < 1e15 ? fmt::format("{:.0f}", x)
                                                  : fmt::format("{:g}", x);
}

// ---- values ------------------------------------------------------------------------------------

// Checks a numeric value against the key and converts it to the key's Value alternative.
Value numeric_value(const KeySpec& key, double x, const std::string& where,
                    std::string_view origin) {
  if (key.kind == Kind::integer) {
    const double rounded = std::round(x);
    // From 2^53 on a double no longer holds every integer: the value meant is unknown.
    if (std::abs(x - rounded) > 1e-9 * std::max(1.0, std::abs(x)) || std::abs(rounded) >= 0x1p53)
      fail(where, fmt::format("{}{} = {} is not an integer; expected {}", origin, key.name, x,
                              key.expected()));
    x = rounded;
  }
  if (!key.bounds.contains(x))
    fail(where, fmt::format("{}{} = {} is out of range; expected {}", origin, key.name, x,
                            key.expected()));
  switch (key.kind) {
    case Kind::integer:
      return static_cast<std::int64_t>(x);
    case Kind::load:
      return Load{x, key.name == "rho"};
    default:
      return x;
  }
}

Value scalar_value(const KeySpec& key, const YAML::Node& node, const Locator& loc) {
  const std::string where = loc.at(node);
  const std::string expected = key.expected();
  switch (key.kind) {
    case Kind::integer: {
      const auto x = read_integer(node, loc, key.name, expected);
      if (!key.bounds.contains(x))
        fail(where, fmt::format("{} = {} is out of range; expected {}", key.name, x, expected));
      return x;
    }
    case Kind::real:
    case Kind::load:
      return numeric_value(key, read_number(node, loc, key.name, expected), where, "");
    case Kind::boolean:
      return read_bool(node, loc, key.name);
    case Kind::choice: {
      std::string name = read_string(node, loc, key.name, expected);
      for (auto choice : key.choices)
        if (choice == name) return name;
      const std::string guess = closest_match(name, key.choices);
      fail(where,
           fmt::format("unknown {} '{}'{}; expected {}", key.name, printable(name),
                       guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess), expected));
    }
    case Kind::fixed:
      break;
  }
  return Value{};
}

std::uint64_t generator_count(const YAML::Node& node, const Locator& loc, std::string_view gen,
                              std::uint64_t max_values) {
  const std::string expected = fmt::format("a count between 1 and {}", max_values);
  const auto n = read_integer(node, loc, fmt::format("the {} count", gen), expected);
  if (n < 1 || static_cast<std::uint64_t>(n) > max_values)
    fail(loc.at(node),
         fmt::format("the {} count is {}; expected {} (max_tasks)", gen, n, expected));
  return static_cast<std::uint64_t>(n);
}

// {linspace: [a, b, n]}, {logspace: [a, b, n], base: 10}, {heavy_traffic: [k, ...]}.
void parse_generator(const KeySpec& key, const YAML::Node& node, const Locator& loc,
                     std::uint64_t max_values, Axis& axis) {
  const bool numeric =
      key.kind == Kind::integer || key.kind == Kind::real || key.kind == Kind::load;
  const std::string where = loc.at(node);
  if (!numeric) fail(where, fmt::format("{} is a mapping; expected {}", key.name, key.expected()));
  const std::string gens =
      key.kind == Kind::load
          ? "{linspace: [a, b, n]}, {logspace: [a, b, n]} or {heavy_traffic: [k, ...]}"
          : "{linspace: [a, b, n]} or {logspace: [a, b, n]}";
  std::string generator;
  YAML::Node args, base_node;
  bool has_base = false;
  for (const auto& kv : node) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    const bool is_generator = name == "linspace" || name == "logspace" ||
                              (name == "heavy_traffic" && key.kind == Kind::load);
    if (is_generator && generator.empty()) {
      generator = name;
      args = kv.second;
    } else if (name == "base" && !has_base) {
      has_base = true;
      base_node = kv.second;
    } else if (name == "heavy_traffic" && key.kind != Kind::load) {
      fail(loc.at(kv.first),
           fmt::format("heavy_traffic generates loads, not {}; expected {}", key.name, gens));
    } else {
      const std::string guess =
          closest_match(name, {"linspace", "logspace", "heavy_traffic", "base"});
      fail(loc.at(kv.first),
           fmt::format("unexpected '{}' in the value generator of {}{}; expected {}",
                       printable(name), key.name,
                       guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess), gens));
    }
  }
  if (generator.empty())
    fail(where,
         fmt::format("value generator of {} names no generator; expected {}", key.name, gens));
  if (has_base && generator != "logspace")
    fail(loc.at(base_node), fmt::format("base belongs to logspace, not {}; expected {{logspace: "
                                        "[a, b, n], base: b}}",
                                        generator));

  std::string origin = generator + " value of ";
  if (generator == "heavy_traffic") {
    const std::string expected = "k > 0 (lambda = mean speed * (1 - 10^-k))";
    std::vector<YAML::Node> ks;
    if (args.IsSequence()) {
      for (const auto& item : args) ks.push_back(item);
    } else {
      ks.push_back(args);
    }
    if (ks.empty() || ks.size() > max_values)
      fail(loc.at(args), fmt::format("heavy_traffic is {}; expected a non-empty list of {}",
                                     show(args), expected));
    for (const auto& item : ks) {
      const double k = read_number(item, loc, "heavy_traffic k", expected);
      if (!(k > 0.0))
        fail(loc.at(item), fmt::format("heavy_traffic k = {}; expected {}", k, expected));
      axis.values.push_back(Load{1.0 - std::pow(10.0, -k), true});
      axis.value_where.push_back(loc.at(item));
    }
    return;
  }
  if (!args.IsSequence() || args.size() != 3)
    fail(loc.at(args),
         fmt::format("{} is {}; expected [first, last, count]", generator, show(args)));
  const double a =
      read_number(args[0], loc, fmt::format("the first {} value", generator), "a number");
  const double b =
      read_number(args[1], loc, fmt::format("the last {} value", generator), "a number");
  const std::uint64_t n = generator_count(args[2], loc, generator, max_values);
  double base = 10.0;
  if (has_base) {
    base = read_number(base_node, loc, "base", "a number > 0 other than 1");
    if (!(base > 0.0) || base == 1.0)
      fail(loc.at(base_node), fmt::format("base = {}; expected a number > 0 other than 1", base));
  }
  // The values run monotonically from the first to the last: a range error shows at an end,
  // before n values are made.
  for (const double end : {a, b}) {
    const double x = generator == "linspace" ? end : std::pow(base, end);
    if (std::isfinite(x)) numeric_value(key, x, where, origin);
  }
  // As numpy.linspace computes them, so that values equal what users compare with: a + i * step,
  // step = (b - a) / (n - 1), the last exactly b; where the step underflows, a + (i / (n - 1)) (b -
  // a). logspace is pow(base, x) of those (numpy's own power differs by an ulp on AVX-512
  // machines).
  const double div = static_cast<double>(n - 1);
  const double delta = b - a;
  const double step = n > 1 ? delta / div : 0.0;
  const bool linspace = generator == "linspace";
  axis.generated.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {  // each value made and checked in place (n up to 10^7)
    const double index = static_cast<double>(i);
    double x = step != 0.0 ? index * step + a : n > 1 ? index / div * delta + a : a;
    if (i + 1 == n && n > 1) x = b;
    if (!linspace) x = std::pow(base, x);
    if (!std::isfinite(x))
      fail(where,
           fmt::format("{} gives {} for {}; expected finite values", generator, x, key.name));
    const Value value = numeric_value(key, x, where, origin);
    if (const auto* load = std::get_if<Load>(&value)) {
      axis.generated.push_back(load->value);
      axis.relative = load->relative;
    } else {
      axis.generated.push_back(std::holds_alternative<double>(value)
                                   ? std::get<double>(value)
                                   : static_cast<double>(std::get<std::int64_t>(value)));
    }
  }
  axis.value_where.push_back(where);
}

}  // namespace

bool Bounds::contains(double x) const {
  return (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi);
}

namespace {

// -1, 0 or 1 as x is below, at or above b, exactly (2^53 + 1 is above 2^53).
int compare(std::int64_t x, double b) {
  if (b >= 0x1p63) return -1;
  if (b < -0x1p63) return 1;
  const double whole = std::floor(b);
  const auto i = static_cast<std::int64_t>(whole);  // exact: -2^63 <= whole < 2^63
  if (x != i) return x < i ? -1 : 1;
  return whole == b ? 0 : -1;  // x = floor(b) < b
}

}  // namespace

bool Bounds::contains(std::int64_t x) const {
  const int to_lo = compare(x, lo), to_hi = compare(x, hi);
  return (lo_open ? to_lo > 0 : to_lo >= 0) && (hi_open ? to_hi < 0 : to_hi <= 0);
}

std::string Bounds::describe(Kind kind) const {
  const std::string noun = kind == Kind::integer ? "an integer" : "a number";
  // Upper limits that only guard the integer type are left out of messages.
  const bool has_hi = hi < std::numeric_limits<int>::max();
  if (!has_hi) return fmt::format("{} {} {}", noun, lo_open ? ">" : ">=", format_bound(lo));
  return fmt::format("{} in {}{}, {}{}", noun, lo_open ? "(" : "[", format_bound(lo),
                     format_bound(hi), hi_open ? ")" : "]");
}

std::string KeySpec::expected() const {
  switch (kind) {
    case Kind::choice: {
      std::string list;
      for (auto c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
      return "one of: " + list;
    }
    case Kind::boolean:
      return "true or false";
    case Kind::fixed:
      return std::string(help);
    default:
      return bounds.describe(kind);
  }
}

const KeySpec* find_key(std::string_view name, Method method) {
  for (const auto& spec : method_adapter(method).keys)
    if (spec.name == name) return &spec;
  return nullptr;
}

std::uint64_t axis_length(const KeySpec& key, const YAML::Node& value, const Locator& loc,
                          std::uint64_t max_values) {
  if (key.kind == Kind::fixed || !value) return 1;
  if (value.IsSequence()) {
    if (value.size() > max_values)
      fail(loc.at(value), fmt::format("{} lists {} values; expected at most max_tasks = {}",
                                      key.name, value.size(), max_values));
    return value.size();
  }
  if (!value.IsMap()) return 1;
  // A generator's own count; parse_axis reports a malformed generator.
  for (const auto& kv : value) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    const YAML::Node& args = kv.second;
    if (name == "heavy_traffic") return args.IsSequence() ? args.size() : 1;
    if ((name == "linspace" || name == "logspace") && args.IsSequence() && args.size() == 3)
      return generator_count(args[2], loc, name, max_values);
  }
  return 1;
}

Axis parse_axis(const KeySpec& key, const YAML::Node& key_node, const YAML::Node& value,
                const Locator& loc, std::uint64_t max_values) {
  Axis axis;
  axis.key = &key;
  axis.where = loc.at(key_node);
  if (!value || value.IsNull())
    fail(axis.where, fmt::format("{} has no value; expected {}", key.name, key.expected()));
  if (key.kind == Kind::fixed) {
    axis.values.push_back(key.parse_fixed(value, loc));
    axis.value_where.push_back(loc.at(value));
    axis.length = axis.values.size();
    return axis;
  }
  if (value.IsMap()) {
    parse_generator(key, value, loc, max_values, axis);
    axis.length = axis.values.size() + axis.generated.size();
    return axis;
  }
  if (value.IsSequence()) {
    if (value.size() == 0)
      fail(loc.at(value),
           fmt::format("{} is an empty list; expected {} or a non-empty list of them", key.name,
                       key.expected()));
    if (value.size() > max_values)
      fail(loc.at(value), fmt::format("{} lists {} values; expected at most max_tasks = {}",
                                      key.name, value.size(), max_values));
    for (const auto& item : value) {
      if (!item.IsScalar())
        fail(loc.at(item), fmt::format("a value of {} is {}; expected {} (lists do not nest)",
                                       key.name, show(item), key.expected()));
      axis.values.push_back(scalar_value(key, item, loc));
      axis.value_where.push_back(loc.at(item));
    }
    axis.length = axis.values.size();
    return axis;
  }
  axis.values.push_back(scalar_value(key, value, loc));
  axis.value_where.push_back(loc.at(value));
  axis.length = axis.values.size();
  return axis;
}

}  // namespace qsweep::sweep::detail
