#pragma once
// Exp(1) variates by the ziggurat method (Marsaglia and Tsang 2000, 256 layers): one 64-bit draw
// and no logarithm in about 98.9% of the calls, against a log per call for inversion. Most
// kernels draw one per event, so this is a large share of their cost (docs/sim.md).
#include <cmath>
#include <cstdint>

#include "qsweep/common/rng.hpp"

namespace qsweep::sim {

class ExponentialZiggurat {
 public:
  static const ExponentialZiggurat& instance() {
    static const ExponentialZiggurat tables;
    return tables;
  }

  double operator()(Rng& rng) const {
    const std::uint64_t u = rng.next_u64();
    const auto i = static_cast<std::size_t>(u & 0xFF);          // layer: low 8 bits
    const double j = static_cast<double>(u >> 11) * 0x1.0p-53;  // position: top 53 bits
    if (j < ratio_[i]) return j * width_[i];  // inside the rectangle under layer i + 1
    return outside_rectangle(rng, i, j * width_[i]);
  }

 private:
  // The rare cases, out of line so that the common one above inlines into the kernels: the tail
  // beyond R is R + Exp(1); in a wedge between rectangles, accept under the density or start over.
  [[gnu::noinline]] double outside_rectangle(Rng& rng, std::size_t i, double x) const {
    if (i == 0) return kR - std::log(rng.uniform_pos());
    const double y = height_[i] + rng.uniform() * (height_[i + 1] - height_[i]);
    return y < std::exp(-x) ? x : (*this)(rng);
  }

  static constexpr double kR = 7.69711747013104972;          // right edge of the base layer
  static constexpr double kArea = 0.0039496598225815571993;  // area of every layer
  ExponentialZiggurat() {
    // Layer i has width_[i] (its right edge x_i) and lies between heights exp(-x_i) and
    // exp(-x_{i+1}); the base layer 0 has the pseudo-width area / f(R) and holds the tail.
    width_[0] = kArea / std::exp(-kR);
    width_[1] = kR;
    for (int i = 2; i < 256; ++i)
      width_[i] = -std::log(kArea / width_[i - 1] + std::exp(-width_[i - 1]));
    width_[256] = 0.0;
    for (int i = 0; i < 256; ++i) ratio_[i] = width_[i + 1] / width_[i];
    for (int i = 0; i <= 256; ++i) height_[i] = std::exp(-width_[i]);
  }
  double width_[257], ratio_[256], height_[257];
};

inline double standard_exponential(Rng& rng) { return ExponentialZiggurat::instance()(rng); }

}  // namespace qsweep::sim
