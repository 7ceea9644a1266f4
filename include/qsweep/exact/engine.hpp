#pragma once
// The exact engines behind exact::evaluate (docs/exact.md). evaluate() checks options and
// stability, picks the engine and derives sojourn times, scaled and per-server values; the
// engines compute the sums over the product form: general and symmetric for cancel-on-completion,
// cancel_on_start_engine for cancel-on-start.
#include <cstdint>
#include <functional>
#include <vector>

#include "qsweep/exact/exact.hpp"
#include "qsweep/model/family.hpp"

namespace qsweep::exact {

// The general engine keeps two doubles per server set (2^(N+4) bytes: 4 GiB at N = 28,
// 16 GiB at N = 30) and costs O(2^N * #types) per pass.
inline constexpr int kMaxGeneralServers = 30;
// The cancel-on-start engine keeps six doubles per server set (48 x 2^N bytes: 12 GiB at N = 28)
// and costs O(N 2^N) per pass, O(N^2 2^N) for the per-type means.
inline constexpr int kMaxCancelOnStartServers = 28;

namespace detail {

struct Moments {
  double log_f = 0.0;  // ln of the sum of all state weights (= -ln C)
  double EQ = 0.0, VarQ = 0.0;
  // ln of the total weight of the states with q jobs, q = 0..qmax (P(Q = q) = exp(. - log_f)).
  std::vector<double> log_weight;
  std::vector<double> EQ_type;  // general engine: E[Q_S] per type, in the input order
  // Cancel-on-start engine, per type in the input order: mean number of waiting jobs E[W_S], and
  // the rate at which type-S jobs enter service (at any server) divided by their arrival rate,
  // which is 1 in a stationary system (the tests check it).
  std::vector<double> EW_type, type_flow;
  std::vector<TypeClass> classes;  // symmetric engines: name, size, count, p and EQ filled
  std::uint64_t unions = 0;
  // Non-empty if a union with mu(B) <= arrival rate of the types inside B was met (unstable
  // input that slipped past the stability check's tolerance); `slack` is mu(B) - rate(B).
  std::vector<int> violating_set;
  double slack = 0.0;
  // max over the unions B of (mu(B) + lam(B)) / d(B): d(B) = mu(B) - lam(B) carries rounding
  // errors of order (mu(B) + lam(B)) eps, which this turns into relative errors of the results.
  double condition = 1.0;
};

// types: masks over servers 0..speeds.size()-1 with probabilities summing to 1;
// total_rate = N * lambda. Requires speeds.size() <= kMaxGeneralServers.
Moments general_engine(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
                       double total_rate, int qmax, bool per_type);
// The same with the build's baseline vector instructions only (x86-64: SSE2), where
// general_engine takes AVX2 if the CPU has it: for the tests, which require the same doubles.
Moments general_engine_baseline_vectors(const std::vector<model::JobType>& types,
                                        const std::vector<double>& speeds, double total_rate,
                                        int qmax, bool per_type);

// validate() and evaluate() with `general` in place of general_engine, which takes N up to
// max_general_servers (the distributed engine of the exact_mpi layer runs it on every rank of a
// communicator, with its own limit).
using GeneralEngine = std::function<Moments(const std::vector<model::JobType>&,
                                            const std::vector<double>&, double, int, bool)>;
Validation validate_with(const model::System& system, const Options& options,
                         int max_general_servers);
Result evaluate_with(const model::System& system, const Options& options,
                     const GeneralEngine& general, int max_general_servers);

// Cancel-on-start redundancy (FCFS, a job that finds several idle servers of its type starts at
// the one idle longest) from its product form (src/exact/cancel_on_start.cpp, docs/exact.md).
// Arguments as for general_engine; servers that no type uses are allowed (they stay idle).
// Requires speeds.size() <= kMaxCancelOnStartServers.
Moments cancel_on_start_engine(const std::vector<model::JobType>& types,
                               const std::vector<double>& speeds, double total_rate, int qmax,
                               bool per_type);

// True if the family lumps by union size: complete (any d), independent or singletons_full,
// on identical speeds.
bool symmetric_applies(const model::System& system);
// Requires symmetric_applies(system). Engine name: "symmetric-complete" (also for independent,
// which is complete with d = 1) or "symmetric-singletons-full".
const char* symmetric_engine_name(const model::System& system);
Moments symmetric_engine(const model::System& system, int qmax, bool per_type);

// Joint pmf of the per-type counts, laid out as Result::joint_pmf: at most kMaxJointTypes types
// (masks over servers 0..speeds.size()-1), C = P(Q = 0) from an engine (so that mass beyond the
// grid shows as joint mass below 1). Fills joint_pmf, joint_shape and joint_mass of `out`.
void joint_distribution(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
                        double total_rate, double C, int qmax, int bin, Result& out);

}  // namespace detail
}  // namespace qsweep::exact
