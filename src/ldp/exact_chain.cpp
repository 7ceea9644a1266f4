// Exact p = P(E_j^n(T)) from the lumped chain (number of queues of each length below j),
// uniformized: p = sum_k f_k G(k), f_k = probability that the chain first makes a queue of
// length j at step k, G(k) = P(Poisson(n (1 + lambda) T) >= k).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "estimators.hpp"
#include "qsweep/ldp/poisson.hpp"

namespace qsweep::ldp::detail {

namespace {

// Flush-to-zero and denormals-are-zero while the chain runs: far-tail masses would otherwise be
// computed in slow denormal arithmetic. Each flush drops less than DBL_MIN, which the bounds
// account for.
class FlushDenormals {
 public:
#if defined(__SSE__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

// The states are the occupancies (c_0, ..., c_{J-1}) of n queues (J = j), stored by their free
// coordinates: every c_k but c_1 (= n - the others). The last free coordinate is the "inner"
// one; the states sharing the others (a row) are contiguous, rows in lexicographic order, so a
// state's index is a sum of binomials (simplex ranking). Along a row every count is linear in
// the inner coordinate x, so each kind of transition of a row is one loop
// target[x] += (alpha + beta x) * source[x] (a Move), prepared once.
class LumpedChain {
 public:
  explicit LumpedChain(const Options& o)
      : policy_(o.policy), d_(o.policy_d), n_(o.n), J_(o.j), m_(o.j - 1),
        inner_level_(o.j == 2 ? 0 : o.j - 1),
        arrival_(o.lambda / (1 + o.lambda)),
        per_server_(1 / (static_cast<double>(o.n) * (1 + o.lambda))) {
    for (int level = 0; level < J_; ++level)
      if (level != 1 && level != inner_level_) outer_levels_.push_back(level);
    // binomial_[b][a] = C(a, b) for b <= m, a <= n + m + 1
    const auto top = static_cast<std::size_t>(n_ + m_ + 2);
    binomial_.assign(static_cast<std::size_t>(m_) + 1, std::vector<std::int64_t>(top, 0));
    for (std::size_t a = 0; a < top; ++a) {
      binomial_[0][a] = 1;
      for (std::size_t b = 1; b <= static_cast<std::size_t>(m_) && b <= a; ++b)
        binomial_[b][a] = binomial_[b - 1][a - 1] + (b < a ? binomial_[b][a - 1] : 0);
    }
    states_ = binomial(n_ + m_, m_);
    build_rows();
  }

  std::int64_t states() const { return states_; }

  std::int64_t index_of(const std::vector<std::int64_t>& counts) const {
    std::vector<std::int64_t> outer;
    for (int level : outer_levels_) outer.push_back(count_at(counts, level));
    return row_base(outer) + count_at(counts, inner_level_);
  }

  // next = current moved by one step over the non-absorbed states; returns the absorbed mass.
  // Target rows are filled one at a time from their incoming moves, whose source rows are few
  // and neighbouring, so both stay in cache.
  double step(const std::vector<double>& current, std::vector<double>& next) const {
    for (const Row& row : rows_) {
      double* target = next.data() + row.base;
      std::fill(target, target + row.remaining + 1, 0.0);
      for (std::size_t i = row.first_incoming; i < row.last_incoming; ++i) apply(moves_[i], current, next);
    }
    double absorbed = 0.0;
    for (const Move& move : absorbing_moves_) absorbed += apply(move, current, next);
    if (policy_ == Policy::power_of_d)
      for (const Row& row : rows_) absorbed += route_power_of_d(row, current, next);
    return absorbed;
  }

  // An upper bound on the mass still to be absorbed after step k, weighted by the clock:
  // sum_s v(s) G(k + D(s)), where D(s) is a lower bound on the steps from s to absorption.
  double remaining_bound(const std::vector<double>& v, std::int64_t k, double mu) const {
    std::vector<double> mass_by_distance(static_cast<std::size_t>((J_ - 1) * n_ + 2), 0.0);
    for (const Row& row : rows_) {
      std::vector<std::int64_t> c = row.counts;
      for (std::int64_t x = 0; x <= row.remaining; ++x) {
        const double value = v[static_cast<std::size_t>(row.base + x)];
        if (value == 0.0) continue;
        set_varying_counts(row, x, c);
        mass_by_distance[static_cast<std::size_t>(min_steps_to_absorb(c))] += value;
      }
    }
    double bound = 0.0;
    for (std::size_t distance = 1; distance < mass_by_distance.size(); ++distance)
      if (mass_by_distance[distance] > 0.0)
        bound += mass_by_distance[distance] *
                 std::exp(log_poisson_tail(k + static_cast<std::int64_t>(distance), mu));
    return bound;
  }

 private:
  static constexpr std::int64_t absorbing = std::numeric_limits<std::int64_t>::min() + 1;
  static constexpr std::int64_t impossible = std::numeric_limits<std::int64_t>::min();

  // For x in [first, last]: next[target + x] += (alpha + beta x) current[source + x], where
  // source is the row's base; target = `absorbing` sums the terms instead.
  struct Move {
    std::int64_t source;
    std::int64_t target;
    double alpha, beta;
    std::int64_t first, last;
  };

  // Applies a move; returns the mass it absorbs.
  static double apply(const Move& move, const std::vector<double>& current, std::vector<double>& next) {
    // an int counter and no loop-carried double: lets the compiler vectorize
    const int length = static_cast<int>(move.last - move.first + 1);
    const double* from = current.data() + move.source + move.first;
    const double start = move.alpha + move.beta * static_cast<double>(move.first);
    if (move.target == absorbing) {
      double absorbed = 0.0;
      for (int k = 0; k < length; ++k) absorbed += (start + move.beta * static_cast<double>(k)) * from[k];
      return absorbed;
    }
    double* to = next.data() + move.target + move.first;
    for (int k = 0; k < length; ++k) to[k] += (start + move.beta * static_cast<double>(k)) * from[k];
    return 0.0;
  }

  struct Row {
    std::vector<std::int64_t> counts;  // c_k for every length; the outer ones are fixed
    std::int64_t base = 0;             // index of the row's first state (inner coordinate 0)
    std::int64_t remaining = 0;        // n minus the outer counts = c_inner + c_1
    std::vector<std::int64_t> up;      // up[a]: index of (state moved a -> a+1) minus x
    std::vector<std::int64_t> down;    // down[a]: the same for a -> a-1
    std::size_t first_incoming = 0, last_incoming = 0;  // moves_ that land in this row
  };

  static std::int64_t count_at(const std::vector<std::int64_t>& counts, int level) {
    return static_cast<std::size_t>(level) < counts.size() ? counts[static_cast<std::size_t>(level)] : 0;
  }

  std::int64_t binomial(std::int64_t a, int b) const {
    return a < 0 ? 0 : binomial_[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)];
  }

  // c_inner = x and c_1 = remaining - x; the rest is the row's.
  void set_varying_counts(const Row& row, std::int64_t x, std::vector<std::int64_t>& c) const {
    c[static_cast<std::size_t>(inner_level_)] = x;
    c[1] = row.remaining - x;
  }

  // Index of the state with these outer coordinates and inner coordinate 0. Vectors of dim
  // dims with sum <= r number C(r + dims, dims); those with a first coordinate below x number
  // C(r + dims + 1, dims + 1) - C(r - x + dims + 1, dims + 1).
  std::int64_t row_base(const std::vector<std::int64_t>& outer) const {
    std::int64_t index = 0;
    std::int64_t r = n_;
    for (std::size_t i = 0; i < outer.size(); ++i) {
      const int dims = m_ - 1 - static_cast<int>(i);
      index += binomial(r + dims + 1, dims + 1) - binomial(r - outer[i] + dims + 1, dims + 1);
      r -= outer[i];
    }
    return index;
  }

  // Offset such that (offset + x) indexes the state reached by moving one queue from length a
  // to length b, or `impossible` if no state of the row can make that move.
  std::int64_t move_offset(const std::vector<std::int64_t>& outer, int a, int b) const {
    if (b == J_) return absorbing;
    std::vector<std::int64_t> moved = outer;
    for (std::size_t i = 0; i < outer_levels_.size(); ++i) {
      if (outer_levels_[i] == a) --moved[i];
      if (outer_levels_[i] == b) ++moved[i];
    }
    std::int64_t sum = 0;
    for (std::int64_t value : moved) {
      if (value < 0) return impossible;
      sum += value;
    }
    if (sum > n_) return impossible;
    return row_base(moved) + (b == inner_level_) - (a == inner_level_);
  }

  // Rows in index order (an odometer over the outer coordinates with sum <= n), each with its
  // moves.
  void build_rows() {
    std::vector<std::int64_t> outer(outer_levels_.size(), 0);
    std::int64_t outer_sum = 0;
    while (true) {
      Row row;
      row.counts.assign(static_cast<std::size_t>(J_), 0);
      for (std::size_t i = 0; i < outer.size(); ++i)
        row.counts[static_cast<std::size_t>(outer_levels_[i])] = outer[i];
      row.remaining = n_ - outer_sum;
      row.base = row_base(outer);
      row.up.assign(static_cast<std::size_t>(J_), impossible);
      row.down.assign(static_cast<std::size_t>(J_), impossible);
      for (int a = 0; a < J_; ++a) {
        row.up[static_cast<std::size_t>(a)] = move_offset(outer, a, a + 1);
        if (a > 0) row.down[static_cast<std::size_t>(a)] = move_offset(outer, a, a - 1);
      }
      add_moves(row);
      rows_.push_back(std::move(row));
      int i = static_cast<int>(outer.size()) - 1;
      for (; i >= 0; --i) {
        ++outer[static_cast<std::size_t>(i)];
        ++outer_sum;
        if (outer_sum <= n_) break;
        outer_sum -= outer[static_cast<std::size_t>(i)];
        outer[static_cast<std::size_t>(i)] = 0;
      }
      if (i < 0) break;
    }
    // Group the moves by target row.
    auto target_row = [&](const Move& move) {
      const auto after = std::upper_bound(rows_.begin(), rows_.end(), move.target + move.first,
                                          [](std::int64_t index, const Row& row) { return index < row.base; });
      return after - rows_.begin() - 1;
    };
    std::vector<Move> landing;
    for (const Move& move : moves_) (move.target == absorbing ? absorbing_moves_ : landing).push_back(move);
    std::stable_sort(landing.begin(), landing.end(),
                     [&](const Move& a, const Move& b) { return target_row(a) < target_row(b); });
    moves_ = std::move(landing);
    std::size_t i = 0;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      rows_[r].first_incoming = i;
      while (i < moves_.size() && target_row(moves_[i]) == static_cast<std::ptrdiff_t>(r)) ++i;
      rows_[r].last_incoming = i;
    }
  }

  // Count of length `level` along the row as alpha + beta x.
  std::pair<double, double> linear_count(const Row& row, int level) const {
    if (level == inner_level_) return {0.0, 1.0};
    if (level == 1) return {static_cast<double>(row.remaining), -1.0};
    return {static_cast<double>(row.counts[static_cast<std::size_t>(level)]), 0.0};
  }

  // Adds `scale` * (count of `level`) to the probability of moving to offset, for x in
  // [first, last] restricted to where that count is positive.
  void add_count_move(const Row& row, std::int64_t offset, int level, double scale,
                      std::int64_t first, std::int64_t last) {
    const auto [alpha, beta] = linear_count(row, level);
    if (beta > 0) first = std::max<std::int64_t>(first, 1);                   // inner: x >= 1
    if (beta < 0) last = std::min<std::int64_t>(last, row.remaining - 1);     // c_1: x < remaining
    if (beta == 0 && alpha == 0) return;
    if (first > last || offset == impossible) return;
    moves_.push_back({row.base, offset, scale * alpha, scale * beta, first, last});
  }

  void add_moves(const Row& row) {
    const std::int64_t r = row.remaining;
    // ends of service (an idle server's clock ring changes nothing)
    add_count_move(row, row.base, 0, per_server_, 0, r);
    for (int a = 1; a < J_; ++a)
      add_count_move(row, row.down[static_cast<std::size_t>(a)], a, per_server_, 0, r);
    if (policy_ == Policy::power_of_d) return;  // its routing is not linear in x
    // Arrivals: the routing changes only where a varying count is 0, at x = 0 or x = r.
    std::vector<std::pair<std::int64_t, std::int64_t>> pieces{{0, 0}};
    if (r >= 2) pieces.emplace_back(1, r - 1);
    if (r >= 1) pieces.emplace_back(r, r);
    std::vector<std::int64_t> c = row.counts;
    for (const auto& [first, last] : pieces) {
      set_varying_counts(row, first, c);
      if (policy_ == Policy::jsq || c[0] > 0) {  // jiq with an idle queue acts as jsq
        int shortest = 0;
        while (c[static_cast<std::size_t>(shortest)] == 0) ++shortest;
        moves_.push_back(
            {row.base, row.up[static_cast<std::size_t>(shortest)], arrival_, 0.0, first, last});
      } else {  // jiq without idle queues: uniform over all queues
        for (int a = 1; a < J_; ++a)
          add_count_move(row, row.up[static_cast<std::size_t>(a)], a,
                         arrival_ / static_cast<double>(n_), first, last);
      }
    }
  }

  // power_of_d arrivals: the shortest of d distinct queues has length >= a with probability
  // C(S_a, d) / C(n, d), S_a = queues of length >= a.
  double route_power_of_d(const Row& row, const std::vector<double>& current,
                          std::vector<double>& next) const {
    const double* source = current.data() + row.base;
    double absorbed = 0.0;
    std::vector<std::int64_t> c = row.counts;
    for (std::int64_t x = 0; x <= row.remaining; ++x) {
      const double arriving = arrival_ * source[x];
      if (arriving == 0.0) continue;
      set_varying_counts(row, x, c);
      std::int64_t at_least = n_;
      double p_at_least = 1.0;
      for (int a = 0; a < J_; ++a) {
        at_least -= c[static_cast<std::size_t>(a)];
        double p_above = 1.0;
        for (int i = 0; i < d_; ++i)
          p_above *= static_cast<double>(std::max<std::int64_t>(at_least - i, 0)) /
                     static_cast<double>(n_ - i);
        const double mass = arriving * (p_at_least - p_above);
        if (mass > 0.0) {
          const std::int64_t offset = row.up[static_cast<std::size_t>(a)];
          if (offset == absorbing)
            absorbed += mass;
          else
            next[static_cast<std::size_t>(offset + x)] += mass;
        }
        p_at_least = p_above;
      }
    }
    return absorbed;
  }

  // Lower bound on the steps from occupancy c to a queue of length J (each step is at most one
  // arrival). jsq must first lift every queue to J - 1; jiq must first fill the idle queues.
  std::int64_t min_steps_to_absorb(const std::vector<std::int64_t>& c) const {
    int highest = J_ - 1;
    while (highest > 0 && c[static_cast<std::size_t>(highest)] == 0) --highest;
    switch (policy_) {
      case Policy::jsq: {
        std::int64_t steps = 1;
        for (int level = 0; level < J_; ++level)
          steps += c[static_cast<std::size_t>(level)] * (J_ - 1 - level);
        return steps;
      }
      case Policy::jiq:
        return c[0] + J_ - std::max(highest, 1);
      case Policy::power_of_d:
        return J_ - highest;
    }
    return 1;
  }

  Policy policy_;
  int d_;
  std::int64_t n_;
  int J_;
  int m_;            // free coordinates
  int inner_level_;  // the length whose count is the last coordinate
  std::vector<int> outer_levels_;
  double arrival_;     // probability of an arrival step
  double per_server_;  // probability of each server's step
  std::vector<std::vector<std::int64_t>> binomial_;
  std::int64_t states_ = 0;
  std::vector<Row> rows_;
  std::vector<Move> moves_;  // by target row
  std::vector<Move> absorbing_moves_;
};

}  // namespace

Result exact_chain(const Options& options) {
  const FlushDenormals flush;
  const LumpedChain chain(options);
  const auto states = static_cast<std::size_t>(chain.states());
  std::vector<double> current(states, 0.0);
  std::vector<double> next(states, 0.0);
  current[static_cast<std::size_t>(chain.index_of(initial_counts(options)))] = 1.0;

  const double mu = static_cast<double>(options.n) * (1 + options.lambda) * options.T;
  const auto check_every = std::max<std::int64_t>(8, static_cast<std::int64_t>(mu / 100));
  // Each flushed or underflowed product loses less than DBL_MIN; there are at most
  // (j + 2) per state and step.
  const double flush_per_step = static_cast<double>(states) * (options.j + 2) * DBL_MIN;
  double lower = 0.0;
  double remaining = 0.0;
  std::int64_t k = 0;
  while (true) {
    ++k;
    const double absorbed = chain.step(current, next);
    current.swap(next);
    lower += absorbed * std::exp(log_poisson_tail(k, mu));
    if (k % check_every == 0) {
      remaining = chain.remaining_bound(current, k, mu);
      const double flushed = static_cast<double>(k) * flush_per_step;
      if (remaining + flushed <= options.truncation * lower || remaining <= flushed) {
        remaining += flushed;
        break;
      }
    }
  }
  const double upper = lower + remaining;
  Result result;
  set_from_logs(result, std::log(lower), std::log(lower), std::log(upper), options.n);
  result.relative_error =
      lower > 0.0 ? (upper - lower) / lower : std::numeric_limits<double>::infinity();
  result.events = static_cast<double>(k);
  result.states = static_cast<double>(states);
  return result;
}

}  // namespace qsweep::ldp::detail
