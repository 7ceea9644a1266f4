#pragma once
// Speeds of server sets for the lattice engines (general.cpp, cancel_on_start.cpp).
#include <bit>
#include <cstdint>
#include <vector>

namespace qsweep::exact::detail {

// mu(B) from two half tables: mu(B) = low[B & low_mask] + high[B >> low_bits].
class SpeedSums {
 public:
  explicit SpeedSums(const std::vector<double>& speeds) {
    const int n = static_cast<int>(speeds.size());
    low_bits_ = n / 2;
    low_ = subset_sums(speeds, 0, low_bits_);
    high_ = subset_sums(speeds, low_bits_, n - low_bits_);
  }
  double operator()(std::uint64_t set) const {
    return low_[set & ((std::uint64_t{1} << low_bits_) - 1)] + high_[set >> low_bits_];
  }

 private:
  static std::vector<double> subset_sums(const std::vector<double>& speeds, int first, int count) {
    std::vector<double> sums(std::size_t{1} << count, 0.0);
    for (std::size_t s = 1; s < sums.size(); ++s) {
      const auto server =
          static_cast<std::size_t>(first) + static_cast<std::size_t>(std::countr_zero(s));
      sums[s] = sums[s & (s - 1)] + speeds[server];
    }
    return sums;
  }
  int low_bits_ = 0;
  std::vector<double> low_, high_;
};

}  // namespace qsweep::exact::detail
