#pragma once
// The sampling tables of the families (src/model/sampling.cpp): Walker's alias table over a
// list of job types, and the ordered tuple of distinct servers from one draw.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "qsweep/common/rng.hpp"

namespace qsweep::model {

// Walker/Vose alias table: an index drawn with probability probs[i] in O(1) (one draw, and a
// second only for an entry with alias probability below 1; uniform lists never take it).
class AliasTable {
 public:
  AliasTable() = default;
  explicit AliasTable(const std::vector<double>& probs);

  bool empty() const { return prob_.empty(); }
  std::size_t sample(Rng& rng) const {
    auto i = static_cast<std::size_t>(rng.below(prob_.size()));
    if (prob_[i] < 1.0 && rng.uniform() >= prob_[i]) i = alias_[i];
    return i;
  }

 private:
  std::vector<double> prob_;
  std::vector<std::uint32_t> alias_;
};

// Largest d with N (N-1) ... (N-d+1) <= 2^64 - 1 for some N >= d: d! <= 2^64 - 1 needs d <= 20.
inline constexpr int kMaxTupleSize = 20;

// N (N-1) ... (N-d+1), the number of ordered d-tuples of distinct servers out of N, if it fits
// in 64 bits, else 0.
std::uint64_t ordered_tuples(int N, int d);

// A uniform ordered d-tuple of distinct servers out of N from one 64-bit draw (usually), where
// `tuples` = ordered_tuples(N, d) > 0 (d <= kMaxTupleSize).
void sample_ordered_tuple(Rng& rng, int N, int d, std::uint64_t tuples, std::vector<int>& servers);

}  // namespace qsweep::model
