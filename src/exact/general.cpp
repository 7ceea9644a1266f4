// General exact engine: the union-lattice recursion on dense arrays indexed by the server-set
// bitmask (docs/exact.md, "General engine: the union lattice", has the derivations).
//
// Notation: L = N * lambda, rate_t = L p_t, lam(B) = sum of rate_t over types t inside B,
// d(B) = mu(B) - lam(B) > 0 (stability). For a union B:
//   G(B)  = total weight (eq. 3 without C) of the job sequences whose final union is B,
//   G1(B) = the same weighted by the number of jobs,
//   H(B)  = K(B) / mu(B), K(B) = total weight of the continuations of a sequence with union B.
// Forward, in increasing mask order (every strict subset of B is a smaller number):
//   G(B)  d(B) = sum_{B' != B, t: B' | t = B} rate_t G(B')
//   G1(B) d(B) = lam(B) G(B) + sum_{B' != B, t: B' | t = B} rate_t (G(B') + G1(B'))
// Backward, in decreasing mask order:
//   H(B) d(B) = 1 + s(B),  s(B) = sum_{t not in B} rate_t H(B | t).
// Then with f = sum_B G(B) = 1 / C:
//   E[Q] f = sum_B G1(B),  E[Q(Q-1)] f / 2 = sum_B G1(B) (K(B) - 1),  K(B) - 1 = lam H(B) + s(B),
//   E[Q_t] f = rate_t sum_B G(B) H(B | t)   (all types in the same backward pass).
// Every term is positive; the only subtractions are d(B) (the input's own stability slack) and
// the final Var = E[Q(Q-1)] + E[Q] - E[Q]^2, which loses log10(E[Q]^2 / Var) digits (about 1 for
// the N this engine reaches: Q is never concentrated).
//
// The distribution P(Q = q), q <= qmax, is a second pass that carries the weights of sequences of
// exactly k jobs per union from k to k + 1 (two arrays, rescaled every step).
//
// Memory: two doubles per server set, 2^(N+4) bytes (N = 24: 256 MiB, N = 28: 4 GiB,
// N = 30: 16 GiB, the limit kMaxGeneralServers), one block that both passes use, in huge pages
// where the kernel allows (include/qsweep/exact/lattice_array.hpp). Time: O(2^N * #types) per pass;
// the distribution costs qmax such passes over the unions reachable so far.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/general_lattice.hpp"
#include "qsweep/exact/lattice_array.hpp"  // ZeroedMemory
#include "qsweep/exact/summation.hpp"

namespace qsweep::exact::detail {

InsideTypes::InsideTypes(const std::vector<Mask>& mask, int N)
    : types_(mask.size()),
      words_((mask.size() + 63) / 64),
      low_bits_(N / 2),
      low_size_(std::size_t{1} << (N / 2)),
      high_size_(std::size_t{1} << (N - N / 2)) {
  if (types_ > kMaxTableTypes) return;
  low_.assign(words_ * low_size_, 0);
  high_.assign(words_ * high_size_, 0);
  for (std::size_t w = 0; w < words_; ++w) {
    auto holders = [&](int server) {  // the types of word w that hold `server`
      std::uint64_t bits = 0;
      for (std::size_t t = 64 * w; t < std::min(types_, 64 * w + 64); ++t)
        if ((mask[t] >> server) & 1U) bits |= std::uint64_t{1} << (t - 64 * w);
      return bits;
    };
    for (std::size_t s = 1; s < low_size_; ++s)
      low_[w * low_size_ + s] = low_[w * low_size_ + (s & (s - 1))] | holders(std::countr_zero(s));
    for (std::size_t s = 1; s < high_size_; ++s)
      high_[w * high_size_ + s] =
          high_[w * high_size_ + (s & (s - 1))] | holders(low_bits_ + std::countr_zero(s));
  }
}

namespace {

std::vector<Mask> type_masks(const std::vector<model::JobType>& types) {
  std::vector<Mask> mask(types.size());
  for (std::size_t t = 0; t < types.size(); ++t) mask[t] = static_cast<Mask>(types[t].servers);
  return mask;
}

std::vector<double> type_rates(const std::vector<model::JobType>& types, double total_rate) {
  std::vector<double> rate(types.size());
  for (std::size_t t = 0; t < types.size(); ++t) rate[t] = total_rate * types[t].p;
  return rate;
}

}  // namespace

Lattice::Lattice(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
                 double total_rate)
    : N(static_cast<int>(speeds.size())),
      size(std::uint64_t{1} << speeds.size()),
      mask(type_masks(types)),
      rate(type_rates(types, total_rate)),
      mu(speeds),
      inside(mask, N) {
  first_lam.assign(std::size_t{1} << std::min(kFirstTypes, mask.size()), 0.0);
  for (std::size_t m = 1; m < first_lam.size(); ++m) {
    for (std::size_t t = 0; t < kFirstTypes; ++t)
      if ((m >> t) & 1U) first_lam[m] += rate[t];
  }
}

std::vector<int> members(Mask set) {
  std::vector<int> out;
  for (int n = 0; set != 0; ++n, set >>= 1) {
    if (set & 1U) out.push_back(n);
  }
  return out;
}

void finish_means(const Lattice& lat, double f, double f1, double f2,
                  const std::vector<double>& type_sums, Moments& out) {
  // Plain doubles hold 1/C up to 1e308; only N >= 26 with every subsystem within 1e-12 of
  // overload gets beyond (the symmetric engines work with logarithms instead).
  if (!std::isfinite(f) || !std::isfinite(f2))
    throw InputError(
        fmt::format("exact: P(Q = 0) is below 1e-308 for this N = {} system, out of the "
                    "general engine's double range; use a load further from overload",
                    lat.N));
  out.log_f = std::log(f);
  out.EQ = f1 / f;
  const double factorial_moment = 2.0 * f2 / f;  // E[Q(Q-1)]
  out.VarQ = factorial_moment - out.EQ * (out.EQ - 1.0);
  out.EQ_type.resize(type_sums.size());
  for (std::size_t t = 0; t < type_sums.size(); ++t)
    out.EQ_type[t] = lat.rate[t] * type_sums[t] / f;
}

namespace {

// Block length for the two-level sums over all masks (plain partial sums inside a block,
// compensated sums across blocks).
constexpr std::uint64_t kBlock = 4096;
// Tile length of the distribution pass.
constexpr std::uint64_t kTile = 16384;

// Backward pass of solve_means: H(B) replaces G1(B) once G1(B) has been used (supersets are done
// before B); f2 += G1(B) (K(B) - 1), type_sum[t] += G(B) H(B | t). Always inline, so that each
// caller below compiles it for its own instruction set.
[[gnu::always_inline]] inline void backward_body(const Lattice& lat, bool per_type, Cell* cell,
                                                 CompensatedSum& f2,
                                                 std::vector<CompensatedSum>& type_sum) {
  const std::size_t T = lat.mask.size();
  const Mask* mask = lat.mask.data();
  const double* rate = lat.rate.data();
  std::vector<double> type_part(per_type ? T : 0);
  // Per-type terms of a union are added one union later (its H is then known long before), so
  // that they do not wait on its division: the same additions in the same order.
  std::vector<double> h_next(T), h_last(T);
  double g_last = 0.0, h_last_union = 0.0;
  bool last_pending = false;
  auto add_last = [&] {  // h_last is 0 exactly for the types inside that union (H > 0 elsewhere)
    for (std::size_t t = 0; t < T; ++t)
      type_part[t] += g_last * (h_last[t] == 0.0 ? h_last_union : h_last[t]);
    last_pending = false;
  };
  for (std::uint64_t end = lat.size; end > 0; end -= std::min(end, kBlock)) {
    const std::uint64_t begin = end - std::min(end, kBlock);
    double f2_part = 0.0;
    std::fill(type_part.begin(), type_part.end(), 0.0);
    for (std::uint64_t b = end; b-- > std::max<std::uint64_t>(begin, 1);) {
      const auto B = static_cast<Mask>(b);
      const double g = cell[B].g;
      if (g == 0.0) continue;
      const double lam = inside_rate(lat, B);
      const double g1 = cell[B].g1_or_h;
      cell[B].g1_or_h = 0.0;  // the types inside B read 0 from B itself: s += rate_t * 0
      double s = 0.0;
      if (per_type) {
        for (std::size_t t = 0; t < T; ++t) {
          h_next[t] = cell[B | mask[t]].g1_or_h;
          s += rate[t] * h_next[t];
        }
        if (last_pending) add_last();
      } else {
        for (std::size_t t = 0; t < T; ++t) s += rate[t] * cell[B | mask[t]].g1_or_h;
      }
      const double h = backward_union(lat, B, lam, s, g1, f2_part);
      cell[B].g1_or_h = h;
      if (per_type) {
        std::swap(h_next, h_last);
        g_last = g;
        h_last_union = h;
        last_pending = true;
      }
    }
    if (last_pending) add_last();
    if (per_type && begin == 0) {  // the empty union: G = 1, every type starts a new union
      for (std::size_t t = 0; t < T; ++t) type_part[t] += cell[lat.mask[t]].g1_or_h;
    }
    f2.add(f2_part);
    for (std::size_t t = 0; t < type_part.size(); ++t) type_sum[t].add(type_part[t]);
  }
}

void backward_baseline(const Lattice& lat, bool per_type, Cell* cell, CompensatedSum& f2,
                       std::vector<CompensatedSum>& type_sum) {
  backward_body(lat, per_type, cell, f2, type_sum);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same with AVX2 where the CPU has it, chosen once per pass: the per-type terms (add_last)
// take 4 doubles per instruction instead of SSE2's 2. Without FMA (not implied by "avx2", and
// this file is built with -ffp-contract=off) and without reassociation: the same doubles.
[[gnu::target("avx2")]] void backward_avx2(const Lattice& lat, bool per_type, Cell* cell,
                                           CompensatedSum& f2,
                                           std::vector<CompensatedSum>& type_sum) {
  backward_body(lat, per_type, cell, f2, type_sum);
}

void backward(const Lattice& lat, bool per_type, Cell* cell, CompensatedSum& f2,
              std::vector<CompensatedSum>& type_sum, bool wide_vectors) {
  if (wide_vectors && __builtin_cpu_supports("avx2")) {
    backward_avx2(lat, per_type, cell, f2, type_sum);
  } else {
    backward_baseline(lat, per_type, cell, f2, type_sum);
  }
}
#else
void backward(const Lattice& lat, bool per_type, Cell* cell, CompensatedSum& f2,
              std::vector<CompensatedSum>& type_sum, bool /*wide_vectors*/) {
  backward_baseline(lat, per_type, cell, f2, type_sum);
}
#endif

// Forward and backward passes: C, E[Q], Var[Q], E[Q_t]. `cell` holds lat.size zeros.
void solve_means(const Lattice& lat, bool per_type, bool wide_vectors, Cell* cell, Moments& out) {
  const std::size_t T = lat.mask.size();
  const Mask* mask = lat.mask.data();
  const double* rate = lat.rate.data();
  CompensatedSum f, f1;

  // Forward. cell[B] holds the pushed sums until B is reached, then G(B) and G1(B).
  // Pushes of types inside B land on B itself and are overwritten when B is finalised.
  push_union(cell, 0, 0, 1.0, 0.0, mask, rate, T);
  f.add(1.0);
  out.unions = 1;
  for (std::uint64_t block = 0; block < lat.size; block += kBlock) {
    double f_part = 0.0, f1_part = 0.0;
    for (std::uint64_t b = std::max<std::uint64_t>(block, 1);
         b < std::min(block + kBlock, lat.size); ++b) {
      const auto B = static_cast<Mask>(b);
      if (cell[B].g == 0.0) continue;  // not a union of types
      Cell value{};
      if (!forward_union(lat, B, cell[B], value, out)) return;
      push_union(cell, 0, B, value.g, value.g1_or_h, mask, rate, T);
      cell[B] = value;
      f_part += value.g;
      f1_part += value.g1_or_h;
      ++out.unions;
    }
    f.add(f_part);
    f1.add(f1_part);
  }

  CompensatedSum f2;  // E[Q(Q-1)] f / 2
  std::vector<CompensatedSum> type_sum(per_type ? T : 0);
  backward(lat, per_type, cell, f2, type_sum, wide_vectors);

  std::vector<double> type_sums(type_sum.size());
  for (std::size_t t = 0; t < type_sum.size(); ++t) type_sums[t] = type_sum[t].value();
  finish_means(lat, f.value(), f1.value(), f2.value(), type_sums, out);
}

// log_weight[k] = ln of the total weight of sequences of exactly k jobs, k = 0..qmax: weights
// per union are carried from k to k + 1 jobs:
//   W_{k+1}(B) mu(B) = sum_{B', t: B' | t = B} rate_t W_k(B').
// `cur` and `next` hold lat.size zeros each.
void solve_distribution(const Lattice& lat, int qmax, double* cur, double* next, Moments& out) {
  out.log_weight.assign(static_cast<std::size_t>(qmax) + 1, 0.0);
  if (qmax == 0) return;
  const std::size_t T = lat.mask.size();
  // 32-bit sources (N <= kMaxGeneralServers): a tile of them stays in half the cache lines.
  static_assert(kMaxGeneralServers <= 32);
  std::vector<std::uint32_t> source(kTile);
  std::vector<double> weight(kTile);
  cur[0] = 1.0;
  double log_scale = 0.0;  // stored weights are true weights times e^-log_scale
  double carry = 1.0;      // rescales the previous step's weights to a maximum of 1
  for (int k = 1; k <= qmax; ++k) {
    // Tiled, types outermost inside a tile: the targets b | mask of one type then move through
    // next[] in increasing order, which the caches follow better than one scattered stream per
    // type (20-30% less CPU time at N = 20..24 than the plain double loop).
    for (std::uint64_t tile = 0; tile < lat.size; tile += kTile) {
      std::size_t count = 0;
      for (std::uint64_t b = tile; b < std::min(tile + kTile, lat.size); ++b) {
        if (cur[b] == 0.0) continue;
        source[count] = static_cast<std::uint32_t>(b);
        weight[count++] = cur[b] * carry;
        cur[b] = 0.0;
      }
      for (std::size_t t = 0; t < T; ++t) {
        const Mask m = lat.mask[t];
        const double r = lat.rate[t];
        for (std::size_t i = 0; i < count; ++i) next[source[i] | m] += r * weight[i];
      }
    }
    CompensatedSum sum;
    double largest = 0.0;
    for (std::uint64_t block = 0; block < lat.size; block += kBlock) {
      double part = 0.0;
      for (std::uint64_t b = block; b < std::min(block + kBlock, lat.size); ++b) {
        if (next[b] == 0.0) continue;
        const double w = next[b] / lat.mu(static_cast<Mask>(b));
        next[b] = w;
        part += w;
        largest = std::max(largest, w);
      }
      sum.add(part);
    }
    out.log_weight[static_cast<std::size_t>(k)] = log_scale + std::log(sum.value());
    carry = 1.0 / largest;
    log_scale += std::log(largest);
    std::swap(cur, next);
  }
}

Moments run_general(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
                    double total_rate, int qmax, bool per_type, bool wide_vectors) {
  const Lattice lat(types, speeds, total_rate);
  Moments out;
  // One block of 2^(N+4) bytes for both passes: zero-filled by the kernel (in huge pages where
  // it can, include/qsweep/exact/lattice_array.hpp) for the means, then zeroed again and reused
  // as the distribution's two arrays, so that the distribution pays no second round of page
  // faults.
  ZeroedMemory memory(lat.size * sizeof(Cell));
  solve_means(lat, per_type, wide_vectors, static_cast<Cell*>(memory.data()), out);
  if (out.violating_set.empty()) {
    auto* cur = static_cast<double*>(memory.data());
    if (qmax > 0) std::fill(cur, cur + 2 * lat.size, 0.0);
    solve_distribution(lat, qmax, cur, cur + lat.size, out);
  }
  keep_zeroed_block(std::move(memory));  // for the next task, where the run layer keeps blocks
  return out;
}

}  // namespace

Moments general_engine(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
                       double total_rate, int qmax, bool per_type) {
  return run_general(types, speeds, total_rate, qmax, per_type, true);
}

Moments general_engine_baseline_vectors(const std::vector<model::JobType>& types,
                                        const std::vector<double>& speeds, double total_rate,
                                        int qmax, bool per_type) {
  return run_general(types, speeds, total_rate, qmax, per_type, false);
}

}  // namespace qsweep::exact::detail
