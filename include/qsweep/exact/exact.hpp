#pragma once
// Exact stationary performance of the redundancy (cancel-on-completion) system via the
// product form (paper eq. 3), computed on the lattice of prefix unions (DESIGN.md).
#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/model/model.hpp"

namespace qsweep::exact {

enum class Engine { automatic, general, symmetric };

struct Options {
  int qmax = 0;               // P(Q = q) and alpha_q for q = 0..qmax (0: only C)
  bool light_traffic = true;  // compute alpha_q (eq. 30) for q = 1..qmax
  bool per_type = true;       // E[Q_S], E[T_S] per type and E[R_n] per server
  Engine engine = Engine::automatic;
  friend bool operator==(const Options&, const Options&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    ar & qmax & light_traffic & per_type & engine;
  }
};

struct Result {
  bool stable = true;
  bool locally_stable = true;
  std::string unstable_reason;  // names the violating server set when !stable
  std::string engine;           // "general" or "symmetric-complete" / "symmetric-singletons-full"
  double rho = 0.0;
  double C = 0.0;      // P(Q = 0)
  double EQ = 0.0, VarQ = 0.0, ET = 0.0;
  double scaled_EQ = 0.0;                   // (1 - rho) E[Q]
  std::vector<double> pmf;                  // P(Q = q), q = 0..qmax
  std::vector<double> alpha;                // alpha_q, q = 0..qmax (alpha_0 = 1); empty if off
  // Per type, in the order of Family::enumerate() (symmetric engines: one entry per lumped class,
  // the same value for every type of that class, listed in enumerate() order when N is small
  // enough to enumerate, otherwise empty).
  std::vector<model::ServerMask> type_servers;
  std::vector<double> type_p;
  std::vector<double> EQ_type, ET_type, scaled_EQ_type;  // scaled: (1 - rho) E[Q_S] / p_S
  std::vector<double> ER_server;                          // E[R_n], n = 0..N-1
  std::uint64_t unions = 0;  // lattice states visited (cost measure)

  friend bool operator==(const Result&, const Result&) = default;
};

// Chooses the symmetric engine when the family and speeds allow it (uniform complete or
// singletons_full with identical speeds), else the general one. Unstable systems return a
// Result with stable = false and unstable_reason set; never throws for instability.
// Throws InputError for options out of range or N beyond the chosen engine's limit.
Result evaluate(const model::System& system, const Options& options);

}  // namespace qsweep::exact
