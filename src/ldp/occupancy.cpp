#include "qsweep/ldp/occupancy.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "qsweep/common/error.hpp"
#include "qsweep/ldp/poisson.hpp"

namespace qsweep::ldp {

OccupancySimulator::OccupancySimulator(Policy policy, int d, std::int64_t n, double lambda,
                                       std::vector<std::int64_t> counts)
    : policy_(policy), d_(d), n_(n), lambda_(lambda), counts_(std::move(counts)) {
  if (n < 1) throw InputError("occupancy simulator: n must be >= 1");
  if (!(lambda > 0.0)) throw InputError("occupancy simulator: lambda must be > 0");
  if (policy == Policy::power_of_d && (d < 1 || d > n))
    throw InputError("occupancy simulator: power_of_d needs 1 <= d <= n");
  if (counts_.empty()) counts_ = {0, n};
  if (std::any_of(counts_.begin(), counts_.end(), [](std::int64_t c) { return c < 0; }) ||
      std::accumulate(counts_.begin(), counts_.end(), std::int64_t{0}) != n)
    throw InputError("occupancy simulator: initial counts must be >= 0 and sum to n");
  min_ = static_cast<int>(
      std::find_if(counts_.begin(), counts_.end(), [](std::int64_t c) { return c > 0; }) -
      counts_.begin());
  max_ = static_cast<int>(counts_.size()) - 1;
  while (counts_[static_cast<std::size_t>(max_)] == 0) --max_;
  counts_.resize(static_cast<std::size_t>(max_) + 2, 0);
}

std::int64_t OccupancySimulator::count(int length) const {
  if (length < 0 || length > max_) return 0;
  return counts_[static_cast<std::size_t>(length)];
}

double OccupancySimulator::fraction_at_least(int length) const {
  std::int64_t at_least = 0;
  for (int k = std::max(length, 0); k <= max_; ++k)
    at_least += counts_[static_cast<std::size_t>(k)];
  return static_cast<double>(at_least) / static_cast<double>(n_);
}

int OccupancySimulator::length_of_rank(std::int64_t rank) const {
  int k = min_;  // no queue is shorter than min_
  std::int64_t below = counts_[static_cast<std::size_t>(k)];
  while (rank >= below) below += counts_[static_cast<std::size_t>(++k)];
  return k;
}

int OccupancySimulator::route(Rng& rng) const {
  switch (policy_) {
    case Policy::jsq:
      return min_;
    case Policy::jiq:
      if (counts_[0] > 0) return 0;
      return length_of_rank(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n_))));
    case Policy::power_of_d: {
      // Floyd's algorithm draws a uniform d-subset of the ranks; the shortest sampled queue is
      // the one of smallest rank.
      constexpr int small = 16;
      std::int64_t chosen_small[small];
      std::vector<std::int64_t> chosen_large;
      std::int64_t* chosen = chosen_small;
      if (d_ > small) {
        chosen_large.resize(static_cast<std::size_t>(d_));
        chosen = chosen_large.data();
      }
      std::int64_t lowest = n_;
      for (int i = 0; i < d_; ++i) {
        const std::int64_t top = n_ - d_ + i;
        auto t = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(top + 1)));
        if (std::find(chosen, chosen + i, t) != chosen + i) t = top;
        chosen[i] = t;
        lowest = std::min(lowest, t);
      }
      return length_of_rank(lowest);
    }
  }
  return min_;
}

void OccupancySimulator::move(int from, int to) {
  --counts_[static_cast<std::size_t>(from)];
  ++counts_[static_cast<std::size_t>(to)];
  if (to > max_) {
    max_ = to;
    // keep a zero sentinel above the longest queue
    if (counts_.size() < static_cast<std::size_t>(max_) + 2) counts_.push_back(0);
  }
  if (to < min_) min_ = to;
  if (counts_[static_cast<std::size_t>(from)] == 0) {
    if (from == min_) min_ = to > from ? to : min_;
    if (from == max_) max_ = to < from ? to : max_;
  }
}

int OccupancySimulator::arrive(Rng& rng) {
  const int length = route(rng);
  move(length, length + 1);
  ++events_;
  return length + 1;
}

void OccupancySimulator::serve_rank(std::int64_t rank) {
  if (rank < counts_[0]) return;
  const int length = length_of_rank(rank);
  move(length, length - 1);
  ++events_;
}

OccupancySimulator::Step OccupancySimulator::step(double arrival_probability, Rng& rng) {
  ++steps_;
  if (rng.uniform() < arrival_probability) {
    arrive(rng);
    return Step::arrival;
  }
  const auto rank = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n_)));
  if (rank < counts_[0]) return Step::idle;
  serve_rank(rank);
  return Step::departure;
}

bool OccupancySimulator::run_for(double duration, int stop_length, Rng& rng) {
  const double arrival_probability = lambda_ / (1 + lambda_);
  const std::int64_t steps =
      sample_poisson(static_cast<double>(n_) * (1 + lambda_) * duration, rng);
  for (std::int64_t i = 0; i < steps; ++i)
    if (step(arrival_probability, rng) == Step::arrival && max_ >= stop_length) return true;
  return false;
}

}  // namespace qsweep::ldp
