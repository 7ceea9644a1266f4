#pragma once
// The names of an enum's values, as sweep files, the command line, messages and results files
// spell them: one table per enum, next to the enum (a specialisation of EnumNames), read by
// name_of, parse_name and enum_names.
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace qsweep {

// Specialise for each named enum E: static constexpr std::array<std::pair<E, std::string_view>, K>
// table, every value once, in the order listings show them.
template <class E>
struct EnumNames;

template <class E>
using EnumName = std::pair<E, std::string_view>;

// The name of `value`; "unknown" for a value outside the table (a corrupt byte in a file).
template <class E>
constexpr std::string_view name_of(E value) {
  for (const auto& [entry, name] : EnumNames<E>::table)
    if (entry == value) return name;
  return "unknown";
}

// The value named `name` (exact spelling), or nullopt.
template <class E>
constexpr std::optional<E> parse_name(std::string_view name) {
  for (const auto& [entry, entry_name] : EnumNames<E>::table)
    if (entry_name == name) return entry;
  return std::nullopt;
}

// Every name, in table order (for "expected one of ..." and did-you-mean suggestions).
template <class E>
std::vector<std::string_view> enum_names() {
  std::vector<std::string_view> names;
  names.reserve(EnumNames<E>::table.size());
  for (const auto& entry : EnumNames<E>::table) names.push_back(entry.second);
  return names;
}

}  // namespace qsweep
