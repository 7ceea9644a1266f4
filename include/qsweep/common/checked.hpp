#pragma once
// Integer arithmetic on user input that reports overflow instead of wrapping (a sum of
// initial_counts or a product of sweep lengths must never come out small by accident).
#include <cstdint>
#include <optional>

namespace qsweep {

// a + b and a * b, or nullopt if the result does not fit in T.
template <class T>
std::optional<T> checked_add(T a, T b) {
  T out{};
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <class T>
std::optional<T> checked_mul(T a, T b) {
  T out{};
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

}  // namespace qsweep
