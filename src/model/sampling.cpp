#include "qsweep/model/sampling.hpp"

#include <array>
#include <limits>
#include <utility>

namespace qsweep::model {

AliasTable::AliasTable(const std::vector<double>& probs) {
  const std::size_t n = probs.size();
  prob_.assign(n, 0.0);
  alias_.assign(n, 0);
  std::vector<double> scaled(n);
  std::vector<std::size_t> small, large;
  for (std::size_t i = 0; i < n; ++i) {
    scaled[i] = probs[i] * static_cast<double>(n);
    (scaled[i] < 1.0 ? small : large).push_back(i);
  }
  while (!small.empty() && !large.empty()) {
    const std::size_t s = small.back(), l = large.back();
    small.pop_back();
    prob_[s] = scaled[s];
    alias_[s] = static_cast<std::uint32_t>(l);
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (std::size_t i : small) prob_[i] = 1.0;
  for (std::size_t i : large) prob_[i] = 1.0;
}

std::uint64_t ordered_tuples(int N, int d) {
  std::uint64_t tuples = 1;
  for (int i = 0; i < d; ++i) {
    const auto choices = static_cast<std::uint64_t>(N - i);
    if (tuples > std::numeric_limits<std::uint64_t>::max() / choices) return 0;
    tuples *= choices;
  }
  return tuples;
}

// Lemire's multiply-shift for the bound `tuples`, read digit by digit (Brackett-Rozinsky and
// Lemire, "Batched ranged random integer generation", 2024): u * (N) * (N-1) ... keeps the high
// word of each product as digit i, uniform in [0, N - i), and the final low word decides the
// (rare) rejection exactly as for one bound. Server i is the digit-th smallest server not drawn
// before it, so every ordered tuple has probability 1 / tuples: the set is a uniform d-subset
// and its order a uniform permutation.
void sample_ordered_tuple(Rng& rng, int N, int d, std::uint64_t tuples, std::vector<int>& servers) {
  const auto size = static_cast<std::size_t>(d);
  std::array<int, kMaxTupleSize> drawn;  // the servers so far, ascending
  while (true) {
    servers.clear();
    std::uint64_t low = rng.next_u64();
    for (std::size_t i = 0; i < size; ++i) {
      const auto m = static_cast<unsigned __int128>(low) * (static_cast<std::uint64_t>(N) - i);
      low = static_cast<std::uint64_t>(m);
      auto server = static_cast<int>(m >> 64);
      std::size_t k = 0;
      for (; k < i && drawn[k] <= server; ++k) ++server;
      drawn[i] = server;
      for (std::size_t j = i; j > k; --j) std::swap(drawn[j], drawn[j - 1]);
      servers.push_back(server);
    }
    if (low >= tuples || low >= (0 - tuples) % tuples) return;
  }
}

}  // namespace qsweep::model
