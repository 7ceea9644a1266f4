#pragma once
// A results cell as JSON (eval --json, plan --tasks --json): NaN becomes null.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "qsweep/sweep/columns.hpp"

namespace qsweep::local {

inline nlohmann::ordered_json cell_json(const CellValue& cell) {
  // NaN (not applicable / not computed) becomes null.
  auto number = [](double x) {
    return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json();
  };
  return std::visit(
      [&](const auto& v) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          return number(v);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          nlohmann::ordered_json list = nlohmann::ordered_json::array();
          for (double x : v) list.push_back(number(x));
          return list;
        } else if constexpr (std::is_same_v<T, Repeated>) {
          nlohmann::ordered_json list = nlohmann::ordered_json::array();
          for (std::uint64_t k = 0; k < v.count; ++k) list.push_back(number(v.value));
          return list;
        } else {
          return v;
        }
      },
      cell);
}

}  // namespace qsweep::local
