#pragma once
// The general engine's lattice and its per-union kernels (src/exact/general.cpp has the
// recursion and its notation), shared by the single-rank engine and the distributed one
// (src/exact_mpi/general.cpp), so that both compute every union the same way. A kernel works on
// a slice of the lattice: `cell[B - base]` is the cell of union B, and it is given the types
// whose pushes land in that slice (all types for the single-rank engine).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/speed_sums.hpp"
#include "qsweep/model/family.hpp"

namespace qsweep::exact::detail {

// A server set, bit n = server n. 64 bits: the distributed engine (exact_mpi) goes past N = 31;
// on x86-64 the 64-bit operations and indices cost the single-rank engine nothing measurable
// (docs/exact.md, "64-bit masks").
using Mask = std::uint64_t;

// Which types lie inside a server set B, 64 types to a word: a type is not inside B iff it holds
// a server outside B, so the outside types are the union, over the servers not in B, of the types
// that hold them, read from two half tables as in SpeedSums (the servers 0..N/2-1 and the rest).
// Built for at most kMaxTableTypes types (the tables take 8 (2^(N/2) + 2^(N - N/2)) bytes per
// word: 512 KiB per word at N = 30); beyond, the types are compared one by one.
inline constexpr std::size_t kMaxTableTypes = 256;

class InsideTypes {
 public:
  InsideTypes(const std::vector<Mask>& mask, int N);
  bool tabled() const { return !low_.empty(); }
  // The types 64 w .. 64 w + 63 inside B as bits (requires tabled()).
  std::uint64_t inside(Mask B, std::size_t w) const {
    const std::uint64_t valid =
        types_ - 64 * w >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (types_ - 64 * w)) - 1;
    const std::size_t out_low = ~B & (low_size_ - 1);
    const std::size_t out_high = (~B >> low_bits_) & (high_size_ - 1);
    return ~(low_[w * low_size_ + out_low] | high_[w * high_size_ + out_high]) & valid;
  }

 private:
  std::size_t types_, words_;
  int low_bits_;
  std::size_t low_size_, high_size_;
  std::vector<std::uint64_t> low_, high_;
};

struct Lattice {
  // types: masks over servers 0..speeds.size()-1; total_rate = N * lambda.
  Lattice(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
          double total_rate);
  int N = 0;
  std::uint64_t size = 0;  // 2^N
  std::vector<Mask> mask;  // per type
  std::vector<double> rate;
  SpeedSums mu;
  InsideTypes inside;
  // first_lam[m] = the rates of the types t < kFirstTypes with bit t of m set, summed in type
  // order from 0: the start of every lam(B), looked up instead of added (inside_rate).
  static constexpr std::size_t kFirstTypes = 12;
  std::vector<double> first_lam;
};

std::vector<int> members(Mask set);

// Arrival rate of the types inside B, summed in type order. The types inside B come as the bits
// of a word (InsideTypes); the first kFirstTypes are looked up (Lattice::first_lam) and only the
// others inside B are added: the same sums as adding 0 for every other type (x + 0 = x), but a
// short dependency chain and no branch per type (the forward pass waits on this sum before it
// can push B). Inline: as a call it took a third of the engine's time beyond the skeleton.
inline double inside_rate(const Lattice& lat, Mask B) {
  double lam = 0.0;
  const std::size_t T = lat.mask.size();
  for (std::size_t first = 0, w = 0; first < T; first += 64, ++w) {
    std::uint64_t inside = 0;
    if (lat.inside.tabled()) {
      inside = lat.inside.inside(B, w);
    } else {
      const std::size_t count = std::min<std::size_t>(64, T - first);
      const Mask* mask = lat.mask.data() + first;
      for (std::size_t t = 0; t < count; ++t)
        inside |= static_cast<std::uint64_t>((mask[t] & ~B) == 0) << t;
    }
    if (first == 0) {
      lam = lat.first_lam[inside & (lat.first_lam.size() - 1)];
      inside &= ~(lat.first_lam.size() - 1);
    }
    for (; inside != 0; inside &= inside - 1)
      lam += lat.rate[first + static_cast<std::size_t>(std::countr_zero(inside))];
  }
  return lam;
}

// G(B) and G1(B) side by side: one cache line per scattered access instead of two (the passes
// are bound by the latency of these accesses: 1.5x faster means at N = 24).
// Going back, H(B) overwrites G1(B).
struct Cell {
  double g, g1_or_h;
};
static_assert(sizeof(Cell) == 2 * sizeof(double));

// Forward: G(B) and G1(B) from the sums pushed into B (`pushed`). False, with
// out.violating_set and out.slack set, if d(B) <= 0; else updates out.condition.
inline bool forward_union(const Lattice& lat, Mask B, const Cell& pushed, Cell& value,
                          Moments& out) {
  const double lam = inside_rate(lat, B);
  const double mu = lat.mu(B);
  const double d = mu - lam;
  if (!(d > 0.0)) {
    out.violating_set = members(B);
    out.slack = d;
    return false;
  }
  if (mu + lam > out.condition * d) out.condition = (mu + lam) / d;
  value.g = pushed.g / d;
  value.g1_or_h = (lam * value.g + pushed.g1_or_h) / d;
  return true;
}

// Forward push of union B (values g, g1) along `count` types: cell[(B | mask) - base].
inline void push_union(Cell* cell, Mask base, Mask B, double g, double g1, const Mask* mask,
                       const double* rate, std::size_t count) {
  const double both = g + g1;
  for (std::size_t t = 0; t < count; ++t) {
    const Mask target = (B | mask[t]) - base;
    cell[target].g += rate[t] * g;
    cell[target].g1_or_h += rate[t] * both;
  }
}

// Backward over `count` types whose targets B | mask lie in the slice: h_next[t] = H(B | t), 0
// for the types inside B; lam += rate of the types inside B; s += rate_t H(B | t). Without a
// branch: which types are inside changes at random from one union to the next, and mispredicted
// branches here cost more than the loads (cell[B] itself is read and dropped for the types
// inside). lam alongside, also without a branch (rate_t or 0 for every type): a second chain of
// additions beside that of s. The single-rank engine, which has every type of B at once, computes
// the same sums with fewer operations per type (src/exact/general.cpp, solve_means).
inline void backward_terms(const Cell* cell, Mask base, Mask B, const Mask* mask,
                           const double* rate, std::size_t count, double* h_next, double& lam,
                           double& s) {
  for (std::size_t t = 0; t < count; ++t) {
    const Mask target = B | mask[t];
    const std::uint64_t keep = -static_cast<std::uint64_t>(target != B);
    h_next[t] =
        std::bit_cast<double>(std::bit_cast<std::uint64_t>(cell[target - base].g1_or_h) & keep);
    lam += std::bit_cast<double>(std::bit_cast<std::uint64_t>(rate[t]) & ~keep);
    s += rate[t] * h_next[t];
  }
}

// Backward: H(B) from lam(B) and s(B) (H(B) d(B) = 1 + s(B)); f2_part += G1(B) (K(B) - 1).
inline double backward_union(const Lattice& lat, Mask B, double lam, double s, double g1,
                             double& f2_part) {
  const double h = (1.0 + s) / (lat.mu(B) - lam);
  f2_part += g1 * (lam * h + s);
  return h;
}

// Results of the means from the global sums f = sum G, f1 = sum G1, f2 = sum G1 (K - 1) and the
// per-type sums (each times rate_t / f is E[Q_t]). Throws InputError when f or f2 is not finite.
void finish_means(const Lattice& lat, double f, double f1, double f2,
                  const std::vector<double>& type_sums, Moments& out);

}  // namespace qsweep::exact::detail
