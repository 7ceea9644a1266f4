#include "qsweep/model/family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "family_detail.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/model/family_registry.hpp"

namespace qsweep::model {
namespace {

using detail::fail_family;

// Why a family would be too large to build ("" if it is not), from its parameters alone:
// checked before the constructor allocates anything.
std::string size_problem(const FamilyParams& p, const FamilyInfo& info) {
  const auto N = std::int64_t{p.N};
  const std::string limit = fmt::format("(model::kMaxServers = {})", kMaxServers);
  if (info.derived_n != nullptr) {
    const std::int64_t count = info.derived_n->count(p);
    if (count > kMaxServers)
      return fmt::format("{} has {} servers; expected {} <= {} {}", info.derived_n->shape(p), count,
                         info.derived_n->formula, kMaxServers, limit);
  }
  if (N > kMaxServers)
    return fmt::format("N is larger than the model builds; expected N <= {} {}", kMaxServers,
                       limit);
  // job types the constructor will list (a double: no overflow)
  const double listed = info.listed_count != nullptr ? info.listed_count(p) : 0.0;
  if (listed > static_cast<double>(kMaxListedJobTypes))
    return fmt::format(
        "{} would list {:.3g} job types (graph edges); expected at most {} "
        "(model::kMaxListedJobTypes)",
        name_of(p.kind), listed, kMaxListedJobTypes);
  return "";
}

}  // namespace

Family::Family(FamilyParams params) : params_(std::move(params)) {
  const FamilyParams& p = params_;
  info_ = &family_info(p.kind);
  const int N = p.N;
  if (N < 1) fail_family(p, "N must be at least 1");
  if (const auto problem = size_problem(p, *info_); !problem.empty()) fail_family(p, problem);
  if (N < info_->min_n) fail_family(p, fmt::format("needs N >= {}", info_->min_n));
  detail::FamilyBuild built;
  if (info_->build != nullptr) info_->build(p, built);
  complete_tuples_ = built.tuples;
  if (!built.edges.empty()) {
    // Uniform over distinct edges.
    auto& edges = built.edges;
    for (auto& e : edges)
      if (e.first > e.second) std::swap(e.first, e.second);
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    for (auto [a, b] : edges) listed_.push_back({a, b});
    listed_p_.assign(listed_.size(), 1.0 / static_cast<double>(listed_.size()));
  } else {
    listed_ = std::move(built.types);
    listed_p_ = std::move(built.probs);
  }
  if (!listed_.empty()) alias_ = AliasTable(listed_p_);
  for (const auto& t : listed_) max_listed_size_ = std::max(max_listed_size_, t.size());
}

double Family::num_types() const {
  if (info_->num_types != nullptr) return info_->num_types(params_);
  return static_cast<double>(listed_.size());
}

int Family::max_type_size() const {
  if (info_->max_type_size != nullptr) return info_->max_type_size(params_);
  return static_cast<int>(max_listed_size_);
}

void Family::sample_other(Rng& rng, std::vector<int>& servers) const {
  servers.clear();
  if (info_->sample != nullptr) return info_->sample(params_, complete_tuples_, rng, servers);
  // Uniform families (graphs) have every alias probability 1: the second draw could not matter.
  servers = listed_[alias_.sample(rng)];
}

std::vector<JobType> Family::enumerate(std::size_t max_types) const {
  const int N = params_.N;
  if (N > kMaxMaskServers)
    throw InputError(fmt::format("family {} with N = {}: listing job types needs N <= {}",
                                 name_of(kind()), N, kMaxMaskServers));
  if (num_types() > static_cast<double>(max_types))
    throw InputError(
        fmt::format("family {} with N = {} has {:.3g} job types; at most {} can be listed",
                    name_of(kind()), N, num_types(), max_types));
  std::vector<JobType> types;
  if (info_->enumerate != nullptr) {
    info_->enumerate(params_, types);
    return types;
  }
  std::map<ServerMask, double> merged;
  for (std::size_t t = 0; t < listed_.size(); ++t) {
    ServerMask m = 0;
    for (int s : listed_[t]) m |= ServerMask{1} << s;
    merged[m] += listed_p_[t];
  }
  for (auto [m, p] : merged) types.push_back({m, p});
  return types;
}

}  // namespace qsweep::model
