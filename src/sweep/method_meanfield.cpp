// The method `meanfield`: the N -> infinity limit of many unit-rate servers under a JSQ-like
// policy or redundancy-d (src/meanfield): fixed point of the occupancy, per-server E[Q] and E[T],
// and the fluid trajectory from a given start. Deterministic: it needs no seed.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "cost_detail.hpp"
#include "method_system.hpp"
#include "qsweep/meanfield/meanfield.hpp"
#include "qsweep/meanfield/refined.hpp"

namespace qsweep::sweep::detail {
namespace {

const meanfield::Options& options_of(const Task& t) { return t.as<MeanfieldTask>().options; }
meanfield::Options& options_of(Task& t) { return t.as<MeanfieldTask>().options; }

// ---- keys --------------------------------------------------------------------------------------

Value parse_initial_counts(const YAML::Node& node, const Locator& loc) {
  return length_weights(node, loc, "initial_counts",
                        static_cast<std::size_t>(meanfield::kMaxLevels) + 1);
}

// Numbers version 2 (docs/meanfield.md, "Numbers version"): the levels of power_of_d and random
// (and redundancy_coc with d = 1) are computed as exp(e log1p(lambda - 1)), which changes their
// last digits (and those of EQ, ET) from version 1's recursion; every fluid trajectory is
// integrated by another method (faces located, Cash-Karp steps, a compensated state).
int numbers_version(const Task& t) {
  const meanfield::Options& o = options_of(t);
  const bool levels = o.policy == meanfield::Policy::power_of_d ||
                      o.policy == meanfield::Policy::random ||
                      (o.policy == meanfield::Policy::redundancy_coc && o.policy_d == 1);
  return levels || o.horizon > 0.0 ? 2 : 1;
}

// The sojourn-time law's levels and times (docs/meanfield.md, "Sojourn-time distribution").
constexpr std::size_t kMaxDistributionPoints = 1000;
Value parse_quantiles(const YAML::Node& node, const Locator& loc) {
  return increasing_list(node, loc, "quantiles", between(0, 1, true, true),
                         "a list of increasing levels in (0, 1)", kMaxDistributionPoints, false);
}
Value parse_tail_times(const YAML::Node& node, const Locator& loc) {
  return increasing_list(node, loc, "tail_times", above(0), "a list of increasing times > 0",
                         kMaxDistributionPoints, true);
}

bool has_trajectory(const Draft& d) { return d.task.as<MeanfieldTask>().options.horizon > 0.0; }
bool refined(const Draft& d) { return d.task.as<MeanfieldTask>().options.order > 0; }

// policy_d: servers sampled by power_of_d, replicas per job of redundancy_coc (the `d` of family
// complete in exact and simulate blocks).
bool uses_d(meanfield::Policy policy) {
  return policy == meanfield::Policy::power_of_d || policy == meanfield::Policy::redundancy_coc;
}

// Designated initializers leave the unnamed members at their defaults, as intended.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<KeySpec> keys() {
  std::vector<KeySpec> k{lambda_key()};  // per-server arrival rate; servers have rate 1
  k.push_back({.name = "policy",
               .kind = Kind::choice,
               .help = "meanfield: dispatching policy, or redundancy_coc, of the N -> infinity "
                       "system (default power_of_d)",
               .choices = enum_names<meanfield::Policy>(),
               .selector = true,
               .apply = [](Draft& d, const Value& v) {
                 options_of(d.task).policy = *parse_name<meanfield::Policy>(text(v));
               }});
  k.push_back(
      {.name = "policy_d",
       .kind = Kind::integer,
       .help = "servers sampled by power_of_d, or replicas per job of meanfield redundancy_coc "
               "(default 2)",
       .bounds = between(1, 1'000'000, false, false),
       .used_by = "policy power_of_d, redundancy_coc",
       .applies = [](const Draft& d) { return uses_d(options_of(d.task).policy); },
       .apply = [](Draft& d, const Value& v) { options_of(d.task).policy_d = small_int(v); }});
  k.push_back({.name = "order",
               .kind = Kind::integer,
               .help = "refined mean field: 0 the N -> infinity limit, 1 with the 1/N term of "
                       "E[X^N] for N servers (also of a trajectory), 2 with the 1/N^2 term too "
                       "(steady state; power_of_d, random; default 0)",
               .bounds = between(0, 2, false, false),
               .selector = true,
               .apply = [](Draft& d, const Value& v) { options_of(d.task).order = small_int(v); }});
  k.push_back({.name = "N",
               .kind = Kind::integer,
               .help = "meanfield: servers of the system that order >= 1 refines towards",
               .bounds = between(1, 1e15, false, false),
               .required = true,
               .used_by = "order >= 1",
               .applies = refined,
               .apply = [](Draft& d, const Value& v) { options_of(d.task).N = integer(v); }});
  k.push_back(
      {.name = "occupancy_max",
       .kind = Kind::integer,
       .help = "report x_1..x_occupancy_max (default 0: until x_k < tolerance)",
       .bounds = between(0, meanfield::kMaxLevels, false, false),
       .apply = [](Draft& d, const Value& v) { options_of(d.task).occupancy_max = small_int(v); }});
  k.push_back({.name = "tolerance",
               .kind = Kind::real,
               .help = "the occupancy stops before the first x_k below it (default 1e-15)",
               .bounds = between(0, 1, true, true),
               .apply = [](Draft& d, const Value& v) { options_of(d.task).tolerance = real(v); }});
  k.push_back({.name = "horizon",
               .kind = Kind::real,
               .help = "end of the fluid trajectory x(t) (default 0: no trajectory)",
               .bounds = between(0, 1e6, false, false),
               .apply = [](Draft& d, const Value& v) { options_of(d.task).horizon = real(v); }});
  k.push_back(
      {.name = "time_points",
       .kind = Kind::integer,
       .help = "times of the trajectory, evenly spaced over [0, horizon] (default 11)",
       .bounds = between(1, 100'000, false, false),
       .used_by = "horizon > 0",
       .applies = has_trajectory,
       .apply = [](Draft& d, const Value& v) { options_of(d.task).time_points = small_int(v); }});
  k.push_back({.name = "initial_counts",
               .kind = Kind::fixed,
               .help = "trajectory start: weight of queues of length k = 0, 1, ... (counts or "
                       "fractions; default: all queues empty)",
               .used_by = "horizon > 0",
               .applies = has_trajectory,
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).initial_counts = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_initial_counts});
  k.push_back({.name = "quantiles",
               .kind = Kind::fixed,
               .help = "levels of the limit's sojourn-time quantiles T_quantile (default: none)",
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).quantiles = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_quantiles});
  k.push_back({.name = "tail_times",
               .kind = Kind::fixed,
               .help = "times t of the limit's sojourn-time tail P(T > t), T_tail (a list, or "
                       "{linspace: [first, last, count]}; default: none)",
               .apply =
                   [](Draft& d, const Value& v) {
                     options_of(d.task).tail_times = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_tail_times});
  return k;
}
#pragma GCC diagnostic pop

void derive(Draft& d, const BlockContext& block) {
  meanfield::Options& o = options_of(d.task);
  o.lambda = d.load.value;  // servers of rate 1: rho and lambda coincide
  if (!(o.lambda < 1.0))
    fail(block.where_of("lambda"),
         fmt::format("lambda = {:g} has no mean-field fixed point; expected lambda < 1 (servers "
                     "of rate 1)",
                     o.lambda));
  if (o.order > 0) {
    try {
      meanfield::validate_refinement(o);
    } catch (const InputError& e) {
      const bool about_n = o.N < o.policy_d && o.policy == meanfield::Policy::power_of_d;
      fail_from(block.where_of(about_n ? "N" : "order"), e,
                "a refinement the meanfield method has (docs/meanfield.md)");
    }
  }
}

// ---- cost --------------------------------------------------------------------------------------

// Seconds per occupancy level and per Runge-Kutta step and level (orders of magnitude);
// redundancy_coc integrates every level over 100 to 500 quadrature nodes, twice (levels, solve).
constexpr double kSecondsPerLevel = 1e-8;
constexpr double kSecondsPerCocLevel = 5e-5;
// A Runge-Kutta step (Cash-Karp, six evaluations of the field) per level integrated, the
// levels kept plus the 8 empty ones above them (ldp::fluid_trajectory): power_of_d evaluates
// pow() per level; jsq/jiq do not (measured with `qsweep eval`, horizon 2000: 5.4 s and 0.65 s).
constexpr double kSecondsPerStepLevel = 2e-7;
constexpr double kSecondsPerStepLevelFace = 3e-8;  // jsq, jiq
constexpr double kTrajectoryMargin = 8.0;
// Order 1: Gaussian elimination on the Kronecker system of the Lyapunov equation, L^2 unknowns
// in a band of half-width L (about L^4 steps of 1e-8 to 3e-8 s measured; L = 9 to 50 levels).
constexpr double kSecondsPerLyapunovFlop = 2e-8;
// Order 2: the third moments' Kronecker system, L2^3 unknowns in a band of half-width L2^2
// (elimination within the band, most of it skipped where it is still zero: measured 0.05 s at
// L2 = 14 and 0.6 s at L2 = 20, about 1e-9 s per L2^7).
constexpr double kSecondsPerThirdMomentFlop = 1e-9;
// Order 1 with a trajectory: one evaluation of the refined field per value of (x, W, V).
constexpr double kSecondsPerRefinedFieldValue = 1e-8;

CostEstimate estimate(const Task& task) {
  const auto& o = options_of(task);
  const double levels = meanfield::levels(o);
  const double steps = o.horizon / o.dt;
  const double values = static_cast<double>(meanfield::trajectory_size(o)) + 2.0 * levels;
  const double per_level =
      o.policy == meanfield::Policy::redundancy_coc ? kSecondsPerCocLevel : kSecondsPerLevel;
  const bool faces = o.policy == meanfield::Policy::jsq || o.policy == meanfield::Policy::jiq;
  const double integrated = levels + kTrajectoryMargin;
  // The refinement solves on its own levels (down to x_k = 1e-300), whatever K is.
  const bool lyapunov = o.order > 0 && o.policy == meanfield::Policy::power_of_d && o.policy_d > 1;
  const double L = lyapunov ? meanfield::refined_levels(o.policy_d, o.lambda) : 0.0;
  CostEstimate cost{
      levels * per_level +
          steps * integrated * (faces ? kSecondsPerStepLevelFace : kSecondsPerStepLevel),
      formula("{:g} levels + {:.3g} Runge-Kutta steps x {:g} levels", levels, steps, integrated),
      {}};
  cost.memory = {16.0 * values, 16.0 * values,
                 formula("{:.3g} occupancy and trajectory values x 16 B", values)};
  if (o.order > 0) {  // the texts of the limit's tasks stay as they were
    const double band = L * L * (2.0 * L + 1.0) * 8.0;            // the Kronecker system's band
    double refined_values = (o.order >= 2 ? 3.0 : 2.0) * levels;  // V (V2) and occupancy_N
    cost.seconds += L * L * L * L * kSecondsPerLyapunovFlop;
    if (lyapunov) cost.formula += formula(" + {:g}^4 Lyapunov steps", L);
    double work_bytes = band;
    if (o.order >= 2 && lyapunov) {
      // The third moments: L2^3 unknowns in a band of half-width L2^2.
      const double L2 = meanfield::refined_levels2(o.policy_d, o.lambda);
      cost.seconds += L2 * L2 * L2 * L2 * L2 * L2 * L2 * kSecondsPerThirdMomentFlop;
      cost.formula += formula(" + {:g}^7 third-moment steps", L2);
      work_bytes = std::max(work_bytes, L2 * L2 * L2 * (2.0 * L2 * L2 + 1.0) * 8.0);
    }
    if (o.horizon > 0.0) {
      // V(t): L + L^2 + L values per RK4 step, four evaluations of the field each (L: at least
      // the steady levels, more if the fluid path climbs higher).
      const double Lt = std::max(L, levels + kTrajectoryMargin);
      refined_values += 2.0 * static_cast<double>(meanfield::trajectory_size(o)) + o.time_points;
      if (lyapunov) {
        cost.seconds += steps * 4.0 * Lt * Lt * kSecondsPerRefinedFieldValue;
        cost.formula += formula(" + {:.3g} RK4 steps x 4 x {:g}^2 refined values", steps, Lt);
      }
      work_bytes += 6.0 * (Lt * Lt + 2.0 * Lt) * 8.0;
    }
    cost.memory.bytes += 16.0 * refined_values + work_bytes;
    cost.memory.result_bytes += 16.0 * refined_values;
    cost.memory.formula += formula(" + {:.3g} refined values x 16 B + {:.3g} B of work space",
                                   refined_values, work_bytes);
  }
  return cost;
}

std::optional<CostEstimate> prepare(const Task& t, BlockContext& block) {
  try {
    meanfield::validate(options_of(t));
  } catch (const InputError& e) {
    fail_from(block.where(), e, "options the meanfield method accepts (docs/meanfield.md)");
  }
  return estimate(t);
}

// ---- execution and text ------------------------------------------------------------------------

void run(const Task& task, const SharedEngines& /*engines*/, TaskOutcome& outcome) {
  outcome.result.emplace<meanfield::Result>(meanfield::solve(options_of(task)));
  outcome.status = TaskStatus::done;
}

std::string describe_task(const Task& t) {
  const meanfield::Options& o = options_of(t);
  std::string policy(name_of(o.policy));
  if (uses_d(o.policy)) policy += fmt::format("(d={})", o.policy_d);
  std::string text = fmt::format("meanfield {} lambda={:.6g}", policy, o.lambda);
  if (o.horizon > 0.0) text += fmt::format(" horizon={:g}", o.horizon);
  if (o.order > 0) text += fmt::format(" order={} N={}", o.order, o.N);
  return text;
}

std::string category_of(const Task& t) { return std::string(name_of(options_of(t).policy)); }

// ---- results columns ---------------------------------------------------------------------------

// A scalar of the refinement: NaN for a task of order 0, which does not compute it.
Column refined_f64(std::string name, std::string description, std::string units,
                   double meanfield::Result::*member) {
  Column c = result_f64<meanfield::Result>(std::move(name), std::move(description),
                                           std::move(units), member);
  c.value = [member](const Task& t, const TaskOutcome& o) -> CellValue {
    const auto* r = done_result<meanfield::Result>(o);
    return r && options_of(t).order > 0 ? r->*member : kNaN;
  };
  return c;
}

std::vector<Column> columns() {
  using R = meanfield::Result;
  std::vector<Column> c{task_id_column()};
  const auto levels = [](const Task& t) {
    return static_cast<std::size_t>(meanfield::levels(options_of(t)));
  };
  const auto times = [](const Task& t) {
    return options_of(t).horizon > 0.0 ? static_cast<std::size_t>(options_of(t).time_points)
                                       : std::size_t{0};
  };
  const auto trajectory = [](const Task& t) { return meanfield::trajectory_size(options_of(t)); };
  c.push_back(parameter("policy", "dispatching policy", "", ColumnType::str,
                        [](const Task& t) { return std::string(name_of(options_of(t).policy)); }));
  c.push_back(parameter(
      "policy_d",
      "servers sampled by power_of_d, replicas per job of redundancy_coc (-1: other policy)", "",
      ColumnType::i64, [](const Task& t) {
        return uses_d(options_of(t).policy) ? std::int64_t{options_of(t).policy_d} : kNone;
      }));
  c.push_back(parameter("lambda", "per-server arrival rate (servers of rate 1)", "1/time",
                        ColumnType::f64, [](const Task& t) { return options_of(t).lambda; }));
  c.push_back(parameter("tolerance", "the occupancy stops before the first x_k below it", "",
                        ColumnType::f64, [](const Task& t) { return options_of(t).tolerance; }));
  c.push_back(parameter("occupancy_max", "levels asked for (0: until x_k < tolerance)", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).occupancy_max}; }));
  c.push_back(parameter("levels",
                        "K: occupancy levels reported (occupancy_max, else the levels with "
                        "x_k >= tolerance and the longest initial queue)",
                        "", ColumnType::i64,
                        [levels](const Task& t) { return static_cast<std::int64_t>(levels(t)); }));
  c.push_back(parameter("horizon", "end of the fluid trajectory (0: none)", "time", ColumnType::f64,
                        [](const Task& t) { return options_of(t).horizon; }));
  c.push_back(parameter("time_points", "times of the trajectory (-1: no trajectory)", "",
                        ColumnType::i64, [](const Task& t) {
                          return options_of(t).horizon > 0.0
                                     ? std::int64_t{options_of(t).time_points}
                                     : kNone;
                        }));
  c.push_back(parameter(
      "initial_counts",
      "trajectory start: weight of queues of length k, k = 0.. (empty: all empty)", "",
      ColumnType::f64_ragged, [](const Task& t) { return options_of(t).initial_counts; },
      [](const Task& t) { return options_of(t).initial_counts.size(); }));
  c.push_back(result_f64<R>("ER_per_server",
                            "mean number of replicas per server, sum_i x_i (not truncated; jobs, "
                            "but for redundancy_coc)",
                            "replicas", &R::EQ));
  c.push_back(derived_f64<R>(
      "EQ_per_server",
      "mean number of jobs per server: ER_per_server (redundancy_coc: ER_per_server / d)", "jobs",
      "ER_per_server", &R::EQ, [](const Task& t, double replicas) {
        const meanfield::Options& o = options_of(t);
        return o.policy == meanfield::Policy::redundancy_coc
                   ? replicas / static_cast<double>(o.policy_d)
                   : replicas;
      }));
  c.push_back(
      result_f64<R>("ET", "mean sojourn time of a job: EQ_per_server / lambda", "time", &R::ET));
  c.push_back(result_vector<R>("occupancy",
                               "fixed point x_1..x_K (fraction of servers holding >= i replicas: "
                               "jobs, but for redundancy_coc); "
                               "levels beyond K are below tolerance or cut by occupancy_max",
                               "", ColumnType::f64_ragged, &R::occupancy, levels));
  c.push_back(result_f64<R>("tail", "x_{K+1} of the fixed point: the first level not reported", "",
                            &R::tail));
  c.push_back(result_vector<R>("times", "times of the trajectory, evenly spaced over [0, horizon]",
                               "time", ColumnType::f64_ragged, &R::times, times));
  c.push_back(result_vector<R>("trajectory",
                               "fluid x_1(t)..x_K(t) at each of the times, row-major "
                               "(time_points x levels values)",
                               "", ColumnType::f64_ragged, &R::trajectory, trajectory));
  c.push_back(result_f64<R>("trajectory_tail",
                            "largest x_{K+1}(t) over the times: what the trajectory rows omit", "",
                            &R::trajectory_tail));
  // Refined mean field (order >= 1), appended after the columns of the limit.
  const auto refined_length = [levels](const Task& t) {
    return options_of(t).order > 0 ? levels(t) : std::size_t{0};
  };
  c.push_back(parameter("order",
                        "refined mean field: 0 the limit, 1 with the 1/N term, 2 with "
                        "the 1/N^2 term too",
                        "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).order}; }));
  c.push_back(
      parameter("N", "servers the refinement is for (-1: order 0)", "", ColumnType::i64,
                [](const Task& t) { return options_of(t).order > 0 ? options_of(t).N : kNone; }));
  c.push_back(result_vector<R>("V",
                               "order 1: V_1..V_K, E[X_i^N] = x_i + V_i / N + O(1/N^2) (empty "
                               "with order 0)",
                               "", ColumnType::f64_ragged, &R::V, refined_length));
  c.push_back(refined_f64("EQ_per_server_V",
                          "order 1: sum_i V_i over every level, the 1/N term of EQ_per_server",
                          "jobs", &R::EQ_V));
  c.push_back(result_vector<R>("occupancy_N",
                               "order 1: x_i + V_i / N (order 2: + V2_i / N^2), i = 1..K (empty "
                               "with order 0)",
                               "", ColumnType::f64_ragged, &R::occupancy_N, refined_length));
  c.push_back(refined_f64("EQ_per_server_N",
                          "order 1: EQ_per_server + EQ_per_server_V / N (order 2: + "
                          "EQ_per_server_V2 / N^2), mean jobs per server of N servers",
                          "jobs", &R::EQ_N));
  c.push_back(refined_f64("ET_N", "order 1: EQ_per_server_N / lambda (Little)", "time", &R::ET_N));
  // Format version 6: the 1/N^2 terms (order 2) and the refined trajectory (order 1).
  const auto second_length = [levels](const Task& t) {
    return options_of(t).order >= 2 ? levels(t) : std::size_t{0};
  };
  c.push_back(result_vector<R>("V2",
                               "order 2: V2_1..V2_K, E[X_i^N] = x_i + V_i / N + V2_i / N^2 + "
                               "O(1/N^3) (empty with order 0 and 1)",
                               "", ColumnType::f64_ragged, &R::V2, second_length));
  c.push_back(result_f64<R>("EQ_per_server_V2",
                            "order 2: sum_i V2_i over every level, the 1/N^2 term of "
                            "EQ_per_server (NaN with order 0 and 1)",
                            "jobs", &R::EQ_V2));
  c.back().value = [](const Task& t, const TaskOutcome& o) -> CellValue {
    const auto* r = done_result<meanfield::Result>(o);
    return r && options_of(t).order >= 2 ? r->EQ_V2 : kNaN;
  };
  const auto refined_trajectory = [trajectory](const Task& t) {
    return options_of(t).order > 0 ? trajectory(t) : std::size_t{0};
  };
  c.push_back(result_vector<R>("trajectory_V",
                               "order 1 with a trajectory: V_1(t)..V_K(t) at each of the times, "
                               "row-major, E[X^N(t)] = x(t) + V(t) / N + O(1/N^2)",
                               "", ColumnType::f64_ragged, &R::trajectory_V, refined_trajectory));
  c.push_back(result_vector<R>("trajectory_N",
                               "order 1 with a trajectory: x_i(t) + V_i(t) / N at each of the "
                               "times, row-major",
                               "", ColumnType::f64_ragged, &R::trajectory_N, refined_trajectory));
  c.push_back(result_vector<R>(
      "trajectory_EQ_per_server_V",
      "order 1 with a trajectory: sum_i V_i(t) over every level at each of the times, "
      "EQ_per_server at N servers (t) = sum_i x_i(t) + trajectory_EQ_per_server_V / N",
      "jobs", ColumnType::f64_ragged, &R::trajectory_EQ_V,
      [times](const Task& t) { return options_of(t).order > 0 ? times(t) : std::size_t{0}; }));
  // The limit's sojourn-time law (format version 6), appended last.
  const auto levels_asked = [](const Task& t) { return options_of(t).quantiles.size(); };
  const auto tails = [](const Task& t) { return options_of(t).tail_times.size(); };
  c.push_back(parameter(
      "quantiles", "levels of T_quantile", "", ColumnType::f64_vector,
      [](const Task& t) { return options_of(t).quantiles; }, levels_asked));
  c.push_back(parameter(
      "tail_times", "times t of T_tail", "time", ColumnType::f64_vector,
      [](const Task& t) { return options_of(t).tail_times; }, tails));
  c.push_back(result_vector<R>("T_quantile",
                               "the limit's sojourn-time quantiles at the levels of quantiles "
                               "(the limit's also with order 1)",
                               "time", ColumnType::f64_vector, &R::T_quantile, levels_asked));
  c.push_back(result_vector<R>("T_tail", "the limit's P(T > t) at each of tail_times", "",
                               ColumnType::f64_vector, &R::T_tail, tails));
  return c;
}

}  // namespace

const MethodAdapter& meanfield_method() {
  static const MethodAdapter adapter{
      .method = Method::meanfield,
      .description = "N -> infinity limit: mean-field fixed point and fluid trajectory",
      .random = false,
      .numbers = numbers_version,
      .keys = keys(),
      .columns = columns(),
      .derive = derive,
      .list_bytes = [](const Task& t) -> std::uint64_t {
        return options_of(t).initial_counts.size() * sizeof(double);
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
