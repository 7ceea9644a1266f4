#pragma once
// Exact arithmetic on the numbers a model is made of: every double is m 2^e with an integer m,
// and sums and products of such numbers stay of that form (dyadic rationals). Used where
// floating point cannot decide a comparison (stability within rounding of the boundary).
// GCC 12 with -O2 and the sanitizers reports cpp_int's limb storage as maybe-uninitialized (a
// false positive inside Boost, where the limbs are written before they are read).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/multiprecision/cpp_int.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <cmath>
#include <cstdint>
#include <vector>

namespace qsweep::model::detail {

using BigInt = boost::multiprecision::cpp_int;

class Dyadic {
 public:
  Dyadic() = default;
  Dyadic(BigInt mantissa, long exponent) : m_(std::move(mantissa)), e_(exponent) {}
  static Dyadic of(std::int64_t x) { return {BigInt(x), 0}; }
  static Dyadic of_integer(const BigInt& x) { return {x, 0}; }
  // Exact value of a finite double.
  static Dyadic of(double x) {
    if (x == 0.0) return {};
    int exponent = 0;
    const double fraction = std::frexp(x, &exponent);  // |fraction| in [0.5, 1)
    return {BigInt(static_cast<std::int64_t>(std::ldexp(fraction, 53))), exponent - 53L};
  }

  friend Dyadic operator+(const Dyadic& a, const Dyadic& b) {
    if (a.m_.is_zero()) return b;
    if (b.m_.is_zero()) return a;
    if (a.e_ <= b.e_) return {a.m_ + (b.m_ << static_cast<unsigned>(b.e_ - a.e_)), a.e_};
    return {(a.m_ << static_cast<unsigned>(a.e_ - b.e_)) + b.m_, b.e_};
  }
  friend Dyadic operator-(const Dyadic& a, const Dyadic& b) { return a + Dyadic(-b.m_, b.e_); }
  friend Dyadic operator*(const Dyadic& a, const Dyadic& b) { return {a.m_ * b.m_, a.e_ + b.e_}; }
  Dyadic& operator+=(const Dyadic& b) { return *this = *this + b; }

  int sign() const { return m_.sign(); }
  const BigInt& mantissa() const { return m_; }
  long exponent() const { return e_; }

  // The nearest double, or close to it; its sign is the exact sign (0 only for 0).
  double to_double() const {
    if (m_.is_zero()) return 0.0;
    const long bits = static_cast<long>(boost::multiprecision::msb(abs(m_))) + 1;
    const long drop = bits > 62 ? bits - 62 : 0;
    const BigInt top = m_ >> static_cast<unsigned>(drop);  // keeps 62 bits and the sign
    const double value = std::ldexp(top.convert_to<double>(), static_cast<int>(drop + e_));
    return value != 0.0 ? value : std::copysign(0x1p-1074, static_cast<double>(m_.sign()));
  }

 private:
  BigInt m_;
  long e_ = 0;
};

// The values of non-negative dyadics as integers times one common power of two (which is
// positive, so comparisons of the integers are comparisons of the values).
inline std::vector<BigInt> common_integers(const std::vector<Dyadic>& values) {
  long lowest = 0;
  bool any = false;
  for (const Dyadic& v : values)
    if (v.sign() != 0) {
      lowest = any ? std::min(lowest, v.exponent()) : v.exponent();
      any = true;
    }
  std::vector<BigInt> out;
  out.reserve(values.size());
  for (const Dyadic& v : values)
    out.push_back(v.sign() == 0 ? BigInt(0)
                                : v.mantissa() << static_cast<unsigned>(v.exponent() - lowest));
  return out;
}

}  // namespace qsweep::model::detail
