#pragma once
// Private to the sweep layer: what the methods' cost and memory estimates share (each method's
// own estimate is in its adapter, method_<name>.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "qsweep/model/model.hpp"
#include "qsweep/sweep/cost.hpp"

namespace qsweep::sweep::detail {

// --- formulas ---------------------------------------------------------------------------------
// An estimate's formula text ("2^12 sets x 16 B"), read by `qsweep plan` for a few tasks and by
// messages; expansion keeps only the numbers of every task, so it turns the texts off (formatting
// them was a quarter of planning 10^6 tasks).
inline thread_local bool formulas_off = false;

class NoFormulas {
 public:
  NoFormulas() : before_(formulas_off) { formulas_off = true; }
  ~NoFormulas() { formulas_off = before_; }
  NoFormulas(const NoFormulas&) = delete;
  NoFormulas& operator=(const NoFormulas&) = delete;

 private:
  bool before_;
};

template <class... Args>
std::string formula(fmt::format_string<Args...> format, Args&&... args) {
  return formulas_off ? std::string() : fmt::format(format, std::forward<Args>(args)...);
}

// --- memory ----------------------------------------------------------------------------------
// Each estimate counts the arrays of the kernel's data structures that grow with the task, at
// the moment the most of them are alive, and adds the result. Constant parts below a few hundred
// KiB are left out: the measured baseline of the process covers them
// (tests/sweep/test_memory.cpp checks every estimate against measured peak RSS).

inline constexpr double kDouble = 8.0;
inline constexpr double kVectorHeader = 24.0;  // begin, end, capacity

// Bytes glibc's malloc takes for a request of `bytes` (an 8-byte header, 16-byte granules,
// at least 32).
inline double malloc_chunk(double bytes) {
  return std::max(32.0, std::ceil((bytes + 8.0) / 16.0) * 16.0);
}

// A std::vector filled by push_back to `count` elements doubles its capacity (1, 2, 4, ...): at
// the last reallocation the old buffer of c elements, the largest power of two below `count`, and
// the c moved into the new one are resident together. Peak resident bytes: max(count, 2c).
inline double grown_vector_peak(double count, double element_bytes) {
  if (count < 2.0) return count * element_bytes;
  const double c = std::exp2(std::floor(std::log2(count - 1.0)));
  return std::max(count, 2.0 * c) * element_bytes;
}

// The family's own lists (graphs and explicit types; implicit families keep none): per type a
// vector of servers (header and heap chunk), its probability and its alias-table entry (8 + 4).
inline double family_bytes(const model::Family& family) {
  if (family.listed_types().empty()) return 0.0;
  const double types = family.num_types();
  return types * (kVectorHeader + malloc_chunk(4.0 * family.max_type_size()) + kDouble + 12.0);
}

// The stability check of a listed family (model::check_stability: one max flow over source,
// types, servers and sink; evaluate() and the simulator run it before the kernel, whose memory
// it does not overlap): its edges (to and capacity, 16 B, and a reverse edge each: from the
// source to every type, from a type to each of its servers, from every server to the sink),
// grown by push_back; per node an adjacency vector (header and a chunk of a few ints: 56 B) and
// a level and an iterator (8 B); the source's and the sink's adjacency (4 B per type and per
// server, twice that while they grow); the certificate's compensated load per server (24 B).
// Size-symmetric families need none of it. Near the boundary, where floating point cannot
// decide, an exact max flow in big integers (at most 2e6 edges) runs instead: not counted.
inline double stability_check_bytes(const model::System& system) {
  const model::Family& family = system.family;
  if (family.listed_types().empty()) return 0.0;
  const double types = family.num_types(), N = system.N();
  const double nodes = 2.0 + types + N;
  const double edges = 2.0 * (types * (1.0 + family.max_type_size()) + N);
  return grown_vector_peak(edges, 16.0) + nodes * (kVectorHeader + 32.0 + 8.0) + 8.0 * (types + N) +
         24.0 * N;
}

// The mean number of servers of an arriving job's type: d on complete, 1 + eps on
// singletons_full (the full set with probability eps / (N - 1)), 1 on independent.
inline double mean_type_size(const model::Family& family) {
  const auto& types = family.listed_types();
  if (types.empty())
    return family.kind() == model::FamilyKind::singletons_full ? 1.0 + family.params().eps
                                                               : family.max_type_size();
  const auto& p = family.listed_probs();
  double mean = 0.0;
  for (std::size_t t = 0; t < types.size(); ++t)
    mean += p[t] * static_cast<double>(types[t].size());
  return mean;
}

// What the estimates take from a system apart from its load: sums over its servers and types.
// Expansion makes them once per system (KnownSystem: they were a tenth of planning 10^6 simulate
// tasks); an estimate of a task on its own makes them from its system.
struct SystemSums {
  double mean_speed = 1.0;
  bool identical_speeds = true;
  double family_bytes = 0.0;           // family_bytes(system.family)
  double stability_check_bytes = 0.0;  // stability_check_bytes(system)
  double mean_type_size = 1.0;         // mean_type_size(system.family)
};

inline SystemSums system_sums(const model::System& system) {
  return {system.mean_speed(), system.identical_speeds(), family_bytes(system.family),
          stability_check_bytes(system), mean_type_size(system.family)};
}

}  // namespace qsweep::sweep::detail
