// Exact p = P(E_j^n(T)) from the lumped chain (number of queues of each length below j),
// uniformized: p = sum_k f_k G(k), f_k = probability that the chain first makes a queue of
// length j at step k, G(k) = P(Poisson(n (1 + lambda) T) >= k).
//
// Range. p, and the masses that lead to it, can lie far below the smallest double (p = e^-1500
// at n = 3200, T = 0.5). The chain is carried as u(s) = v(s) a^J(s) / scale, J(s) = jobs in s:
// - scale is a power of two, moved at the checkpoints so that sum u stays near 2^kTopExponent:
//   the vector spans the whole double range, ~1e-600 of the total mass instead of 1e-308;
// - a >= 1 tilts the chain towards more jobs (arrival moves x a, departures x 1/a: the step
//   costs the same). With a = u*, the arrival tilt of the optimal path (docs/ldp.md, "Theory"),
//   the states on the way to the event carry the largest u, and the states that flush are those
//   whose mass no longer matters. a = 1 unless the event is too rare for the untilted vector.
// p, the bounds and G(k) are kept as logarithms.
//
// Bounds. After step k a state s holds true mass v(s); what it can still add to p is at most
// v(s) h_k(s), h_k(s) <= G(k + D(s)) (D(s): a lower bound on the steps to the event) and, for
// a > 1, h_k(s) <= a^(J(s) - Jmin) sup_{K >= D(s)} G(k + K) phi^K, because a^J(X_k) phi^-k is a
// supermartingale when phi bounds E[a^(J(next) - J(s))] over the states (phi = lambda' a +
// 1 - lambda', lambda' = lambda / (1 + lambda)) and every absorbing state has J >= Jmin.
// A flushed value (below DBL_MIN, in u units) is a true mass below DBL_MIN scale a^-J(s); the
// same weights bound what it would have added.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "estimators.hpp"
#include "qsweep/ldp/poisson.hpp"
#include "qsweep/ldp/theory.hpp"

namespace qsweep::ldp::detail {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();
constexpr double kLog2 = 0.69314718055994530942;
// The checkpoints scale the vector so that its sum stays below 2^kTopExponent until the next
// one (less the slack of kRescaleSlackBits and the growth a tilted chain can make meanwhile),
// leaving about 2^(kTopExponent + 1022) of range below the sum.
constexpr int kTopExponent = 1010;
// At most this growth (log2) of the sum of a tilted vector between two checkpoints.
constexpr double kMaxGrowthBits = 300;
// Rescale only when the sum has moved this far (log2) from its target: a rescale is one pass.
constexpr double kRescaleSlackBits = 32;
// A ln p below this makes the untilted vector run out of range (its floor is ~e^-1400 of the
// total mass, and the masses on the way to the event are below p): tilt from the start.
constexpr double kTiltBelowLogP = -1000;
// u* grows like (j - 2) / (lambda T) as T -> 0; beyond this the tilt gains no range (the chain
// then makes few steps and G(k), kept in logs, carries the rarity) and its products would near
// the double range.
constexpr double kMaxTilt = 0x1p32;

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

double log_add(double a, double b) {
  if (a == minus_infinity) return b;
  if (b == minus_infinity) return a;
  return std::max(a, b) + std::log1p(std::exp(-std::fabs(a - b)));
}

// The states are the occupancies (c_0, ..., c_{J-1}) of n queues (J = j), stored by their free
// coordinates: every c_k but c_1 (= n - the others). The last free coordinate is the "inner"
// one; the states sharing the others (a row) are contiguous, rows in lexicographic order, so a
// state's index is a sum of binomials (simplex ranking). Along a row every count is linear in
// the inner coordinate x, so each kind of transition of a row is one loop
// target[x] += (alpha + beta x) * source[x] (a Move), prepared once; so is the number of jobs,
// jobs0 + slope x, which the tilt multiplies into the coefficients.
class LumpedChain {
 public:
  LumpedChain(const Options& o, double tilt)
      : policy_(o.policy),
        d_(o.policy_d),
        n_(o.n),
        J_(o.j),
        m_(o.j - 1),
        inner_level_(o.j == 2 ? 0 : o.j - 1),
        slope_(inner_level_ - 1),
        tilt_(tilt),
        log_tilt_(std::log(tilt)),
        arrival_(o.lambda / (1 + o.lambda) * tilt),
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
    // Every absorbing state has at least this many jobs: jsq fills every queue to j - 1 first;
    // jiq routes to a queue of length j - 1 only when none is idle; power_of_d needs d queues
    // of length j - 1.
    switch (policy_) {
      case Policy::jsq:
        min_absorbing_jobs_ = n_ * (J_ - 1) + 1;
        break;
      case Policy::jiq:
        min_absorbing_jobs_ = n_ + J_ - 1;
        break;
      case Policy::power_of_d:
        min_absorbing_jobs_ = std::int64_t{d_} * (J_ - 1) + 1;
        break;
    }
    absorbed_by_jobs_.assign(static_cast<std::size_t>(max_jobs() + 2), 0.0);
    build_rows();
    if (tilted()) find_min_distance_by_jobs();
  }

  std::int64_t states() const { return states_; }
  bool tilted() const { return tilt_ != 1.0; }
  double log_tilt() const { return log_tilt_; }
  std::int64_t min_absorbing_jobs() const { return min_absorbing_jobs_; }
  std::int64_t max_jobs() const { return n_ * (J_ - 1); }

  std::int64_t index_of(const std::vector<std::int64_t>& counts) const {
    std::vector<std::int64_t> outer;
    for (int level : outer_levels_) outer.push_back(count_at(counts, level));
    return row_base(outer) + count_at(counts, inner_level_);
  }

  static std::int64_t jobs_of(const std::vector<std::int64_t>& counts) {
    std::int64_t jobs = 0;
    for (std::size_t level = 0; level < counts.size(); ++level)
      jobs += static_cast<std::int64_t>(level) * counts[level];
    return jobs;
  }

  // next = current moved by one step over the non-absorbed states; the absorbed mass (u units)
  // is left in absorbed_by_jobs_, by the jobs of the absorbing state. Target rows are filled one
  // at a time from their incoming moves, whose source rows are few and neighbouring, so both
  // stay in cache.
  void step(const std::vector<double>& current, std::vector<double>& next) {
    for (const Row& row : rows_) {
      double* target = next.data() + row.base;
      std::fill(target, target + row.remaining + 1, 0.0);
      for (std::size_t i = row.first_incoming; i < row.last_incoming; ++i)
        apply(moves_[i], current, next);
    }
    for (const Move& move : absorbing_moves_) absorb(move, current);
    if (policy_ == Policy::power_of_d)
      for (const Row& row : rows_) route_power_of_d(row, current, next);
  }

  // Hands each number of jobs J of the states absorbed by the last step to add(u, ln a^-(J -
  // Jmin)) and clears the tally.
  template <class Add>
  void take_absorbed(Add add) {
    for (std::size_t J = 0; J < absorbed_by_jobs_.size(); ++J) {
      const double value = absorbed_by_jobs_[J];
      if (value == 0.0) continue;
      const std::int64_t above = static_cast<std::int64_t>(J) - min_absorbing_jobs_;
      if (above < 0)  // the bounds assume there is none
        throw std::logic_error("exact chain: an absorbing state with fewer jobs than assumed");
      absorbed_by_jobs_[J] = 0.0;
      add(value, -static_cast<double>(above) * log_tilt_);
    }
  }

  // The groups the bounds weigh together: untilted, the states at one distance D; tilted, the
  // states with one number of jobs J (whose weights need a^-J), each with the least D among them.
  std::size_t groups() const {
    return static_cast<std::size_t>(tilted() ? max_jobs() + 1 : (J_ - 1) * n_ + 2);
  }
  std::int64_t group_distance(std::size_t g) const {
    return tilted() ? min_distance_by_jobs_[g] : static_cast<std::int64_t>(g);
  }

  // u summed over each group; returns the sum of u.
  double group_masses(const std::vector<double>& u, std::vector<double>& masses) const {
    masses.assign(groups(), 0.0);
    double total = 0.0;
    std::vector<std::int64_t> c(static_cast<std::size_t>(J_));
    for (const Row& row : rows_) {
      const double* values = u.data() + row.base;
      if (tilted()) {
        for (std::int64_t x = 0; x <= row.remaining; ++x) {
          masses[static_cast<std::size_t>(row.jobs0 + slope_ * x)] += values[x];
          total += values[x];
        }
        continue;
      }
      c = row.counts;
      for (std::int64_t x = 0; x <= row.remaining; ++x) {
        if (values[x] == 0.0) continue;
        set_varying_counts(row, x, c);
        masses[static_cast<std::size_t>(min_steps_to_absorb(c))] += values[x];
        total += values[x];
      }
    }
    return total;
  }

 private:
  static constexpr std::int64_t absorbing = std::numeric_limits<std::int64_t>::min() + 1;
  static constexpr std::int64_t impossible = std::numeric_limits<std::int64_t>::min();

  // For x in [first, last]: next[target + x] += (alpha + beta x) current[source + x], where
  // source is the row's base; target = `absorbing` tallies the terms by the jobs of the
  // absorbing state instead, jobs_after + slope x.
  struct Move {
    std::int64_t source;
    std::int64_t target;
    double alpha, beta;
    std::int64_t first, last;
    std::int64_t jobs_after = 0;
  };

  static void apply(const Move& move, const std::vector<double>& current,
                    std::vector<double>& next) {
    // an int counter and no loop-carried double: lets the compiler vectorize
    const int length = static_cast<int>(move.last - move.first + 1);
    const double* from = current.data() + move.source + move.first;
    const double start = move.alpha + move.beta * static_cast<double>(move.first);
    double* to = next.data() + move.target + move.first;
    for (int k = 0; k < length; ++k)
      to[k] += (start + move.beta * static_cast<double>(k)) * from[k];
  }

  void absorb(const Move& move, const std::vector<double>& current) {
    const double* from = current.data() + move.source;
    for (std::int64_t x = move.first; x <= move.last; ++x)
      absorbed_by_jobs_[static_cast<std::size_t>(move.jobs_after + slope_ * x)] +=
          (move.alpha + move.beta * static_cast<double>(x)) * from[x];
  }

  struct Row {
    std::vector<std::int64_t> counts;  // c_k for every length; the outer ones are fixed
    std::int64_t base = 0;             // index of the row's first state (inner coordinate 0)
    std::int64_t remaining = 0;        // n minus the outer counts = c_inner + c_1
    std::int64_t jobs0 = 0;            // jobs at x = 0 (at x: jobs0 + slope x)
    std::vector<std::int64_t> up;      // up[a]: index of (state moved a -> a+1) minus x
    std::vector<std::int64_t> down;    // down[a]: the same for a -> a-1
    std::size_t first_incoming = 0, last_incoming = 0;  // moves_ that land in this row
  };

  static std::int64_t count_at(const std::vector<std::int64_t>& counts, int level) {
    return static_cast<std::size_t>(level) < counts.size() ? counts[static_cast<std::size_t>(level)]
                                                           : 0;
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
      std::vector<std::int64_t> c = row.counts;
      set_varying_counts(row, 0, c);
      row.jobs0 = jobs_of(c);
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
      const auto after =
          std::upper_bound(rows_.begin(), rows_.end(), move.target + move.first,
                           [](std::int64_t index, const Row& row) { return index < row.base; });
      return after - rows_.begin() - 1;
    };
    std::vector<Move> landing;
    for (const Move& move : moves_)
      (move.target == absorbing ? absorbing_moves_ : landing).push_back(move);
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

  // The least distance among the states with each number of jobs.
  void find_min_distance_by_jobs() {
    min_distance_by_jobs_.assign(static_cast<std::size_t>(max_jobs() + 1),
                                 std::numeric_limits<std::int64_t>::max());
    std::vector<std::int64_t> c;
    for (const Row& row : rows_) {
      c = row.counts;
      for (std::int64_t x = 0; x <= row.remaining; ++x) {
        set_varying_counts(row, x, c);
        auto& least = min_distance_by_jobs_[static_cast<std::size_t>(row.jobs0 + slope_ * x)];
        least = std::min(least, min_steps_to_absorb(c));
      }
    }
  }

  // Count of length `level` along the row as alpha + beta x.
  std::pair<double, double> linear_count(const Row& row, int level) const {
    if (level == inner_level_) return {0.0, 1.0};
    if (level == 1) return {static_cast<double>(row.remaining), -1.0};
    return {static_cast<double>(row.counts[static_cast<std::size_t>(level)]), 0.0};
  }

  // Adds `scale` * (count of `level`) to the probability of moving to offset, for x in
  // [first, last] restricted to where that count is positive; `jobs_change` is the move's.
  void add_count_move(const Row& row, std::int64_t offset, int level, double scale,
                      std::int64_t first, std::int64_t last) {
    const auto [alpha, beta] = linear_count(row, level);
    if (beta > 0) first = std::max<std::int64_t>(first, 1);                // inner: x >= 1
    if (beta < 0) last = std::min<std::int64_t>(last, row.remaining - 1);  // c_1: x < remaining
    if (beta == 0 && alpha == 0) return;
    if (first > last || offset == impossible) return;
    moves_.push_back({row.base, offset, scale * alpha, scale * beta, first, last, row.jobs0 + 1});
  }

  void add_moves(const Row& row) {
    const std::int64_t r = row.remaining;
    // ends of service (an idle server's clock ring changes nothing); a departure removes a job
    add_count_move(row, row.base, 0, per_server_, 0, r);
    for (int a = 1; a < J_; ++a)
      add_count_move(row, row.down[static_cast<std::size_t>(a)], a, per_server_ / tilt_, 0, r);
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
        moves_.push_back({row.base, row.up[static_cast<std::size_t>(shortest)], arrival_, 0.0,
                          first, last, row.jobs0 + 1});
      } else {  // jiq without idle queues: uniform over all queues
        for (int a = 1; a < J_; ++a)
          add_count_move(row, row.up[static_cast<std::size_t>(a)], a,
                         arrival_ / static_cast<double>(n_), first, last);
      }
    }
  }

  // power_of_d arrivals: the shortest of d distinct queues has length >= a with probability
  // C(S_a, d) / C(n, d), S_a = queues of length >= a.
  void route_power_of_d(const Row& row, const std::vector<double>& current,
                        std::vector<double>& next) {
    const double* source = current.data() + row.base;
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
            absorbed_by_jobs_[static_cast<std::size_t>(row.jobs0 + 1 + slope_ * x)] += mass;
          else
            next[static_cast<std::size_t>(offset + x)] += mass;
        }
        p_at_least = p_above;
      }
    }
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
  int slope_;        // jobs change per unit of the inner coordinate (inner_level_ - 1)
  std::vector<int> outer_levels_;
  double tilt_, log_tilt_;
  double arrival_;     // probability of an arrival step, times the tilt
  double per_server_;  // probability of each server's step
  std::int64_t min_absorbing_jobs_ = 0;
  std::vector<std::vector<std::int64_t>> binomial_;
  std::int64_t states_ = 0;
  std::vector<Row> rows_;
  std::vector<Move> moves_;  // by target row
  std::vector<Move> absorbing_moves_;
  std::vector<double> absorbed_by_jobs_;            // u absorbed by the current step
  std::vector<std::int64_t> min_distance_by_jobs_;  // tilted only
};

// ln of the weight a group's unit of u a^Jmin (or flushed mass) gets in the bounds after step k:
// untilted, G(k + D); tilted, min(a^-(J - Jmin) G(k + D), sup_{K >= D} G(k + K) phi^K) with D the
// group's least distance. The sup is over a concave function of K (a Poisson tail is
// log-concave): it is at max(D, K*), K* its unconstrained maximiser.
class BoundWeights {
 public:
  BoundWeights(const LumpedChain& chain, double mu, double log_phi)
      : chain_(chain), mu_(mu), log_phi_(log_phi) {}

  // The weights at step k of the groups with mass (the others stay -inf); returns the largest
  // weight any group can have, for the flushes: G(k + 1), or sup_{K >= 1} G(k + K) phi^K tilted.
  double compute(std::int64_t k, const std::vector<double>& masses,
                 std::vector<double>& weights) const {
    weights.assign(chain_.groups(), minus_infinity);
    if (!chain_.tilted()) {
      for (std::size_t g = 0; g < weights.size(); ++g)
        if (masses[g] > 0.0) weights[g] = log_poisson_tail(k + chain_.group_distance(g), mu_);
      return log_poisson_tail(k + 1, mu_);
    }
    const double a_log = chain_.log_tilt();
    const auto min_jobs = static_cast<double>(chain_.min_absorbing_jobs());
    const std::int64_t peak = argmax_tail_times_phi(k);
    const double at_peak = tail_times_phi(k, peak);
    for (std::size_t g = 0; g < weights.size(); ++g) {
      if (!(masses[g] > 0.0)) continue;
      const std::int64_t D = chain_.group_distance(g);
      const double direct = log_poisson_tail(k + D, mu_);
      const double sup = D >= peak ? direct + static_cast<double>(D) * log_phi_ : at_peak;
      weights[g] = std::min(direct - (static_cast<double>(g) - min_jobs) * a_log, sup);
    }
    return at_peak;
  }

 private:
  double tail_times_phi(std::int64_t k, std::int64_t K) const {
    return log_poisson_tail(k + K, mu_) + static_cast<double>(K) * log_phi_;
  }
  // The least K >= 1 after which ln G(k + K) + K ln phi decreases.
  std::int64_t argmax_tail_times_phi(std::int64_t k) const {
    auto rises = [&](std::int64_t K) { return tail_times_phi(k, K + 1) > tail_times_phi(k, K); };
    std::int64_t low = 1, high = 1;
    while (rises(high)) {
      low = high;
      high *= 2;
    }
    while (low < high) {  // rises(K) is true below the peak, false from it on
      const std::int64_t mid = low + (high - low) / 2;
      if (rises(mid))
        low = mid + 1;
      else
        high = mid;
    }
    return low;
  }

  const LumpedChain& chain_;
  double mu_, log_phi_;
};

// sum_g exp(ln mass_g + weight_g) in logs, over groups with mass.
double log_weighted_sum(const std::vector<double>& masses, const std::vector<double>& weights) {
  double sum = minus_infinity;
  for (std::size_t g = 0; g < masses.size(); ++g)
    if (masses[g] > 0.0) sum = log_add(sum, std::log(masses[g]) + weights[g]);
  return sum;
}

// A sum of positive terms value x 2^exponent x exp(log_factor) beyond the double range: the sum
// is kept as sum_ x 2^exponent_.
class ExtendedSum {
 public:
  void add(double value, int exponent, double log_factor) {
    if (!(value > 0.0) || log_factor == minus_infinity) return;
    // split exp(log_factor) into 2^whole x exp(rest), |rest| <= ln(2) / 2
    const double whole = std::nearbyint(log_factor / kLog2);
    const double term = value * std::exp(log_factor - whole * kLog2);
    const int term_exponent = exponent + static_cast<int>(whole) + std::ilogb(term);
    if (sum_ == 0.0) {
      sum_ = std::ldexp(term, -std::ilogb(term));
      exponent_ = term_exponent;
      return;
    }
    if (term_exponent > exponent_) {  // re-base on the larger term
      sum_ = std::ldexp(sum_, exponent_ - term_exponent);
      exponent_ = term_exponent;
    }
    sum_ += std::ldexp(term, term_exponent - std::ilogb(term) - exponent_);
  }
  double log() const { return sum_ > 0.0 ? std::log(sum_) + exponent_ * kLog2 : minus_infinity; }

 private:
  double sum_ = 0.0;  // in [1, number of terms] x 2^exponent_, at most
  int exponent_ = 0;
};

struct ChainRun {
  Result result;
  bool underflow_limited = false;  // the flushed mass, not the truncation, set the interval
};

ChainRun run_chain(const Options& options, double tilt) {
  const FlushDenormals flush;
  LumpedChain chain(options, tilt);
  const auto states = static_cast<std::size_t>(chain.states());
  std::vector<double> current(states, 0.0);
  std::vector<double> next(states, 0.0);

  const double mu = static_cast<double>(options.n) * (1 + options.lambda) * options.T;
  // phi bounds the growth of sum u per step: lambda' a + (1 - lambda') (an idle server's ring).
  const double arrival_probability = options.lambda / (1 + options.lambda);
  const double log_phi =
      tilt == 1.0 ? 0.0 : std::log(arrival_probability * tilt + (1 - arrival_probability));
  std::int64_t check_every = std::max<std::int64_t>(8, static_cast<std::int64_t>(mu / 100));
  if (log_phi > 0.0)
    check_every = std::min<std::int64_t>(
        check_every,
        std::max<std::int64_t>(1, static_cast<std::int64_t>(kMaxGrowthBits * kLog2 / log_phi)));
  const int target_exponent =
      kTopExponent - static_cast<int>(kRescaleSlackBits) -
      static_cast<int>(std::ceil(static_cast<double>(check_every) * log_phi / kLog2));

  const auto start = initial_counts(options);
  current[static_cast<std::size_t>(chain.index_of(start))] = std::ldexp(1.0, target_exponent);
  // v = u a^-(J - Jmin) 2^scale_exponent exp(log_offset): the start has v = 1
  int scale_exponent = -target_exponent;
  const double log_offset =
      static_cast<double>(LumpedChain::jobs_of(start) - chain.min_absorbing_jobs()) *
      chain.log_tilt();
  auto log_scale = [&] { return scale_exponent * kLog2 + log_offset; };

  // Each flushed value loses less than DBL_MIN (u units). A state receives at most 2j products
  // per step (j services, j routings) and gives one absorbed product; one more per rescale.
  const double log_flushes_per_state_step = std::log(DBL_MIN * (2.0 * options.j + 1));
  const BoundWeights bound_weights(chain, mu, log_phi);
  std::vector<double> weights, masses(chain.groups(), 0.0);
  double largest_weight_then = bound_weights.compute(0, masses, weights);
  const double log_states = std::log(static_cast<double>(states));
  ExtendedSum lower;
  double log_lower = minus_infinity, log_flushed = minus_infinity, log_remaining = minus_infinity;
  std::int64_t k = 0, last_check = 0;
  int rescales = 0;
  while (true) {
    ++k;
    chain.step(current, next);
    current.swap(next);
    const double log_clock = log_offset + log_poisson_tail(k, mu);
    chain.take_absorbed([&](double value, double log_factor) {
      lower.add(value, scale_exponent, log_clock + log_factor);
    });
    if (k % check_every != 0) continue;
    log_lower = lower.log();
    const double total = chain.group_masses(current, masses);
    const double largest_weight = bound_weights.compute(k, masses, weights);
    log_remaining = log_scale() + log_weighted_sum(masses, weights);
    // Flushes during steps last_check + 1 .. k (and the rescales since), at every state, add at
    // most their count times the largest weight at last_check (weights only decrease with k).
    const double flushes = static_cast<double>(k - last_check + rescales);
    log_flushed = log_add(log_flushed, log_scale() + log_flushes_per_state_step + log_states +
                                           std::log(flushes) + largest_weight_then);
    largest_weight_then = largest_weight;
    last_check = k;
    rescales = 0;
    const double log_gap = log_add(log_remaining, log_flushed);
    if (log_gap <= std::log(options.truncation) + log_lower || log_remaining <= log_flushed) break;
    if (total > 0.0) {
      const int shift = std::ilogb(total) - target_exponent;
      if (std::abs(shift) > kRescaleSlackBits) {
        for (double& value : current) value = std::ldexp(value, -shift);
        scale_exponent += shift;
        rescales = 1;
      }
    }
  }
  ChainRun run;
  const double log_gap = log_add(log_remaining, log_flushed);
  set_from_logs(run.result, log_lower, log_lower, log_add(log_lower, log_gap), options.n);
  run.result.relative_error = log_lower > minus_infinity ? std::exp(log_gap - log_lower)
                                                         : std::numeric_limits<double>::infinity();
  run.underflow_limited = !(log_gap <= std::log(options.truncation) + log_lower);
  run.result.events = static_cast<double>(k);
  run.result.states = static_cast<double>(states);
  run.result.tilt = tilt;
  return run;
}

}  // namespace

Result exact_chain(const Options& options, double tilt) { return run_chain(options, tilt).result; }

double exact_chain_tilt(const Options& options) {
  // Only more jobs are favoured (a < 1 would mean a rate above 1, where the event is not rare).
  return std::clamp(optimal_tilt(options.j, options.T, options.lambda), 1.0, kMaxTilt);
}

Result exact_chain(const Options& options) {
  const double tilt = exact_chain_tilt(options);
  const bool theory_applies = options.policy == Policy::jsq &&
                              initial_counts(options) == std::vector<std::int64_t>{0, options.n};
  const bool rare =
      theory_applies && -static_cast<double>(options.n) *
                                decay_rate_fixed_lambda(options.j, options.T, options.lambda) <
                            kTiltBelowLogP;
  if (rare && tilt > 1.0) return run_chain(options, tilt).result;
  ChainRun run = run_chain(options, 1.0);
  if (run.underflow_limited && tilt > 1.0) run = run_chain(options, tilt);
  return run.result;
}

}  // namespace qsweep::ldp::detail
