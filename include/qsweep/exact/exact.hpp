#pragma once
// Exact stationary performance of the redundancy system via its product form: cancel-on-completion
// (paper eq. 3, on the lattice of prefix unions: docs/exact.md, "General engine: the union
// lattice") or cancel-on-start with assignment to the longest idle server (docs/exact.md,
// "Cancel-on-start"). The paper is in docs/references.md.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/common/enum_names.hpp"
#include "qsweep/model/model.hpp"

namespace qsweep::exact {

enum class Engine { automatic, general, symmetric };

// redundancy_coc: replicas at every server of the type, FCFS, the first to finish cancels the
// others (the paper's model). redundancy_cos: the first replica to start cancels the others; a job
// that finds several idle servers of its type starts at the one idle longest.
enum class Policy { redundancy_coc, redundancy_cos };

}  // namespace qsweep::exact

template <>
struct qsweep::EnumNames<qsweep::exact::Engine> {
  using K = exact::Engine;
  static constexpr std::array<EnumName<K>, 3> table{{
      {K::automatic, "automatic"},
      {K::general, "general"},
      {K::symmetric, "symmetric"},
  }};
};

template <>
struct qsweep::EnumNames<qsweep::exact::Policy> {
  using K = exact::Policy;
  static constexpr std::array<EnumName<K>, 2> table{{
      {K::redundancy_coc, "redundancy_coc"},
      {K::redundancy_cos, "redundancy_cos"},
  }};
};

namespace qsweep::exact {

struct Options {
  int qmax = 0;               // P(Q = q) and alpha_q for q = 0..qmax (0: only C)
  bool light_traffic = true;  // compute alpha_q (eq. 30) for q = 1..qmax
  bool per_type = true;       // E[Q_S], E[T_S] per type and E[R_n] per server
  Engine engine = Engine::automatic;
  // Joint pmf of the per-type counts (Q_S)_S (families with at most kMaxJointTypes types):
  // counts 0..joint_qmax on every axis, summed over bins of joint_bin counts. -1: off.
  int joint_qmax = -1;
  int joint_bin = 1;
  Policy policy = Policy::redundancy_coc;
  friend bool operator==(const Options&, const Options&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // `ar & a & b` is an expression; clang-format would write `ar& a& b`.
    // clang-format off
    ar & qmax & light_traffic & per_type & engine & joint_qmax & joint_bin & policy;
    // clang-format on
  }
};

// Limits of the joint pmf: one axis per job type; the grid of (joint_qmax + 1)^types counts is
// computed (time), (bins per axis)^types values are returned (memory, and one results-file row).
inline constexpr int kMaxJointTypes = 3;
inline constexpr double kMaxJointCells = 1e10;
inline constexpr double kMaxJointBins = 1e6;

// Job types that share every per-type value by symmetry (symmetric engines only): one entry per
// class, so per-type results exist even when there are too many types to list (complete d = 3 at
// N = 10^4 has 1.7e11 types).
struct TypeClass {
  std::string name;                            // "d-subsets", "singletons", "full set"
  int size = 0;                                // servers per type
  double count = 0.0;                          // number of types in the class
  double p = 0.0;                              // probability of each type of the class
  double EQ = 0.0, ET = 0.0, scaled_EQ = 0.0;  // E[Q_S], E[T_S], (1 - rho) E[Q_S] / p_S per type
  friend bool operator==(const TypeClass&, const TypeClass&) = default;
};

// Types with more members than this are not listed one by one by the symmetric engines
// (type_classes still carries their values).
inline constexpr double kMaxListedTypes = 100'000;

struct Result {
  bool stable = true;
  bool locally_stable = true;
  std::string unstable_reason;  // names the violating server set when !stable
  // "general", "symmetric-complete", "symmetric-singletons-full", "cancel-on-start"
  std::string engine;
  double rho = 0.0;
  double C = 0.0;      // P(Q = 0); underflows to 0 for large N at high load, see log_C
  double log_C = 0.0;  // ln P(Q = 0), finite even where C underflows
  double EQ = 0.0, VarQ = 0.0, ET = 0.0;
  double scaled_EQ = 0.0;   // (1 - rho) E[Q]
  std::vector<double> pmf;  // P(Q = q), q = 0..qmax
  // alpha_q = P(Q = q) / (C (N rho)^q), q = 0..qmax (alpha_0 = 1); empty if off. With identical
  // speeds this is the paper's eq. (30); in general the sum of
  // prod p_{c_i} / (mu(c_1..c_i) / mean mu).
  std::vector<double> alpha;
  // Per type, in the order of Family::enumerate() (symmetric engines: every type gets the value
  // of its class, listed in enumerate() order when there are at most kMaxListedTypes types and
  // N <= 64, otherwise empty; type_classes always has the values). All empty if !per_type.
  std::vector<model::ServerMask> type_servers;
  std::vector<double> type_p;
  std::vector<double> EQ_type, ET_type, scaled_EQ_type;  // scaled: (1 - rho) E[Q_S] / p_S
  std::vector<double> ER_server;  // E[R_n], n = 0..N-1 (empty for cancel-on-start: no replicas)
  std::vector<TypeClass> type_classes;  // symmetric engines only
  // Joint pmf (empty if joint_qmax = -1): one axis per type in enumerate() order, row-major (the
  // last type varies fastest), joint_shape[i] = ceil((joint_qmax + 1) / joint_bin) bins per axis;
  // bin j of an axis holds the counts j * joint_bin .. min((j + 1) * joint_bin, joint_qmax + 1) - 1
  // and the value is P(every Q_S in its bin). joint_mass = sum of joint_pmf = P(every Q_S <=
  // joint_qmax); 1 - joint_mass is the mass beyond the grid (C is the full normalisation).
  std::vector<double> joint_pmf;
  std::vector<std::int64_t> joint_shape;
  double joint_mass = 0.0;
  std::uint64_t unions = 0;  // lattice states visited (cost measure)
  // Empty, or "; "-separated sentences, the most serious first: results limited by rounding
  // near the stability boundary, a stability or local-stability check that could not decide
  // (docs/exact.md, "Warnings"). The sweep stores it in /tasks/warning.
  std::string warning;

  friend bool operator==(const Result&, const Result&) = default;
};

// Whether evaluate() accepts `options` for `system`, and with which engine, without running it
// (sweep validation and cost estimates use it). Stability is not checked here.
struct Validation {
  Engine engine = Engine::general;  // the engine evaluate() uses: general (also for
                                    // redundancy_cos, the cancel-on-start engine) or symmetric
  std::string option;    // "" if valid; else the option or parameter at fault ("engine", "N",
                         // "qmax", "joint_qmax", "joint_bin", "policy")
  std::string problem;   // what is wrong, one line ("N = 40 is too large for ...")
  std::string expected;  // what would be accepted
  bool ok() const { return option.empty(); }
};
Validation validate(const model::System& system, const Options& options);

// redundancy_cos always uses the cancel-on-start engine (N <= kMaxCancelOnStartServers; no joint
// pmf). Otherwise chooses the symmetric engine when the family and speeds allow it (uniform
// complete, independent or singletons_full with identical speeds), else the general one. Unstable
// systems return a Result with stable = false and unstable_reason set; never throws for instability
// (decided exactly, model::check_stability). Throws qsweep::Error for a stable system so close to
// the boundary that the engine's doubles cannot represent its slack. Throws InputError ("exact:
// <problem>; expected <expected>") where validate() finds a problem.
Result evaluate(const model::System& system, const Options& options);

}  // namespace qsweep::exact
