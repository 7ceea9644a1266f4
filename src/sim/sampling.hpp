#pragma once
// Random job sizes and job-type bookkeeping (internal to src/sim).
#include <cstdint>
#include <vector>

#include "qsweep/common/rng.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/sim/options.hpp"

namespace qsweep::sim {

// Job sizes with unit mean (a server of speed mu needs size / mu time units).
class SizeSampler {
 public:
  explicit SizeSampler(const Service& service);
  double operator()(Rng& rng) const;

 private:
  ServiceKind kind_;
  // hyperexponential, balanced means: Exp(2 p) with probability p, else Exp(2 (1 - p))
  double p_fast_ = 0.0, rate_a_ = 1.0, rate_b_ = 1.0;
  // empirical: Walker alias table over values rescaled to unit mean
  std::vector<double> values_, alias_prob_;
  std::vector<std::uint32_t> alias_;
};

// Job types as the simulator sees them: drawn from the family (never enumerated, except to
// index per-type estimates when the family is small: N <= 64 and at most kMaxTrackedTypes types).
class JobTypes {
 public:
  explicit JobTypes(const model::Family& family);

  // Draws a job type into `servers` and returns its index in tracked(), or -1 if untracked.
  // A family with a single type (complete with d = N, ...) needs no draw: `servers` must then be
  // the buffer given to the previous call, and is left as it is (its order may have changed).
  [[gnu::always_inline]] int sample(Rng& rng, std::vector<int>& servers) const {
    if (single_) {
      if (servers.empty()) servers = single_servers_;
      return tracked_.empty() ? -1 : 0;
    }
    family_.sample(rng, servers);
    return tracked_.empty() ? -1 : index(servers);
  }
  // Every call to sample() gives the servers in uniformly random order (ties can go to the first).
  bool random_order() const { return !single_ && family_.samples_in_random_order(); }
  const std::vector<model::JobType>& tracked() const { return tracked_; }
  // Whether JobTypes of this family index its types (tracked() not empty).
  static bool tracks(const model::Family& family);
  // The family's only type is the set of all servers.
  bool all_servers() const {
    return single_ && static_cast<int>(single_servers_.size()) == family_.num_servers();
  }

 private:
  int index(const std::vector<int>& servers) const;
  const model::Family& family_;
  bool single_;
  std::vector<int> single_servers_;
  std::vector<model::JobType> tracked_;
  std::vector<model::ServerMask> keys_;  // open addressing over tracked_, 0 = empty slot
  std::vector<int> values_;
  int shift_ = 64;
};

}  // namespace qsweep::sim
