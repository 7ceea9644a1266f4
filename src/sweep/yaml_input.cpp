#include "yaml_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <vector>

#include "qsweep/common/error.hpp"

namespace qsweep::sweep::detail {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  return s;
}

template <class T>
std::optional<T> parse_full(std::string_view text) {
  text = trimmed(text);
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

void require_scalar(const YAML::Node& node, const Locator& loc, std::string_view what,
                    std::string_view expected) {
  if (!node.IsScalar())
    fail(loc.at(node), fmt::format("{} is {}; expected {}", what, show(node), expected));
}

}  // namespace

std::string Locator::at(const YAML::Mark& mark) const {
  if (is_flag_ || mark.is_null()) return name_;
  return fmt::format("{}:{}:{}", name_, mark.line + 1, mark.column + 1);
}

std::string Locator::at(const YAML::Node& node) const { return at(node.Mark()); }

void fail(const std::string& where, const std::string& what) {
  throw InputError(where + ": " + what);
}

std::string show(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar: {
      std::string text = node.Scalar();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      return "'" + text + "'";
    }
    default:
      return "empty";
  }
}

double read_number(const YAML::Node& node, const Locator& loc, std::string_view what,
                   std::string_view expected) {
  require_scalar(node, loc, what, expected);
  const auto value = parse_full<double>(node.Scalar());
  if (!value || !std::isfinite(*value))
    fail(loc.at(node),
         fmt::format("{} is {}, not a finite number; expected {}", what, show(node), expected));
  return *value;
}

std::int64_t read_integer(const YAML::Node& node, const Locator& loc, std::string_view what,
                          std::string_view expected) {
  require_scalar(node, loc, what, expected);
  if (const auto exact = parse_full<std::int64_t>(node.Scalar())) return *exact;
  // Also accept integral numbers written as floats (1.0e6, 64.0).
  const auto value = parse_full<double>(node.Scalar());
  if (!value || !std::isfinite(*value) || *value != std::floor(*value) ||
      std::abs(*value) > 0x1.0p53)
    fail(loc.at(node),
         fmt::format("{} is {}, not an integer; expected {}", what, show(node), expected));
  return static_cast<std::int64_t>(*value);
}

std::uint64_t read_unsigned(const YAML::Node& node, const Locator& loc, std::string_view what,
                            std::string_view expected) {
  require_scalar(node, loc, what, expected);
  const auto value = parse_full<std::uint64_t>(node.Scalar());
  if (!value)
    fail(loc.at(node), fmt::format("{} is {}, not a non-negative integer; expected {}", what,
                                   show(node), expected));
  return *value;
}

bool read_bool(const YAML::Node& node, const Locator& loc, std::string_view what) {
  require_scalar(node, loc, what, "true or false");
  bool value = false;
  if (!YAML::convert<bool>::decode(node, value))
    fail(loc.at(node),
         fmt::format("{} is {}, not a boolean; expected true or false", what, show(node)));
  return value;
}

std::string read_string(const YAML::Node& node, const Locator& loc, std::string_view what,
                        std::string_view expected) {
  require_scalar(node, loc, what, expected);
  return node.Scalar();
}

}  // namespace qsweep::sweep::detail
