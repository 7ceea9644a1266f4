#include "sampling.hpp"

#include <cmath>
#include <numeric>

#include "qsweep/sim/exponential.hpp"
#include "qsweep/sim/simulate.hpp"

namespace qsweep::sim {

SizeSampler::SizeSampler(const Service& service) : kind_(service.kind) {
  if (kind_ == ServiceKind::hyperexponential) {
    // Balanced means (p / rate_a = (1 - p) / rate_b = 1/2): SCV = 1 / (2 p (1 - p)) - 1 = cv2.
    p_fast_ = 0.5 * (1.0 + std::sqrt((service.cv2 - 1.0) / (service.cv2 + 1.0)));
    rate_a_ = 2.0 * p_fast_;
    rate_b_ = 2.0 * (1.0 - p_fast_);
  }
  if (kind_ == ServiceKind::empirical) {
    const std::size_t k = service.values.size();
    const std::vector<double> weights = service.weights.empty()
                                            ? std::vector<double>(k, 1.0 / static_cast<double>(k))
                                            : service.weights;
    const double mean =
        std::inner_product(service.values.begin(), service.values.end(), weights.begin(), 0.0);
    values_.resize(k);
    for (std::size_t i = 0; i < k; ++i) values_[i] = service.values[i] / mean;
    // Walker's alias method (Vose's stable variant).
    alias_prob_.assign(k, 1.0);
    alias_.resize(k);
    std::iota(alias_.begin(), alias_.end(), 0U);
    std::vector<double> scaled(k);
    std::vector<std::uint32_t> small, large;
    for (std::size_t i = 0; i < k; ++i) {
      scaled[i] = weights[i] * static_cast<double>(k);
      (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const std::uint32_t s = small.back(), l = large.back();
      small.pop_back();
      alias_prob_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
  }
}

double SizeSampler::operator()(Rng& rng) const {
  switch (kind_) {
    case ServiceKind::exponential:
      return standard_exponential(rng);
    case ServiceKind::deterministic:
      return 1.0;
    case ServiceKind::hyperexponential:
      return standard_exponential(rng) / (rng.uniform() < p_fast_ ? rate_a_ : rate_b_);
    case ServiceKind::empirical: {
      auto i = static_cast<std::size_t>(rng.below(values_.size()));
      if (rng.uniform() >= alias_prob_[i]) i = alias_[i];
      return values_[i];
    }
  }
  return 1.0;
}

JobTypes::JobTypes(const model::Family& family)
    : family_(family), single_(family.num_types() == 1) {
  if (single_) {
    Rng unused(0, 0);  // the only type: no randomness involved
    family.sample(unused, single_servers_);
  }
  if (!tracks(family)) return;
  tracked_ = family.enumerate();
  std::size_t slots = 4;
  shift_ = 62;
  while (slots < 2 * tracked_.size()) {
    slots *= 2;
    --shift_;
  }
  keys_.assign(slots, 0);
  values_.assign(slots, -1);
  for (std::size_t t = 0; t < tracked_.size(); ++t) {
    std::size_t i = (tracked_[t].servers * 0x9E3779B97F4A7C15ULL) >> shift_;
    while (keys_[i] != 0) i = (i + 1) & (slots - 1);
    keys_[i] = tracked_[t].servers;
    values_[i] = static_cast<int>(t);
  }
}

bool JobTypes::tracks(const model::Family& family) {
  return family.num_servers() <= model::kMaxMaskServers && family.num_types() <= kMaxTrackedTypes;
}

int JobTypes::index(const std::vector<int>& servers) const {
  model::ServerMask mask = 0;
  for (int n : servers) mask |= model::ServerMask{1} << n;
  std::size_t i = (mask * 0x9E3779B97F4A7C15ULL) >> shift_;
  while (keys_[i] != mask) i = (i + 1) & (keys_.size() - 1);
  return values_[i];
}

}  // namespace qsweep::sim
