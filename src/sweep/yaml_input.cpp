#include "yaml_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/common/printable.hpp"

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

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";
constexpr std::string_view kIntTag = "tag:yaml.org,2002:int";

// How a scalar's tag makes it read (yaml-cpp: "?" plain, "!" quoted, else the explicit tag in
// full, !!str as tag:yaml.org,2002:str).
std::string tag_text(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  if (tag == "!") return "in quotes, which YAML reads as text";
  constexpr std::string_view kCore = "tag:yaml.org,2002:";
  if (tag.starts_with(kCore)) return "with the tag !!" + printable(tag.substr(kCore.size()));
  return "with the tag " + printable(tag);
}

// A quoted or !!str scalar is text, even when it reads as a number or a boolean: an explicit tag
// must be honoured. `allowed` are the core tags of the kind asked for (!!float, !!int, !!bool).
void require_plain(const YAML::Node& node, const Locator& loc, std::string_view what,
                   std::string_view expected, std::initializer_list<std::string_view> allowed) {
  const std::string& tag = node.Tag();
  if (tag == "?" || std::find(allowed.begin(), allowed.end(), tag) != allowed.end()) return;
  fail(loc.at(node),
       fmt::format("{} is {} {}; expected {}", what, show(node), tag_text(node), expected));
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
      return fmt::format("'{}'", printable(text));
    }
    default:
      return "empty";
  }
}

double read_number(const YAML::Node& node, const Locator& loc, std::string_view what,
                   std::string_view expected) {
  require_scalar(node, loc, what, expected);
  require_plain(node, loc, what, expected, {"tag:yaml.org,2002:float", kIntTag});
  if (node.Tag() == kIntTag && !parse_full<std::int64_t>(node.Scalar()))
    fail(loc.at(node), fmt::format("{} is {} with the tag !!int, not an integer; expected {}", what,
                                   show(node), expected));
  const auto value = parse_full<double>(node.Scalar());
  if (!value || !std::isfinite(*value))
    fail(loc.at(node),
         fmt::format("{} is {}, not a finite number; expected {}", what, show(node), expected));
  return *value;
}

std::int64_t read_integer(const YAML::Node& node, const Locator& loc, std::string_view what,
                          std::string_view expected) {
  require_scalar(node, loc, what, expected);
  require_plain(node, loc, what, expected, {kIntTag, "tag:yaml.org,2002:float"});
  if (const auto exact = parse_full<std::int64_t>(node.Scalar())) return *exact;
  // Also accept integral numbers written as floats (1.0e6, 64.0), below 2^53 where a double
  // holds every integer: 9007199254740993.0 reads as 2^53 and must not pass as it.
  const auto value = parse_full<double>(node.Scalar());
  if (node.Tag() == kIntTag || !value || !std::isfinite(*value) || *value != std::floor(*value) ||
      std::abs(*value) >= 0x1.0p53)
    fail(loc.at(node),
         fmt::format("{} is {}, not an integer; expected {}", what, show(node), expected));
  return static_cast<std::int64_t>(*value);
}

std::uint64_t read_unsigned(const YAML::Node& node, const Locator& loc, std::string_view what,
                            std::string_view expected) {
  require_scalar(node, loc, what, expected);
  require_plain(node, loc, what, expected, {kIntTag});
  const auto value = parse_full<std::uint64_t>(node.Scalar());
  if (!value)
    fail(loc.at(node), fmt::format("{} is {}, not a non-negative integer; expected {}", what,
                                   show(node), expected));
  return *value;
}

bool read_bool(const YAML::Node& node, const Locator& loc, std::string_view what) {
  require_scalar(node, loc, what, "true or false");
  require_plain(node, loc, what, "true or false", {"tag:yaml.org,2002:bool"});
  bool value = false;
  if (!YAML::convert<bool>::decode(node, value))
    fail(loc.at(node),
         fmt::format("{} is {}, not a boolean; expected true or false", what, show(node)));
  return value;
}

std::string read_string(const YAML::Node& node, const Locator& loc, std::string_view what,
                        std::string_view expected) {
  require_scalar(node, loc, what, expected);
  require_plain(node, loc, what, expected, {"!", kStrTag});
  return node.Scalar();
}

}  // namespace qsweep::sweep::detail
