#include "qsweep/sweep/cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>

#include "cost_detail.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/sim/kernel.hpp"

namespace qsweep::sweep {
namespace detail {
namespace {

// Seconds per elementary step, measured with `qsweep eval` on the development machine
// (docs/sweep-format.md, "Cost estimates"); only the orders of magnitude matter.
constexpr double kSecondsPerGeneralStep = 1e-8;    // one (union, type, series term) update
constexpr double kSecondsPerSymmetricStep = 2e-8;  // one (size, growth, series term) update
constexpr double kSecondsPerListedType = 5e-8;     // listing a type's values (per_type)
constexpr double kSecondsPerJointCell = 2e-9;      // one count vector of the joint pmf
constexpr double kSecondsPerEvent = 1.6e-7;        // one simulated arrival or departure
constexpr double kSecondsPerPathEvent = 3.5e-8;    // one event of an occupancy-process path
constexpr double kSecondsPerChainStep = 1.5e-8;    // one (state, uniformization step) update

// Unions the general engine visits: every union of types. With singletons (or dense types)
// nearly all 2^N sets; on a cycle or path only the sets without an isolated server, about
// psi^N with psi = 1.7549 (the real root of x^3 = 2x^2 - x + 1); on a star the sets holding the
// centre, 2^(N-1). Other graphs count as 2^N, an upper bound.
double union_count(const model::System& system, std::string& text) {
  const int N = system.N();
  switch (system.family.kind()) {
    case model::FamilyKind::ring:
    case model::FamilyKind::hetero_ring:
    case model::FamilyKind::path:
      text = fmt::format("1.755^{}", N);
      return std::pow(1.7548776662466927, N);
    case model::FamilyKind::star:
      text = fmt::format("2^{}", N - 1);
      return std::ldexp(1.0, N - 1);
    default:
      text = fmt::format("2^{}", N);
      return std::ldexp(1.0, N);
  }
}

// The lattice (or lumped) passes of the chosen engine.
CostEstimate engine_cost(const Task& task, const model::System& system) {
  const double terms = task.exact.qmax + 3.0;  // the series up to qmax, plus the moment passes
  const double types = system.family.num_types();
  const bool symmetric = exact::validate(system, task.exact).engine == exact::Engine::symmetric;
  const int N = system.N();
  if (symmetric) {
    // A union of size u grows by 0..d servers (complete, d = 1 for independent); singletons_full
    // grows by one server or jumps to all N.
    const int growth = system.family.is_singletons_full() ? 2 : system.family.max_type_size() + 1;
    double seconds = N * static_cast<double>(growth) * terms * kSecondsPerSymmetricStep;
    if (task.exact.per_type && types <= exact::kMaxListedTypes)
      seconds += types * kSecondsPerListedType;
    return {seconds,
            fmt::format("{} sizes x {} growths x {:g} terms (symmetric)", N + 1, growth, terms),
            {}};
  }
  if (task.exact.policy == exact::Policy::redundancy_cos) {
    // src/exact/cancel_on_start.cpp: every set, N + types steps for the means, N per series
    // term, and with per_type about N^2 / 2 (the servers' passes) plus the types' sums.
    const double sets = std::ldexp(1.0, N);
    const double steps =
        (types + N) + N * task.exact.qmax + (task.exact.per_type ? 0.5 * N * N + types : 0.0);
    return {sets * steps * kSecondsPerGeneralStep,
            fmt::format("2^{} sets x {:g} steps (cancel-on-start)", N, steps),
            {}};
  }
  std::string unions_text;
  const double unions = union_count(system, unions_text);
  return {unions * types * terms * kSecondsPerGeneralStep,
          fmt::format("{} unions x {:g} types x {:g} terms", unions_text, types, terms),
          {}};
}

CostEstimate exact_cost(const Task& task, const model::System& system) {
  CostEstimate cost = engine_cost(task, system);
  if (task.exact.joint_qmax >= 0) {
    const double types = system.family.num_types();
    const double cells = std::pow(task.exact.joint_qmax + 1.0, types);
    cost.seconds += cells * kSecondsPerJointCell;
    cost.formula +=
        fmt::format(" + {:.3g} joint pmf cells ({} + 1)^{:g}", cells, task.exact.joint_qmax, types);
  }
  return cost;
}

CostEstimate simulate_cost(const Task& task, const model::System& system) {
  const auto& o = task.simulate;
  // A detected warm-up costs a pilot run and discards about a tenth of the horizon.
  const double warmup = o.warmup >= 0.0 ? o.warmup : 0.2 * o.horizon;
  const double replications = o.target_rel_half_width > 0.0 ? o.max_replications : o.replications;
  const double events = 2.0 * system.total_arrival_rate() * (o.horizon + warmup) * replications;
  return {events * kSecondsPerEvent,
          fmt::format("{:.3g} events (2 x {:g} arrivals/time x {:g} time x {:g} replications)",
                      events, system.total_arrival_rate(), o.horizon + warmup, replications),
          {}};
}

CostEstimate ldp_cost(const Task& task) {
  const auto& o = task.ldp;
  const double n = static_cast<double>(o.n);
  const double path_events = n * (1.0 + o.lambda) * o.T;
  if (o.estimator == ldp::Estimator::exact) {
    // Occupancy states: queue-length counts over 0..j-1 summing to n, C(n + j - 1, j - 1);
    // uniformization needs about the expected number of events plus a few standard deviations.
    const double states =
        std::exp(std::lgamma(n + o.j) - std::lgamma(n + 1.0) - std::lgamma(o.j * 1.0));
    const double steps = path_events + 10.0 * std::sqrt(path_events) + 10.0;
    return {states * steps * kSecondsPerChainStep,
            fmt::format("{:.3g} chain states x {:.3g} uniformization steps", states, steps),
            {}};
  }
  return {o.samples * path_events * kSecondsPerPathEvent,
          fmt::format("{:g} paths x {:.3g} events", o.samples, path_events),
          {}};
}

// --- memory ---------------------------------------------------------------------------------
// Each estimate counts the arrays of the kernel's data structures that grow with the task, at
// the moment the most of them are alive, and adds the result. Constant parts below a few hundred
// KiB are left out: the measured baseline of the process covers them
// (tests/sweep/test_memory.cpp checks every estimate against measured peak RSS).

constexpr double kDouble = 8.0;
constexpr double kVectorHeader = 24.0;  // begin, end, capacity

// Bytes glibc's malloc takes for a request of `bytes` (an 8-byte header, 16-byte granules,
// at least 32).
double malloc_chunk(double bytes) { return std::max(32.0, std::ceil((bytes + 8.0) / 16.0) * 16.0); }

// A std::vector filled by push_back to `count` elements doubles its capacity (1, 2, 4, ...): at
// the last reallocation the old buffer of c elements, the largest power of two below `count`, and
// the c moved into the new one are resident together. Peak resident bytes: max(count, 2c).
double grown_vector_peak(double count, double element_bytes) {
  if (count < 2.0) return count * element_bytes;
  const double c = std::exp2(std::floor(std::log2(count - 1.0)));
  return std::max(count, 2.0 * c) * element_bytes;
}

// The family's own lists (graphs and explicit types; implicit families keep none): per type a
// vector of servers (header and heap chunk), its probability and its alias-table entry (8 + 4).
double family_bytes(const model::Family& family) {
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
double stability_check_bytes(const model::System& system) {
  const model::Family& family = system.family;
  if (family.listed_types().empty()) return 0.0;
  const double types = family.num_types(), N = system.N();
  const double nodes = 2.0 + types + N;
  const double edges = 2.0 * (types * (1.0 + family.max_type_size()) + N);
  return grown_vector_peak(edges, 16.0) + nodes * (kVectorHeader + 32.0 + 8.0) + 8.0 * (types + N) +
         24.0 * N;
}

// What every result of an exact task holds: P(Q = q) and alpha_q (q = 0..qmax), and with
// per_type five values per listed type (servers, p, E[Q_S], E[T_S], scaled) and E[R_n] per
// server.
double exact_result_bytes(const Task& task, const model::System& system, bool listed) {
  double bytes = 2.0 * kDouble * (task.exact.qmax + 1.0);
  if (task.exact.per_type) {
    if (listed) bytes += 5.0 * kDouble * system.family.num_types();
    bytes += kDouble * system.N();
  }
  return bytes;
}

// General engine (src/exact/general.cpp): solve_means keeps one Cell {G, G1 or H} of two
// doubles per server set, 16 x 2^N bytes; solve_distribution (qmax > 0) runs after it is freed,
// with two arrays cur and next of one double per set: 16 x 2^N again. Beside them: the types
// (enumerate(): mask and p, 16 B; the lattice's mask and rate, 12 B, grown by push_back: up to 24;
// h_next 8 B and, with per_type, type_part 8 B and a compensated sum 16 B), the half tables of
// server-set speeds (2 x 2^ceil(N/2) doubles) and the distribution's tiles (16384 x 12 B).
MemoryEstimate general_memory(const Task& task, const model::System& system) {
  const int N = system.N();
  const double types = system.family.num_types();
  const double sets = std::ldexp(1.0, N);
  const double per_type = 16.0 + 24.0 + 8.0 + (task.exact.per_type ? 24.0 : 0.0);
  const double working = 16.0 * sets + types * per_type +
                         2.0 * kDouble * std::ldexp(1.0, (N + 1) / 2) +
                         (task.exact.qmax > 0 ? 16384.0 * 12.0 : 0.0);
  const double result = exact_result_bytes(task, system, true) + kDouble * types;  // + EQ_type
  return {working, result,
          fmt::format("2^{} sets x 16 B + {:g} types x {:g} B", N, types, per_type)};
}

// Cancel-on-start engine (src/exact/cancel_on_start.cpp): five arrays of one double per server
// set (lam, lam_C, D, B and two that are reused), 48 x 2^N bytes, plus per type the enumerated
// type (16 B) and the engine's mask, rate and sums (about 80 B), and the half tables of speeds.
MemoryEstimate cancel_on_start_memory(const Task& task, const model::System& system) {
  const int N = system.N();
  const double types = system.family.num_types();
  const double sets = std::ldexp(1.0, N);
  const double per_type = 16.0 + 80.0;
  const double working =
      48.0 * sets + types * per_type + 2.0 * kDouble * std::ldexp(1.0, (N + 1) / 2);
  const double result = exact_result_bytes(task, system, true) + kDouble * types;
  return {working, result,
          fmt::format("2^{} sets x 48 B + {:g} types x {:g} B", N, types, per_type)};
}

// Transitions of the symmetric engine's lumped chain (src/exact/symmetric.cpp): complete with d,
// from size u to u + j for j = max(0, d - u)..min(d, N - u), (N + 1) + d (N - d) in all;
// singletons_full three per size (inside, one more server, the full set).
double symmetric_transitions(const model::System& system) {
  const double N = system.N();
  if (system.family.is_singletons_full()) return 3.0 * (N + 1.0);
  const double d = system.family.kind() == model::FamilyKind::independent
                       ? 1.0
                       : static_cast<double>(system.family.params().d);
  return (N + 1.0) + d * (N - d);
}

// Symmetric engine: the chain's moves (to, class, rate, log rate: 24 B each) filled by
// push_back, so up to twice their bytes while the list grows (grown_vector_peak; 6.1 GiB for
// complete d = 30, N = 5e6, as measured), and `first` (8 B per size, grown likewise). Once built:
// the moves, and per size ln F, d, a Mixture (4 doubles), ln H and cur / next of the
// distribution: 72 B. With per_type and at most kMaxListedTypes types on N <= 64 the types are
// enumerated and listed (16 + 8 B each).
MemoryEstimate symmetric_memory(const Task& task, const model::System& system) {
  const double N = system.N();
  const double moves = symmetric_transitions(system);
  const double first = grown_vector_peak(N + 2.0, kDouble);
  const double building = grown_vector_peak(moves, 24.0) + first;
  const double running = 24.0 * moves + first + 72.0 * (N + 1.0);
  const bool listed =
      system.family.num_types() <= exact::kMaxListedTypes && system.N() <= model::kMaxMaskServers;
  const double listing = task.exact.per_type && listed ? 24.0 * system.family.num_types() : 0.0;
  return {std::max(building, running) + listing, exact_result_bytes(task, system, listed),
          fmt::format("{:.3g} chain transitions x 24 B (x 2 while the list grows) + {:g} sizes x "
                      "72 B",
                      moves, N + 1.0)};
}

// Joint pmf (src/exact/joint.cpp): the grid of bins (bins^k doubles, moved into the result) and
// two slabs of counts, (joint_qmax + 1)^2 doubles each for three types, one row of
// joint_qmax + 1 for one or two, plus a zero row.
MemoryEstimate joint_memory(const Task& task, const model::System& system) {
  const double types = system.family.num_types();
  const double extent = task.exact.joint_qmax + 1.0;
  const double bins = std::pow(std::ceil(extent / task.exact.joint_bin), types);
  const double slab = types >= 3 ? extent * extent : extent;
  const double working = kDouble * (bins + 2.0 * slab + extent);
  return {working, kDouble * bins,
          fmt::format("{:.3g} joint bins x 8 B + 2 slabs of {:.3g} counts x 8 B", bins, slab)};
}

// The phases of an exact task, one after another: the engine; the joint pmf (the engine's
// arrays freed, its results kept); the result with the copy check_shape makes of it (and later
// the results file writer). The system's speeds and the family's lists live through all three.
MemoryEstimate exact_memory(const Task& task, const model::System& system) {
  const bool symmetric = exact::validate(system, task.exact).engine == exact::Engine::symmetric;
  MemoryEstimate engine = symmetric ? symmetric_memory(task, system)
                          : task.exact.policy == exact::Policy::redundancy_cos
                              ? cancel_on_start_memory(task, system)
                              : general_memory(task, system);
  double peak = engine.bytes;
  double result = engine.result_bytes;
  if (task.exact.joint_qmax >= 0) {
    const MemoryEstimate joint = joint_memory(task, system);
    peak = std::max(peak, joint.bytes + result);
    result += joint.result_bytes;
    engine.formula += ", then " + joint.formula;
  }
  peak = std::max({peak, 2.0 * result, stability_check_bytes(system)});
  const double around = kDouble * system.N() + family_bytes(system.family);
  return {around + peak, 2.0 * result, engine.formula};
}

// Simulation (src/sim), per server, in the phase that holds the most: while a replication runs,
// the speeds (8 B), the estimates over replications of E[R_n] and utilisation (two PairMoments
// of 6 doubles: 96 B), the replication's Observer (a Level of 16 B, a busy time 8 B, a speed
// class 4 B) and the E[R_n] and utilisation it returns (16 B): 148 B, plus the kernel's
// (kernels.hpp; the Markov race for exponential sizes of independent replicas, else
// event-driven): the race's busy set (list and position 8 B, a copy of the speeds 8 B, with
// unequal speeds a sum tree of up to 4 doubles); the redundancy kernel's list heads and tails
// (8 B), with events a heap position and entry (20 B); a dispatching kernel's ring queue (24 B)
// and its first buffer (4 ints: a 32 B chunk; with events 4 queued jobs, an 80 B chunk, a heap
// position and entry and a free time: 108 B). Later phases hold less per server: the estimates
// with the result's four values and half-widths (96 + 32 B), then the result and its copy
// (64 B). Jobs in the system of the redundancy and event kernels (a job record and its
// replicas' list nodes, about 48 B, twice that while their arrays grow): at most
// N rho / (1 - rho), the mean of independent M/M/1 queues. Per level of qmax and occupancy_max:
// a Level, a PairMoments, a replication value and two result values (88 B). The family's lists
// (graphs) as for exact, and the stability check of a listed family where it needs more.
MemoryEstimate simulate_memory(const Task& task, const model::System& system) {
  const auto& o = task.simulate;
  const double N = system.N();
  const bool redundancy = o.policy == sim::Policy::redundancy_coc;
  // As sim's resolve_kernel: the Markov race for exponential sizes of independent replicas.
  const bool markov = o.service.kind == sim::ServiceKind::exponential && !o.identical_replicas &&
                      o.policy != sim::Policy::redundancy_cos;
  const double race = markov ? 16.0 + (system.identical_speeds() ? 0.0 : 32.0) : 0.0;
  const double kernel = redundancy ? (markov ? 8.0 : 28.0) : (markov ? 56.0 : 132.0);
  const double per_server = 148.0 + race + kernel;
  const double rho = std::min(system.rho(), 0.999);
  const bool jobs_in_queues = !redundancy && markov;  // ints in the ring buffers counted above
  const double jobs =
      jobs_in_queues ? 0.0
                     : std::min(N * rho / (1.0 - rho), static_cast<double>(sim::kMaxJobsInSystem));
  const double levels = o.qmax + 2.0 + o.occupancy_max;
  const double result = 32.0 * N + 16.0 * levels;
  const double replication = per_server * N + 2.0 * 48.0 * jobs + 88.0 * levels;
  const double peak = std::max({replication, 104.0 * N + result, stability_check_bytes(system)});
  return {peak + family_bytes(system.family), 2.0 * result,
          fmt::format("{:g} servers x {:g} B + {:.3g} jobs x 96 B", N, per_server, jobs)};
}

// The exact ldp chain (src/ldp/exact_chain.cpp): the probability vectors current and next over
// the C(n + j - 1, j - 1) occupancy states (16 B per state); its rows, one per occupancy of the
// outer lengths (C(n + j - 2, j - 2) for j >= 3, else one), each 104 B plus three heap vectors
// of j counts (twice the 104 while the row list grows); the moves (48 B), at most j + 3 per row
// (jsq), j + 3 (j - 1) (jiq) or j (power_of_d), kept twice and once more by stable_sort while the
// chain is built, when the probability vectors do not exist yet; the binomial table (j rows of
// n + j + 1 counts).
MemoryEstimate ldp_memory(const Task& task) {
  const auto& o = task.ldp;
  if (o.estimator != ldp::Estimator::exact) {
    // Occupancy paths keep a few counts per queue length: nothing that grows with n or samples.
    return {0.0, 0.0, "a few counts per queue length"};
  }
  const double n = static_cast<double>(o.n), j = o.j;
  auto binomial = [](double a, double k) {
    return std::round(
        std::exp(std::lgamma(a + 1.0) - std::lgamma(k + 1.0) - std::lgamma(a - k + 1.0)));
  };
  const double states = binomial(n + j - 1.0, j - 1.0);
  const double rows = o.j >= 3 ? binomial(n + j - 2.0, j - 2.0) : 1.0;
  const double moves_per_row = o.policy == ldp::Policy::jsq   ? j + 3.0
                               : o.policy == ldp::Policy::jiq ? j + 3.0 * (j - 1.0)
                                                              : j;
  const double moves = rows * moves_per_row;
  const double row_bytes = 2.0 * 104.0 + 3.0 * malloc_chunk(kDouble * j);
  const double fixed = rows * row_bytes + kDouble * j * (n + j + 1.0);
  const double building = 3.0 * 48.0 * moves;
  const double running = 48.0 * moves + 16.0 * states + kDouble * (j - 1.0) * n;
  return {fixed + std::max(building, running), 0.0,
          fmt::format("{:.3g} chain states x 16 B + {:.3g} rows x {:g} B + {:.3g} moves x 48 B",
                      states, rows, row_bytes, moves)};
}

}  // namespace

CostEstimate estimate_cost(const Task& task, const model::System* system) {
  CostEstimate cost;
  switch (task.method) {
    case Method::exact:
      cost = exact_cost(task, *system);
      cost.memory = exact_memory(task, *system);
      break;
    case Method::simulate:
      cost = simulate_cost(task, *system);
      cost.memory = simulate_memory(task, *system);
      break;
    case Method::ldp:
      cost = ldp_cost(task);
      cost.memory = ldp_memory(task);
      break;
  }
  return cost;
}

}  // namespace detail

CostEstimate estimate_cost(const Task& task) {
  if (task.method == Method::ldp) return detail::estimate_cost(task, nullptr);
  const model::System system(model::Family(task.family), task.speeds, task.lambda);
  return detail::estimate_cost(task, &system);
}

std::string memory_text(double bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.{}f} {}", bytes, bytes < 10.0 ? 2 : bytes < 100.0 ? 1 : 0, kUnits[unit]);
}

double parse_memory_size(std::string_view text, std::string_view what) {
  auto refuse = [&](std::string_view why) -> double {
    throw InputError(
        fmt::format("{}'{}' {}; expected a memory size: a number with an optional "
                    "binary unit K, M, G or T (4G = 4GiB = 2^32 bytes; no unit: "
                    "bytes), e.g. 4G or 512M",
                    what.empty() ? std::string() : std::string(what) + ": ", text, why));
  };
  std::size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  double number = 0.0;
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + end, number);
  if (end == 0 || error != std::errc() || ptr != text.data() + end)
    return refuse("is not a memory size");
  std::string unit(text.substr(end));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty() && unit != "B") {
    const std::string_view prefixes = "KMGT";
    const std::size_t prefix = prefixes.find(unit[0]);
    const std::string_view rest = std::string_view(unit).substr(1);
    if (prefix == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "IB"))
      return refuse("has an unknown unit");
    shift = 10 * static_cast<int>(prefix + 1);
  }
  const double bytes = std::ldexp(number, shift);
  if (!(bytes >= 1.0)) return refuse("is less than one byte");
  if (bytes > std::ldexp(1.0, 60)) return refuse("is more than 2^60 bytes");
  return bytes;
}

void check_task_memory(const Plan& plan, const MemoryLimit& limit) {
  const Task* first = nullptr;
  std::size_t over = 0;
  for (const Task& task : plan.tasks) {
    if (task.memory + limit.baseline_bytes <= limit.bytes) continue;
    if (first == nullptr) first = &task;
    ++over;
  }
  if (first == nullptr) return;
  const std::size_t block = static_cast<std::size_t>(first->block);
  const std::string where =
      block < plan.block_locations.size() ? plan.block_locations[block] : plan.source;
  const std::string baseline = limit.baseline_bytes > 0.0
                                   ? fmt::format(" on top of the {} its process holds without it",
                                                 memory_text(limit.baseline_bytes))
                                   : "";
  throw InputError(fmt::format(
      "{}: task {} '{}' needs an estimated {} ({}){}, more than {}{}; expected tasks that fit (a "
      "smaller N, n or qmax), or more memory per task: --max-task-memory with fewer ranks per "
      "node (docs/running.md, \"Memory\")",
      where, first->id, describe(*first), memory_text(first->memory),
      estimate_cost(*first).memory.formula, baseline, limit.source,
      over > 1 ? fmt::format(" ({} more tasks of the plan are over it)", over - 1) : ""));
}

}  // namespace qsweep::sweep
