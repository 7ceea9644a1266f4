#pragma once
// Compatibility structures ("graph families"): which server sets a job may be replicated to,
// with which probability. A family is described, not enumerated: it can sample a job type in
// O(d) (or O(log E)) time for any N, and lists its types as bitmasks only when asked.
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "qsweep/common/enum_names.hpp"
#include "qsweep/common/rng.hpp"
#include "qsweep/model/sampling.hpp"

namespace qsweep::model {

// A set of servers as a bitmask (bit n = server n, 0-based). Enumerated types need N <= 64;
// the general exact engine has its own, smaller limit (exact/engine.hpp).
using ServerMask = std::uint64_t;
inline constexpr int kMaxMaskServers = 64;

// The largest family the model builds, checked before anything is allocated: N (rows x cols
// for a torus) at most kMaxServers, and at most kMaxListedJobTypes listed job types (graph
// edges, explicit types). Measured: a ring takes about 120 bytes per server to build, a
// simulation 180-350 bytes per server, so the largest family takes a few GB per rank.
inline constexpr int kMaxServers = 10'000'000;
inline constexpr std::int64_t kMaxListedJobTypes = 2 * std::int64_t{kMaxServers};

struct JobType {
  ServerMask servers = 0;
  double p = 0.0;
  friend bool operator==(const JobType&, const JobType&) = default;
};

// A job type given by the user (explicit family): 0-based server indices and a probability.
struct ExplicitType {
  std::vector<int> servers;
  double p = 0.0;
  friend bool operator==(const ExplicitType&, const ExplicitType&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // `ar & a & b` is an expression; clang-format would write `ar& a& b`.
    // clang-format off
    ar & servers & p;
    // clang-format on
  }
};

// The families, one enumerator each, in the order of their entries in the registry
// (families.def, whose first arguments they are; values are stored in plan hashes).
enum class FamilyKind {
#define QSWEEP_FAMILY(kind, ...) kind,
#include "qsweep/model/families.def"
#undef QSWEEP_FAMILY
};

}  // namespace qsweep::model

// The names, in registry order, from the registry (src/model/families.cpp).
template <>
struct qsweep::EnumNames<qsweep::model::FamilyKind> {
  static const std::span<const EnumName<model::FamilyKind>> table;
};

namespace qsweep::model {

// The parameters a family may take besides N, one enumerator per parameter (at most 32), in the
// order of the keys and result columns; each has its entry in the parameter catalogue of
// src/model/families.cpp (its field of FamilyParams, key, bounds, help and column).
enum class FamilyParam { d, eps, degree, edge_prob, graph_seed, rows, cols, tree_edges, types };

// Everything that defines a family. Fields a family does not use keep their defaults
// (NaN / 0 / empty); validate() rejects parameters that do not apply.
struct FamilyParams {
  FamilyKind kind = FamilyKind::complete;
  int N = 0;
  int d = 2;  // complete
  // hetero_ring, tree_singletons, singletons_full
  double eps = std::numeric_limits<double>::quiet_NaN();
  int degree = 3;                                               // random_regular
  double edge_prob = std::numeric_limits<double>::quiet_NaN();  // erdos_renyi
  std::uint64_t graph_seed = 1;  // random_regular, erdos_renyi, tree_singletons (random tree)
  int rows = 0, cols = 0;        // torus (N = rows * cols)
  // tree_singletons: the given tree (0-based); empty = a random tree
  std::vector<std::pair<int, int>> tree_edges;
  std::vector<ExplicitType> types;  // explicit_types

  // Every field, in the order serialize() writes them (plan hashes): a new field goes last.
  auto fields() const {
    return std::tie(kind, N, d, eps, degree, edge_prob, graph_seed, rows, cols, tree_edges, types);
  }
  auto fields() {
    return std::tie(kind, N, d, eps, degree, edge_prob, graph_seed, rows, cols, tree_edges, types);
  }

  // NaN marks "not used", so two equal parameter sets compare equal (NaN equals NaN).
  friend bool operator==(const FamilyParams& a, const FamilyParams& b) {
    return std::apply(
        [&b](const auto&... x) {
          return std::apply([&x...](const auto&... y) { return (same(x, y) && ...); }, b.fields());
        },
        a.fields());
  }
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // `ar & a & b & ...`, one field after the other.
    std::apply([&ar](auto&... field) { (ar & ... & field); }, fields());
  }

 private:
  template <class T>
  static bool same(const T& x, const T& y) {
    if constexpr (std::is_floating_point_v<T>)
      return x == y || (x != x && y != y);
    else
      return x == y;
  }
};

// Which of the existing parameters a family takes besides N, as flags (from the registry:
// family_info(kind).uses(FamilyParam) answers for every parameter).
struct FamilyUses {
  bool d = false, eps = false, degree = false, edge_prob = false, graph_seed = false,
       torus_shape = false, tree_edges = false, types = false;
};
FamilyUses family_uses(FamilyKind kind);

struct FamilyInfo;

class Family {
 public:
  // Validates and builds; throws InputError with a one-line message naming the bad parameter.
  explicit Family(FamilyParams params);

  const FamilyParams& params() const { return params_; }
  const FamilyInfo& info() const { return *info_; }
  FamilyKind kind() const { return params_.kind; }
  int num_servers() const { return params_.N; }
  // Number of job types (as a double: complete d = 3 at N = 10^4 has ~1.7e11).
  double num_types() const;
  // Largest number of servers in one job type.
  int max_type_size() const;

  // Draws one job type; writes its 0-based servers (distinct, unsorted) into `servers`.
  void sample(Rng& rng, std::vector<int>& servers) const {
    if (kind() == FamilyKind::complete && params_.d == 2) {
      sample_pair(rng, servers);
    } else {
      sample_other(rng, servers);
    }
  }
  // True if sample() writes the servers in uniformly random order (every order of the drawn set
  // equally likely): independent, and complete when N (N-1) ... (N-d+1) < 2^64 (one-draw
  // sampling). A policy can then break ties uniformly by taking the first, with no further draw.
  bool samples_in_random_order() const {
    return kind() == FamilyKind::independent || complete_tuples_ > 0;
  }

  // All types with p > 0 as bitmasks, merged if a set repeats (ring with N = 2, explicit
  // duplicates). Throws InputError if N > kMaxMaskServers or there are more than max_types.
  std::vector<JobType> enumerate(std::size_t max_types = 100'000'000) const;

  bool is_singletons_full() const { return kind() == FamilyKind::singletons_full; }

  // Explicit edge/type lists of listed families (graphs, explicit); empty for implicit ones
  // (independent, complete, singletons_full). Servers 0-based, probabilities sum to 1.
  const std::vector<std::vector<int>>& listed_types() const { return listed_; }
  const std::vector<double>& listed_probs() const { return listed_p_; }

 private:
  // The complete family with d = 2 (JSQ(2), the simulator's hot case, so inline): the ordered
  // tuple sampler of family.cpp for two servers, from one draw; the second skips the first.
  void sample_pair(Rng& rng, std::vector<int>& servers) const {
    PairDigits digits = pair_digits(rng.next_u64());
    if (digits.low < complete_tuples_) digits = accepted_pair_digits(rng, digits);
    servers.resize(2);
    servers[0] = digits.first;
    servers[1] = digits.second + (digits.second >= digits.first ? 1 : 0);
  }
  // Lemire's multiply-shift for the bound N (N - 1), read as two digits: u N gives the first
  // (high word) in [0, N), its low word times N - 1 the second in [0, N - 1) and the final low
  // word, which decides the rejection.
  struct PairDigits {
    int first, second;
    std::uint64_t low;
  };
  PairDigits pair_digits(std::uint64_t u) const {
    using Wide = unsigned __int128;
    const auto N = static_cast<std::uint64_t>(params_.N);
    const Wide m0 = static_cast<Wide>(u) * N;
    const Wide m1 = static_cast<Wide>(static_cast<std::uint64_t>(m0)) * (N - 1);
    return {static_cast<int>(m0 >> 64), static_cast<int>(m1 >> 64), static_cast<std::uint64_t>(m1)};
  }
  // The rare rejection (probability below N^2 / 2^64), out of line to keep sample_pair small.
  [[gnu::noinline]] PairDigits accepted_pair_digits(Rng& rng, PairDigits digits) const {
    const std::uint64_t threshold = (0 - complete_tuples_) % complete_tuples_;
    while (digits.low < threshold) digits = pair_digits(rng.next_u64());
    return digits;
  }
  void sample_other(Rng& rng, std::vector<int>& servers) const;

  FamilyParams params_;
  const FamilyInfo* info_ = nullptr;  // its registry entry
  std::vector<std::vector<int>> listed_;
  std::vector<double> listed_p_;
  std::size_t max_listed_size_ = 0;  // of the listed types: estimates read it for every task
  AliasTable alias_;                 // over the listed types, for O(1) sampling
  // complete: the number of ordered d-tuples of distinct servers, N (N-1) ... (N-d+1), if it
  // fits in 64 bits (one draw per sample), else 0 (Floyd's algorithm, d draws).
  std::uint64_t complete_tuples_ = 0;
};

}  // namespace qsweep::model
