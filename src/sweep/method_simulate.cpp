// The method `simulate`: discrete-event simulation of redundancy and dispatching policies
// (src/sim), on the system of the shared keys (method_system.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "cost_detail.hpp"
#include "method_system.hpp"
#include "qsweep/sim/kernel.hpp"
#include "qsweep/sim/simulate.hpp"
#include "qsweep/sim/stability.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep::detail {
namespace {

const sim::Options& options_of(const Task& t) { return t.as<SimulateTask>().options; }
sim::Options& options_of(Task& t) { return t.as<SimulateTask>().options; }

// 3 for every task: the output analysis (docs/sim.md, "Output analysis") gives other numbers
// than the pilot and replications before it. (2 was dispatching on complete, which the pooled
// kernel may run.)
int numbers_version(const Task& /*t*/) { return 3; }

// ---- keys --------------------------------------------------------------------------------------

Value parse_service_values(const YAML::Node& node, const Locator& loc) {
  return positive_list(node, loc, "service_values");
}
Value parse_service_weights(const YAML::Node& node, const Locator& loc) {
  return positive_list(node, loc, "service_weights");
}
Value parse_initial_counts(const YAML::Node& node, const Locator& loc) {
  constexpr std::size_t kMaxInitialLength = 100'000;
  return length_weights(node, loc, "initial_counts", kMaxInitialLength + 1);
}

// The sojourn-time distribution's levels and times, and the transient mode's times (docs/sim.md).
constexpr std::size_t kMaxDistributionPoints = 1000;
constexpr std::size_t kMaxObserveTimes = 100'000;
Value parse_quantiles(const YAML::Node& node, const Locator& loc) {
  return increasing_list(node, loc, "quantiles", between(0, 1, true, true),
                         "a list of increasing levels in (0, 1)", kMaxDistributionPoints, false);
}
Value parse_tail_times(const YAML::Node& node, const Locator& loc) {
  return increasing_list(node, loc, "tail_times", above(0), "a list of increasing times > 0",
                         kMaxDistributionPoints, true);
}
Value parse_observe_times(const YAML::Node& node, const Locator& loc) {
  const std::string expected = "a list of increasing times >= 0, the last > 0";
  std::vector<double> times =
      increasing_list(node, loc, "observe_times", at_least(0), expected, kMaxObserveTimes, true);
  if (!(times.back() > 0.0))
    fail(loc.at(node), fmt::format("observe_times ends at time 0: no run; expected {}", expected));
  return times;
}

// The keys of steady-state runs (the output analysis), which the transient mode has not.
bool steady_state(const Draft& d) { return !options_of(d.task).transient(); }
constexpr std::string_view kSteadyState = "steady-state runs, without observe_times";

// common_random_numbers: the keys a block's tasks leave out of their random streams, as bits of
// sim::CommonRandomKey. Only keys that change how jobs are routed, never the arrival process or
// the service law, may be listed (docs/sim.md, "Common random numbers").
Value parse_common_random_numbers(const YAML::Node& node, const Locator& loc) {
  const std::string expected = "a non-empty list of: policy, policy_d";
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node),
         fmt::format("common_random_numbers is {}; expected {}", show(node), expected));
  std::int64_t bits = 0;
  for (const auto& item : node) {
    const std::string name = item.IsScalar() ? item.Scalar() : std::string();
    const auto key = parse_name<sim::CommonRandomKey>(name);
    if (!item.IsScalar() || !key)
      fail(loc.at(item),
           fmt::format("common_random_numbers lists {}, which {}; expected {}", show(item),
                       find_key(name, Method::simulate) != nullptr
                           ? "changes the model's arrivals or services, or how they are drawn"
                           : "is no key of method simulate",
                       expected));
    const auto bit = static_cast<std::int64_t>(*key);
    if ((bits & bit) != 0)
      fail(loc.at(item),
           fmt::format("common_random_numbers lists {} twice; expected {}", show(item), expected));
    bits |= bit;
  }
  return bits;
}

// Designated initializers leave the unnamed members at their defaults, as intended.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<KeySpec> keys() {
  std::vector<KeySpec> k = system_keys();
  k.push_back({.name = "qmax",
               .kind = Kind::integer,
               .help = "P(Q = q) is computed for q = 0..qmax (default 0)",
               .bounds = between(0, 100'000, false, false),
               .apply = [](Draft& d, const Value& v) { options_of(d.task).qmax = small_int(v); }});
  k.push_back({.name = "policy",
               .kind = Kind::choice,
               .help = "simulate: redundancy or dispatching policy (default redundancy_coc)",
               .choices = enum_names<sim::Policy>(),
               .selector = true,
               .apply = [](Draft& d, const Value& v) {
                 options_of(d.task).policy = *parse_name<sim::Policy>(text(v));
               }});
  k.push_back(
      {.name = "policy_d",
       .kind = Kind::integer,
       .help = "servers sampled by power_of_d, or replicas per job of meanfield redundancy_coc "
               "(default 2)",
       .bounds = between(1, kIntMax, false, false),
       .used_by = "policy power_of_d",
       .applies =
           [](const Draft& d) { return options_of(d.task).policy == sim::Policy::power_of_d; },
       .apply = [](Draft& d, const Value& v) { options_of(d.task).policy_d = small_int(v); }});
  k.push_back({.name = "service",
               .kind = Kind::choice,
               .help = "job size distribution, unit mean (default exponential)",
               .choices = enum_names<sim::ServiceKind>(),
               .selector = true,
               .apply = [](Draft& d, const Value& v) {
                 options_of(d.task).service.kind = *parse_name<sim::ServiceKind>(text(v));
               }});
  k.push_back(
      {.name = "cv2",
       .kind = Kind::real,
       .help = "squared coefficient of variation of the hyperexponential service",
       .bounds = at_least(1),
       .required = true,
       .used_by = "service hyperexponential",
       .applies =
           [](const Draft& d) {
             return options_of(d.task).service.kind == sim::ServiceKind::hyperexponential;
           },
       .apply = [](Draft& d, const Value& v) { options_of(d.task).service.cv2 = real(v); }});
  k.push_back({.name = "service_values",
               .kind = Kind::fixed,
               .help = "support of the empirical service distribution (rescaled to mean 1)",
               .required = true,
               .used_by = "service empirical",
               .applies =
                   [](const Draft& d) {
                     return options_of(d.task).service.kind == sim::ServiceKind::empirical;
                   },
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).service.values = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_service_values});
  k.push_back({.name = "service_weights",
               .kind = Kind::fixed,
               .help = "probabilities of service_values (default uniform)",
               .used_by = "service empirical",
               .applies =
                   [](const Draft& d) {
                     return options_of(d.task).service.kind == sim::ServiceKind::empirical;
                   },
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).service.weights = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_service_weights});
  k.push_back(
      {.name = "identical_replicas",
       .kind = Kind::boolean,
       .help = "replicas of a job share one size (default false: independent sizes)",
       .used_by = "policy redundancy_coc",
       .applies =
           [](const Draft& d) { return options_of(d.task).policy == sim::Policy::redundancy_coc; },
       .apply = [](Draft& d,
                   const Value& v) { options_of(d.task).identical_replicas = boolean(v); }});
  k.push_back(
      {.name = "longest_idle",
       .kind = Kind::boolean,
       .help = "a job that finds several idle servers starts at the one idle longest (default "
               "false: uniformly)",
       .used_by = "policy redundancy_cos",
       .applies =
           [](const Draft& d) { return options_of(d.task).policy == sim::Policy::redundancy_cos; },
       .apply = [](Draft& d, const Value& v) { options_of(d.task).longest_idle = boolean(v); }});
  k.push_back({.name = "observe_times",
               .kind = Kind::fixed,
               .help = "transient mode: E[Q(t)] and the occupancy at these times (a list, or "
                       "{linspace: [first, last, count]}), each replication run once from start "
                       "to the last (default: none, steady state)",
               .selector = true,
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).observe_times = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_observe_times});
  k.push_back({.name = "horizon",
               .kind = Kind::real,
               .help = "simulated time per replication after warm-up in the first round, doubled "
                       "in each further round (default 1e5)",
               .bounds = above(0),
               .used_by = kSteadyState,
               .applies = steady_state,
               .apply = [](Draft& d, const Value& v) { options_of(d.task).horizon = real(v); }});
  k.push_back({.name = "warmup",
               .kind = Kind::real,
               .help = "simulated time discarded first (default 0; MSER-5 detects the warm-up "
                       "after it)",
               .bounds = at_least(0),
               .used_by = kSteadyState,
               .applies = steady_state,
               .apply = [](Draft& d, const Value& v) { options_of(d.task).warmup = real(v); }});
  k.push_back({.name = "start",
               .kind = Kind::choice,
               .help = "state at time 0 of every replication: empty, fixed_point (mean-field, "
                       "dispatching on complete) or counts (initial_counts) (default empty)",
               .choices = enum_names<sim::Start>(),
               .selector = true,
               .apply = [](Draft& d, const Value& v) {
                 options_of(d.task).start = *parse_name<sim::Start>(text(v));
               }});
  k.push_back(
      {.name = "initial_counts",
       .kind = Kind::fixed,
       .help = "start counts: weight of servers holding k = 0, 1, ... jobs (counts or "
               "fractions, rounded to N servers)",
       .required = true,
       .used_by = "start counts",
       .applies = [](const Draft& d) { return options_of(d.task).start == sim::Start::counts; },
       .apply =
           [](Draft& d, const Value& v) {
             options_of(d.task).initial_counts = std::get<std::vector<double>>(v);
           },
       .parse_fixed = parse_initial_counts});
  k.push_back(
      {.name = "replications",
       .kind = Kind::integer,
       .help = "independent replications, each from `start` (default 8)",
       .bounds = between(2, 1'000'000, false, false),
       .apply = [](Draft& d, const Value& v) { options_of(d.task).replications = small_int(v); }});
  k.push_back({.name = "target_rel_half_width",
               .kind = Kind::real,
               .help =
                   "double the horizon until E[T]'s relative half-width is below this (default 0: "
                   "off)",
               .bounds = at_least(0),
               .used_by = kSteadyState,
               .applies = steady_state,
               .apply = [](Draft& d, const Value& v) {
                 options_of(d.task).target_rel_half_width = real(v);
               }});
  k.push_back({.name = "max_events",
               .kind = Kind::real,
               .help = "budget of arrivals and departures over all rounds (default 1e9)",
               .bounds = between(1, 1e18, false, false),
               .used_by = kSteadyState,
               .applies = steady_state,
               .apply = [](Draft& d, const Value& v) { options_of(d.task).max_events = real(v); }});
  k.push_back({.name = "quantiles",
               .kind = Kind::fixed,
               .help = "levels of the sojourn-time quantiles T_quantile (default [0.5, 0.9, 0.99])",
               .used_by = kSteadyState,
               .applies = steady_state,
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).quantiles = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_quantiles});
  k.push_back({.name = "tail_times",
               .kind = Kind::fixed,
               .help = "times t of the sojourn-time tail P(T > t), T_tail (a list, or {linspace: "
                       "[first, last, count]}; default: none)",
               .used_by = kSteadyState,
               .applies = steady_state,
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).tail_times = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_tail_times});
  k.push_back(
      {.name = "occupancy_max",
       .kind = Kind::integer,
       .help = "fraction of servers with >= i jobs for i = 1..occupancy_max (default 0)",
       .bounds = between(0, 100'000, false, false),
       .apply = [](Draft& d, const Value& v) { options_of(d.task).occupancy_max = small_int(v); }});
  k.push_back({.name = "common_random_numbers",
               .kind = Kind::fixed,
               .help = "keys (policy, policy_d) left out of the random streams: tasks that differ "
                       "only there share their arrivals and services (default: none)",
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).common_random_numbers = static_cast<unsigned>(integer(v));
                   },
               .parse_fixed = parse_common_random_numbers});
  return k;
}
#pragma GCC diagnostic pop

// ---- cost --------------------------------------------------------------------------------------

// Seconds per elementary step, measured with `qsweep eval` on the development machine
// (docs/sweep-format.md, "Cost estimates"); only the orders of magnitude matter.
constexpr double kSecondsPerEvent = 1.6e-7;  // one simulated arrival or departure
// Per event, each server of a job's type beyond two (the mean over arrivals): an arrival draws
// the type's servers (a d-subset of complete: d of them), places a replica at each or compares
// their queues, and a departure cancels the replicas. (Complete N = 4000, d = 2000 took 3.3 s
// where 2 ms was estimated without it.)
constexpr double kSecondsPerTypeServer = 1.3e-7;

CostEstimate simulate_cost(const Task& task, const model::System& system, const SystemSums& sums) {
  const auto& o = options_of(task);
  // The first round of the output analysis; a round that fails a diagnostic or the target is
  // followed by one of twice its length, up to max_events in all (not foreseeable here).
  // The transient mode runs once to its last time.
  const double run = o.transient() ? o.observe_times.back() : o.horizon + std::max(o.warmup, 0.0);
  const double replications = o.replications;
  const double arrivals = system.total_arrival_rate();  // a sum over the servers: once
  const double events = 2.0 * arrivals * run * replications;
  const double type_servers = sums.mean_type_size;
  const double per_event =
      kSecondsPerEvent + kSecondsPerTypeServer * std::max(0.0, type_servers - 2.0);
  return {events * per_event,
          o.transient()
              ? formula("{:.3g} events (2 x {:g} arrivals/time x {:g} time x {:g} replications, "
                        "transient) x {:.3g} s ({:.3g} servers per type)",
                        events, arrivals, run, replications, per_event, type_servers)
              : formula("{:.3g} events (2 x {:g} arrivals/time x {:g} time x {:g} replications; "
                        "more rounds up to max_events {:g}) x {:.3g} s ({:.3g} servers per type)",
                        events, arrivals, run, replications, o.max_events, per_event, type_servers),
          {}};
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
// with the result's four values and half-widths (96 + 32 B), then the result and its row (64 B).
// Jobs in the system of the redundancy and event kernels (a job record and its replicas' list
// nodes, about 48 B, twice that while their arrays grow): at most N rho / (1 - rho), the mean of
// independent M/M/1 queues. The pooled kernel (dispatching on complete with identical speeds,
// docs/sim.md "Pooled dispatching") holds only the speeds and a queue length per server (12 B)
// while replications run, and its result and row one value for all servers (its four per-server
// columns are written in pieces from that value): its peak is the replication. Per level of qmax
// and occupancy_max: a Level, a PairMoments, a replication value and two result values (88 B).
// The family's lists (graphs) as for exact, and the stability check of a listed family where it
// needs more. Held until the batch is written: the result and its row (a row of many values is
// written from its own cells; small rows of one batch are also copied into one image, not
// counted). `sums`: system_sums(system).
MemoryEstimate simulate_memory(const Task& task, const model::System& system,
                               const SystemSums& sums) {
  const auto& o = options_of(task);
  const double N = system.N();
  const bool redundancy = o.policy == sim::Policy::redundancy_coc;
  // As sim's resolve_kernel: the Markov race for exponential sizes of independent replicas.
  const bool markov = o.service.kind == sim::ServiceKind::exponential && !o.identical_replicas &&
                      o.policy != sim::Policy::redundancy_cos;
  const double race = markov ? 16.0 + (sums.identical_speeds ? 0.0 : 32.0) : 0.0;
  const double kernel = redundancy ? (markov ? 8.0 : 28.0) : (markov ? 56.0 : 132.0);
  const bool pooled = sim::resolve_kernel(system, o, sums.identical_speeds) == sim::Kernel::pooled;
  // Not pooled: the replication's counts and the per-server totals at the four window starts and
  // its end (5 x 16 B), the windows' per-server means (4 x 16 B), and across replications the
  // running moments of E[R_n] and the utilisation for each of the five windows (5 x 32 B).
  const double per_server = pooled ? 12.0 : 356.0 + race + kernel;
  const double rho = std::min(system.lambda / sums.mean_speed, 0.999);  // system.rho()
  const bool jobs_in_queues = !redundancy && markov;  // ints in the ring buffers counted above
  const double jobs =
      jobs_in_queues ? 0.0
                     : std::min(N * rho / (1.0 - rho), static_cast<double>(sim::kMaxJobsInSystem));
  // The quantile levels and tail times (a PairMoments and result values each, as a level) and
  // the transient mode's observations (a value per replication, moments, result and row).
  const double levels = o.qmax + 2.0 + o.occupancy_max +
                        static_cast<double>(o.quantiles.size() + o.tail_times.size()) +
                        static_cast<double>(o.observe_times.size()) * (1.0 + o.occupancy_max);
  const double row = (pooled ? 0.0 : 32.0 * N) + 16.0 * levels;
  const double result = row;
  const double replication = per_server * N + 2.0 * 48.0 * jobs + 88.0 * levels;
  const double building_result = pooled ? result : 104.0 * N + result;
  // The stability check of a family without listed types (model::check_stability's minimum over
  // sizes: the servers' order and a prefix of it, 4 B each) while the speeds (8 B) are held.
  const double symmetric_check = system.family.listed_types().empty() ? 16.0 * N : 0.0;
  const double peak = std::max(
      {replication, building_result, result + row, symmetric_check, sums.stability_check_bytes});
  return {
      peak + sums.family_bytes, result + row,
      pooled ? formula("{:g} servers x {:g} B", N, per_server)
             : formula("{:g} servers x {:g} B + {:.3g} jobs x 96 B; result row {:g} servers x 32 B",
                       N, per_server, jobs, N)};
}

CostEstimate cost(const Task& task, const model::System& system, const SystemSums& sums) {
  CostEstimate estimate = simulate_cost(task, system, sums);
  estimate.memory = simulate_memory(task, system, sums);
  return estimate;
}

// ---- expansion ---------------------------------------------------------------------------------

std::optional<CostEstimate> prepare(const Task& t, BlockContext& block) {
  KnownSystem& known = known_system(t, block);
  const sim::Options& o = options_of(t);
  try {
    sim::validate(o);
  } catch (const InputError& e) {
    fail_from(block.where(), e, "options the simulator accepts (docs/sim.md)");
  }
  try {
    sim::validate_start(*known.system, o);
  } catch (const InputError& e) {
    fail_from(block.where_of("start"), e,
              "a start the system has (docs/sim.md, \"Starting states\")");
  }
  // power_of_d samples among a job's compatible servers: more than the largest type has
  // would silently sample fewer. (The default 2 on singleton types is plain random routing.)
  const int largest = known.system->family.max_type_size();
  if (o.policy == sim::Policy::power_of_d && block.gives("policy_d") && o.policy_d > largest)
    fail(block.where_of("policy_d"),
         fmt::format("policy_d = {} exceeds the {} servers of the largest job type of {}; "
                     "expected at most {} (power_of_d samples among a job's servers)",
                     o.policy_d, largest, name_of(t.system().family.kind), largest));
  // A key listed in common_random_numbers that the block does not give shares nothing: a typo.
  for (const auto key : {sim::CommonRandomKey::policy, sim::CommonRandomKey::policy_d})
    if ((o.common_random_numbers & static_cast<unsigned>(key)) != 0 && !block.gives(name_of(key)))
      fail(
          block.where_of("common_random_numbers"),
          fmt::format("common_random_numbers lists {0}, which this block does not give; "
                      "expected only keys the block varies (give {0}, or leave it out of the list)",
                      name_of(key)));
  // On complete, jsq and jiq choose among the job's d servers: the family's default d = 2 would
  // make "jsq" JSQ(2) without a word (a factor 2.6 in E[T] at N = 1000, lambda = 0.9).
  const bool pool_policy = o.policy == sim::Policy::jsq || o.policy == sim::Policy::jiq;
  if (pool_policy && t.system().family.kind == model::FamilyKind::complete && !block.gives("d"))
    fail(block.where_of("policy"),
         fmt::format("policy {0} on family complete without d would choose among 2 sampled "
                     "servers (the family's default d); expected d given: equal to N for {0} "
                     "over every server (with lists of N, zip: [N, d]), or d: 2 for {1}(2)",
                     name_of(o.policy), o.policy == sim::Policy::jsq ? "JSQ" : "JIQ"));
  if (!check_stable(t, known, block)) return std::nullopt;
  return cost(t, *known.system, known.sums);
}

CostEstimate estimate(const Task& t) {
  const model::System system = build_system(t.system());
  return cost(t, system, system_sums(system));
}

// ---- execution and text ------------------------------------------------------------------------

// The keys listed in common_random_numbers at their defaults: tasks that differ only there get
// one stream key. The list itself stays (it changes how the kernels draw).
void common_streams(Task& t) {
  sim::Options& o = options_of(t);
  const sim::Options defaults;
  if ((o.common_random_numbers & static_cast<unsigned>(sim::CommonRandomKey::policy)) != 0)
    o.policy = defaults.policy;
  if ((o.common_random_numbers & static_cast<unsigned>(sim::CommonRandomKey::policy_d)) != 0)
    o.policy_d = defaults.policy_d;
}

void run(const Task& task, const SharedEngines& /*engines*/, TaskOutcome& outcome) {
  const model::System system = build_system(task.system());
  // The policy's own stability region, not only eq. (2) (random routing, power_of_d).
  const sim::PolicyStability stability = sim::check_stability(system, options_of(task));
  if (!stability.stable) {
    outcome.status = TaskStatus::unstable;
    outcome.error = stability.reason;
    return;
  }
  const std::array<std::uint64_t, 2> stream = stream_key(task);  // named by its content
  const auto& result = outcome.result.emplace<sim::Result>(
      sim::simulate(system, options_of(task), stream[0], stream[1]));
  outcome.status = TaskStatus::done;
  outcome.warning = stability.warning;
  if (!result.warning.empty())
    outcome.warning += (outcome.warning.empty() ? "" : "; ") + result.warning;
}

std::string describe_task(const Task& t) {
  const sim::Options& o = options_of(t);
  std::string policy(name_of(o.policy));
  if (o.policy == sim::Policy::power_of_d) policy += fmt::format("(d={})", o.policy_d);
  if (o.longest_idle) policy += "(longest_idle)";
  std::string service(name_of(o.service.kind));
  if (o.service.kind == sim::ServiceKind::hyperexponential)
    service += fmt::format("(cv2={:g})", o.service.cv2);
  if (o.transient())
    return fmt::format("simulate {} {} service={} observe_times={} to {:g} replications={}", policy,
                       family_text(t.system()), service, o.observe_times.size(),
                       o.observe_times.back(), o.replications);
  return fmt::format("simulate {} {} service={} horizon={:g} replications={}", policy,
                     family_text(t.system()), service, o.horizon, o.replications);
}

std::string category_of(const Task& t) {  // for every task at expansion: no formatting
  std::string text(name_of(t.system().family.kind));
  text += ' ';
  text += name_of(options_of(t).policy);
  return text;
}

// ---- results columns ---------------------------------------------------------------------------

// A column of one value per server. A pooled result holds one value for all servers: its row
// holds it once (`Repeated`), and its N values are made only in pieces, as the file is written.
Column server_column(std::string name, std::string description, std::string units,
                     sim::ServerValues sim::Result::*member) {
  return {{std::move(name), std::move(description), std::move(units), ColumnType::f64_ragged},
          [member](const Task&, const TaskOutcome& o) -> CellValue {
            const sim::Result* r = done_result<sim::Result>(o);
            if (!r) return std::vector<double>{};
            const sim::ServerValues& values = r->*member;
            if (values.one_value()) return Repeated{values.front(), values.size()};
            return values.to_vector();
          },
          servers};
}

std::vector<Column> columns() {
  using R = sim::Result;
  std::vector<Column> c{task_id_column()};
  add_system_parameters(c);
  c.push_back(parameter("policy", "redundancy or dispatching policy", "", ColumnType::str,
                        [](const Task& t) { return std::string(name_of(options_of(t).policy)); }));
  c.push_back(parameter("policy_d", "servers sampled by power_of_d (-1: other policy)", "",
                        ColumnType::i64, [](const Task& t) {
                          return options_of(t).policy == sim::Policy::power_of_d
                                     ? std::int64_t{options_of(t).policy_d}
                                     : kNone;
                        }));
  c.push_back(
      parameter("service", "job size distribution (unit mean)", "", ColumnType::str,
                [](const Task& t) { return std::string(name_of(options_of(t).service.kind)); }));
  c.push_back(parameter("cv2", "squared coefficient of variation of hyperexponential sizes", "",
                        ColumnType::f64, [](const Task& t) {
                          return options_of(t).service.kind == sim::ServiceKind::hyperexponential
                                     ? options_of(t).service.cv2
                                     : kNaN;
                        }));
  c.push_back(parameter(
      "identical_replicas", "1 if the replicas of a job share one size", "", ColumnType::i64,
      [](const Task& t) { return std::int64_t{options_of(t).identical_replicas}; }));
  c.push_back(parameter("longest_idle",
                        "1 if redundancy_cos starts a job at its longest idle server (-1: other "
                        "policy)",
                        "", ColumnType::i64, [](const Task& t) {
                          return options_of(t).policy == sim::Policy::redundancy_cos
                                     ? std::int64_t{options_of(t).longest_idle}
                                     : kNone;
                        }));
  c.push_back(parameter(
      "common_random_numbers", "keys left out of the random streams, comma-separated (empty: none)",
      "", ColumnType::str, [](const Task& t) {
        std::string keys;
        for (const auto key : {sim::CommonRandomKey::policy, sim::CommonRandomKey::policy_d})
          if ((options_of(t).common_random_numbers & static_cast<unsigned>(key)) != 0) {
            if (!keys.empty()) keys += ',';
            keys += name_of(key);
          }
        return keys;
      }));
  // The keys of steady-state runs: NaN for a task of the transient mode, which has none.
  const auto steady = [](const Task& t, double value) {
    return options_of(t).transient() ? kNaN : value;
  };
  c.push_back(parameter("horizon",
                        "simulated time per replication after warm-up in the first round (NaN: "
                        "transient mode)",
                        "time", ColumnType::f64,
                        [steady](const Task& t) { return steady(t, options_of(t).horizon); }));
  c.push_back(parameter(
      "warmup", "warm-up asked for (NaN: detected, see warmup_used)", "time", ColumnType::f64,
      [](const Task& t) { return options_of(t).warmup >= 0.0 ? options_of(t).warmup : kNaN; }));
  c.push_back(parameter("start", "state at time 0: empty, fixed_point or counts", "",
                        ColumnType::str,
                        [](const Task& t) { return std::string(name_of(options_of(t).start)); }));
  c.push_back(parameter("replications", "replications asked for", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).replications}; }));
  c.push_back(parameter(
      "target_rel_half_width", "target relative half-width of E[T] (0: none; NaN: transient mode)",
      "", ColumnType::f64,
      [steady](const Task& t) { return steady(t, options_of(t).target_rel_half_width); }));
  c.push_back(parameter("max_events", "budget of arrivals and departures (NaN: transient mode)", "",
                        ColumnType::f64,
                        [steady](const Task& t) { return steady(t, options_of(t).max_events); }));
  c.push_back(parameter("qmax", "P(Q = q) is estimated for q = 0..qmax", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).qmax}; }));
  c.push_back(parameter("occupancy_max", "occupancy x_i is estimated for i = 1..occupancy_max", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).occupancy_max}; }));
  // The distribution's levels and times (steady state), the transient mode's times.
  const auto levels = [](const Task& t) {
    return options_of(t).transient() ? std::size_t{0} : options_of(t).quantiles.size();
  };
  const auto tails = [](const Task& t) { return options_of(t).tail_times.size(); };
  const auto observed = [](const Task& t) { return options_of(t).observe_times.size(); };
  c.push_back(parameter(
      "quantiles", "levels of the sojourn-time quantiles T_quantile (empty: transient mode)", "",
      ColumnType::f64_vector,
      [levels](const Task& t) {
        return levels(t) > 0 ? options_of(t).quantiles : std::vector<double>{};
      },
      levels));
  c.push_back(parameter(
      "tail_times", "times t of the sojourn-time tail P(T > t), T_tail", "time",
      ColumnType::f64_vector, [](const Task& t) { return options_of(t).tail_times; }, tails));
  c.push_back(parameter(
      "observe_times", "transient mode: the times of EQ_t and occupancy_t (empty: steady state)",
      "time", ColumnType::f64_vector, [](const Task& t) { return options_of(t).observe_times; },
      observed));
  const std::pair<const char*, double R::*> estimates[] = {
      {"EQ", &R::EQ},           {"EQ_hw", &R::EQ_hw}, {"VarQ", &R::VarQ},
      {"VarQ_hw", &R::VarQ_hw}, {"ET", &R::ET},       {"ET_hw", &R::ET_hw}};
  const char* estimate_text[] = {"time-average number of jobs in the system E[Q]",
                                 "95% half-width of EQ",
                                 "time-average variance of the number of jobs in the system",
                                 "95% half-width of VarQ",
                                 "mean sojourn time of a job E[T]",
                                 "95% half-width of ET"};
  const char* estimate_units[] = {"jobs", "jobs", "jobs^2", "jobs^2", "time", "time"};
  for (std::size_t i = 0; i < std::size(estimates); ++i) {
    c.push_back(result_f64<R>(estimates[i].first, estimate_text[i], estimate_units[i],
                              estimates[i].second));
    if (i == 1) {  // after EQ and EQ_hw: the same per server
      c.push_back(derived_f64<R>("EQ_per_server", "mean number of jobs per server E[Q] / N", "jobs",
                                 "EQ", &R::EQ, per_server));
      c.push_back(derived_f64<R>("EQ_per_server_hw", "95% half-width of EQ_per_server", "jobs",
                                 "EQ_hw", &R::EQ_hw, per_server));
    }
  }
  const auto series = [](const Task& t) {
    return static_cast<std::size_t>(options_of(t).qmax) + 1;
  };
  const auto occupancy = [](const Task& t) {
    return static_cast<std::size_t>(options_of(t).occupancy_max);
  };
  c.push_back(result_vector<R>("pmf", "P(Q = q), q = 0..qmax (time fraction)", "",
                               ColumnType::f64_vector, &R::pmf, series));
  c.push_back(result_vector<R>("pmf_hw", "95% half-widths of pmf", "", ColumnType::f64_vector,
                               &R::pmf_hw, series));
  c.push_back(result_vector<R>("occupancy",
                               "fraction of servers holding >= i replicas (jobs, but for "
                               "redundancy_coc), i = 1..occupancy_max",
                               "", ColumnType::f64_vector, &R::occupancy, occupancy));
  c.push_back(result_vector<R>("occupancy_hw", "95% half-widths of occupancy", "",
                               ColumnType::f64_vector, &R::occupancy_hw, occupancy));
  const auto types = [](const Task& t) { return listable_types(t, sim::kMaxTrackedTypes); };
  add_type_columns<R>(c, types);
  c.push_back(result_vector<R>("EQ_type_hw", "95% half-widths of EQ_type", "jobs",
                               ColumnType::f64_ragged, &R::EQ_type_hw, types));
  c.push_back(result_vector<R>("ET_type", "mean sojourn time of type S", "time",
                               ColumnType::f64_ragged, &R::ET_type, types));
  c.push_back(result_vector<R>("ET_type_hw", "95% half-widths of ET_type", "time",
                               ColumnType::f64_ragged, &R::ET_type_hw, types));
  c.push_back(server_column("ER_server",
                            "mean number of replicas at server n (jobs, but for redundancy_coc)",
                            "replicas", &R::ER_server));
  c.push_back(
      server_column("ER_server_hw", "95% half-widths of ER_server", "replicas", &R::ER_server_hw));
  c.push_back(
      server_column("utilisation", "fraction of time server n is busy", "", &R::utilisation));
  c.push_back(
      server_column("utilisation_hw", "95% half-widths of utilisation", "", &R::utilisation_hw));
  c.push_back(result_vector<R>("T_quantile", "sojourn-time quantiles at the levels of quantiles",
                               "time", ColumnType::f64_vector, &R::T_quantile, levels));
  c.push_back(result_vector<R>("T_quantile_hw",
                               "95% half-widths of T_quantile (sectioning over the replications)",
                               "time", ColumnType::f64_vector, &R::T_quantile_hw, levels));
  c.push_back(result_vector<R>("T_tail", "P(T > t) at each of tail_times", "",
                               ColumnType::f64_vector, &R::T_tail, tails));
  c.push_back(result_vector<R>("T_tail_hw", "95% half-widths of T_tail", "", ColumnType::f64_vector,
                               &R::T_tail_hw, tails));
  c.push_back(result_vector<R>("EQ_t", "transient mode: E[Q(t)] at each of observe_times", "jobs",
                               ColumnType::f64_vector, &R::EQ_t, observed));
  c.push_back(result_vector<R>("EQ_t_hw", "95% half-widths of EQ_t (over the replications)", "jobs",
                               ColumnType::f64_vector, &R::EQ_t_hw, observed));
  const auto path = [](const Task& t) {
    return options_of(t).observe_times.size() *
           static_cast<std::size_t>(options_of(t).occupancy_max);
  };
  c.push_back(result_vector<R>("occupancy_t",
                               "transient mode: x_i(t), i = 1..occupancy_max, at each of "
                               "observe_times, row-major (times x occupancy_max values)",
                               "", ColumnType::f64_ragged, &R::occupancy_t, path));
  c.push_back(result_vector<R>("occupancy_t_hw", "95% half-widths of occupancy_t", "",
                               ColumnType::f64_ragged, &R::occupancy_t_hw, path));
  const auto replications = [](const Task& t) {
    return static_cast<std::size_t>(options_of(t).replications);
  };
  c.push_back(result_vector<R>("EQ_replications",
                               "E[Q] of each replication over the window kept (paired comparisons)",
                               "jobs", ColumnType::f64_vector, &R::EQ_replications, replications));
  c.push_back(result_vector<R>("ET_replications",
                               "E[T] of each replication over the window kept (paired comparisons)",
                               "time", ColumnType::f64_vector, &R::ET_replications, replications));
  // Coupled tasks only: rows without common random numbers reserve no space.
  const auto coupled = [](const Task& t) { return options_of(t).coupled_streams(); };
  c.push_back(result_vector<R>(
      "cumulative_time",
      "times after the warm-up asked for at which cumulative_replications holds totals "
      "(common random numbers)",
      "time", ColumnType::f64_ragged, &R::cumulative_time, [coupled](const Task& t) {
        return coupled(t) ? static_cast<std::size_t>(sim::kMaxCumulativeTimes) : 0;
      }));
  c.push_back(result_vector<R>(
      "cumulative_replications",
      "per replication and cumulative_time: integral of Q, sum and number of sojourn times "
      "since the warm-up asked for (paired comparisons on a common window)",
      "", ColumnType::f64_ragged, &R::cumulative_replications,
      [coupled, replications](const Task& t) {
        return coupled(t) ? replications(t) * sim::kMaxCumulativeTimes * 3 : 0;
      }));
  c.push_back(
      result_f64<R>("warmup_used", "simulated time discarded per replication", "time", &R::warmup));
  c.push_back(result_i64<R>("warmup_detected", "1 if the warm-up was detected (MSER-5)",
                            &R::warmup_detected));
  c.push_back(result_i64<R>("replications_used", "replications run", &R::replications));
  c.push_back(
      result_f64<R>("hw99_factor", "99% half-width = 95% half-width x this", "", &R::hw99_factor));
  c.push_back(result_i64<R>("events", "arrivals and departures simulated", &R::events));
  c.push_back(result_i64<R>("flags",
                            "failed diagnostics of the intervals, a bit each (0: trusted; "
                            "docs/results-layout.md)",
                            &R::flags));
  c.push_back(result_f64<R>("correlation_time", "integrated autocorrelation time of Q (estimate)",
                            "time", &R::correlation_time));
  c.push_back({{"events_per_second", "simulated events per wall-clock second", "1/s",
                ColumnType::f64, false, kMaxStringLength, true},
               [](const Task&, const TaskOutcome& o) -> CellValue {
                 const R* r = done_result<R>(o);
                 return r && o.wall_seconds > 0.0 ? static_cast<double>(r->events) / o.wall_seconds
                                                  : kNaN;
               },
               {}});
  return c;
}

}  // namespace

const MethodAdapter& simulate_method() {
  static const MethodAdapter adapter{
      .method = Method::simulate,
      .description = "discrete-event simulation with confidence intervals",
      .random = true,
      .numbers = numbers_version,
      .common_streams = common_streams,
      .keys = keys(),
      .columns = columns(),
      .derive = derive_system,
      .list_bytes =
          [](const Task& t) {
            const sim::Options& o = options_of(t);
            return system_list_bytes(t.system()) +
                   (o.service.values.size() + o.service.weights.size()) * sizeof(double);
          },
      .prepare = prepare,
      .estimate = estimate,
      .run = run,
      .describe = describe_task,
      .category = category_of,
  };
  return adapter;
}

}  // namespace qsweep::sweep::detail
