// The method `ldp`: the probability that some queue of a many-server JSQ-like system gets long
// (src/ldp), with its large-deviation rate.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>

#include "cost_detail.hpp"
#include "method_system.hpp"
#include "qsweep/common/checked.hpp"
#include "qsweep/ldp/ldp.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep::detail {
namespace {

const ldp::Options& options_of(const Task& t) { return t.as<LdpTask>().options; }
ldp::Options& options_of(Task& t) { return t.as<LdpTask>().options; }

constexpr double kMaxLdpServers = 0x1.0p53;  // n: exact in a double

// ---- keys --------------------------------------------------------------------------------------

Value parse_initial_counts(const YAML::Node& node, const Locator& loc) {
  const std::string expected = "a list of counts >= 0 (index k: queues of length k at time 0)";
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node), fmt::format("initial_counts is {}; expected {}", show(node), expected));
  std::vector<std::int64_t> counts;
  std::int64_t total = 0;  // checked: a wrapped sum could equal n and pass as valid
  for (const auto& item : node) {
    const auto count = read_integer(item, loc, "a count", expected);
    if (count < 0) fail(loc.at(item), fmt::format("a count is {}; expected {}", count, expected));
    const auto sum = checked_add(total, count);
    if (!sum || *sum > (std::int64_t{1} << 53))  // n is at most 2^53
      fail(loc.at(item), fmt::format("initial_counts sum to more than 2^53 at this count; expected "
                                     "counts summing to n (at most 2^53)"));
    total = *sum;
    counts.push_back(count);
  }
  return counts;
}

// Designated initializers leave the unnamed members at their defaults, as intended.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<KeySpec> keys() {
  std::vector<KeySpec> k{lambda_key()};  // the load of a system's lambda; ldp reads its value
  k.push_back({.name = "policy",
               .kind = Kind::choice,
               .help = "ldp: dispatching policy of the many-server system (default jsq)",
               .choices = enum_names<ldp::Policy>(),
               .selector = true,
               .apply = [](Draft& d, const Value& v) {
                 options_of(d.task).policy = *parse_name<ldp::Policy>(text(v));
               }});
  k.push_back(
      {.name = "policy_d",
       .kind = Kind::integer,
       .help = "servers sampled by power_of_d, or replicas per job of meanfield redundancy_coc "
               "(default 2)",
       .bounds = between(1, kIntMax, false, false),
       .used_by = "policy power_of_d",
       .applies =
           [](const Draft& d) { return options_of(d.task).policy == ldp::Policy::power_of_d; },
       .apply = [](Draft& d, const Value& v) { options_of(d.task).policy_d = small_int(v); }});
  k.push_back({.name = "n",
               .kind = Kind::integer,
               .help = "number of servers (rate 1 each)",
               .bounds = between(1, kMaxLdpServers, false, false),
               .required = true,
               .apply = [](Draft& d, const Value& v) { options_of(d.task).n = integer(v); }});
  k.push_back({.name = "j",
               .kind = Kind::integer,
               .help = "the event: some queue reaches j jobs by time T (queues start at 1)",
               .bounds = between(2, 1'000'000, false, false),
               .required = true,
               .apply = [](Draft& d, const Value& v) { options_of(d.task).j = small_int(v); }});
  k.push_back({.name = "T",
               .kind = Kind::real,
               .help = "time horizon of the event",
               .bounds = above(0),
               .required = true,
               .apply = [](Draft& d, const Value& v) { options_of(d.task).T = real(v); }});
  k.push_back(
      {.name = "estimator",
       .kind = Kind::choice,
       .help = "exact (lumped chain), monte_carlo or importance sampling (default importance)",
       .choices = enum_names<ldp::Estimator>(),
       .selector = true,
       .apply = [](Draft& d, const Value& v) {
         options_of(d.task).estimator = *parse_name<ldp::Estimator>(text(v));
       }});
  k.push_back(
      {.name = "samples",
       .kind = Kind::real,
       .help = "sample paths (upper bound with target_rel_error; default 1e5)",
       .bounds = between(1, 1e15, false, false),
       .used_by = "estimators monte_carlo and importance",
       .applies =
           [](const Draft& d) { return options_of(d.task).estimator != ldp::Estimator::exact; },
       .apply = [](Draft& d,
                   const Value& v) { options_of(d.task).samples = std::floor(real(v)); }});
  k.push_back(
      {.name = "target_rel_error",
       .kind = Kind::real,
       .help = "stop sampling once the relative error is below this (default 0: off)",
       .bounds = at_least(0),
       .used_by = "estimators monte_carlo and importance",
       .applies =
           [](const Draft& d) { return options_of(d.task).estimator != ldp::Estimator::exact; },
       .apply = [](Draft& d, const Value& v) { options_of(d.task).target_rel_error = real(v); }});
  k.push_back(
      {.name = "truncation",
       .kind = Kind::real,
       .help = "exact estimator: bound on the neglected probability mass (default 1e-12)",
       .bounds = between(0, 1, true, true),
       .used_by = "estimator exact",
       .applies =
           [](const Draft& d) { return options_of(d.task).estimator == ldp::Estimator::exact; },
       .apply = [](Draft& d, const Value& v) { options_of(d.task).truncation = real(v); }});
  k.push_back(
      {.name = "initial_counts",
       .kind = Kind::fixed,
       .help = "queues of length k = 0, 1, ... at time 0, summing to n (default: all length 1)",
       .apply =
           [](Draft& d, const Value& v) {
             options_of(d.task).initial_counts = std::get<std::vector<std::int64_t>>(v);
           },
       .parse_fixed = parse_initial_counts});
  return k;
}
#pragma GCC diagnostic pop

void derive(Draft& d, const BlockContext& block) {
  ldp::Options& o = options_of(d.task);
  o.lambda = d.load.value;  // servers of rate 1: rho and lambda coincide
  if (o.policy == ldp::Policy::power_of_d && o.policy_d > o.n)
    fail(block.where_of("policy_d"),
         fmt::format("policy_d = {} exceeds n = {}; expected at most n", o.policy_d, o.n));
}

// ---- cost --------------------------------------------------------------------------------------

// Seconds per elementary step, measured with `qsweep eval` on the development machine
// (docs/sweep-format.md, "Cost estimates"); only the orders of magnitude matter.
constexpr double kSecondsPerPathEvent = 3.5e-8;  // one event of an occupancy-process path
constexpr double kSecondsPerChainStep = 1.5e-8;  // one (state, uniformization step) update

CostEstimate ldp_cost(const Task& task) {
  const auto& o = options_of(task);
  const double n = static_cast<double>(o.n);
  const double path_events = n * (1.0 + o.lambda) * o.T;
  if (o.estimator == ldp::Estimator::exact) {
    // Occupancy states: queue-length counts over 0..j-1 summing to n, C(n + j - 1, j - 1);
    // uniformization needs about the expected number of events plus a few standard deviations.
    const double states =
        std::exp(std::lgamma(n + o.j) - std::lgamma(n + 1.0) - std::lgamma(o.j * 1.0));
    const double steps = path_events + 10.0 * std::sqrt(path_events) + 10.0;
    return {states * steps * kSecondsPerChainStep,
            formula("{:.3g} chain states x {:.3g} uniformization steps", states, steps),
            {}};
  }
  return {o.samples * path_events * kSecondsPerPathEvent,
          formula("{:g} paths x {:.3g} events", o.samples, path_events),
          {}};
}

// The exact ldp chain (src/ldp/exact_chain.cpp): the probability vectors current and next over
// the C(n + j - 1, j - 1) occupancy states (16 B per state); its rows, one per occupancy of the
// outer lengths (C(n + j - 2, j - 2) for j >= 3, else one), each 104 B plus three heap vectors
// of j counts (twice the 104 while the row list grows); the moves (48 B), at most j + 3 per row
// (jsq), j + 3 (j - 1) (jiq) or j (power_of_d), kept twice and once more by stable_sort while the
// chain is built, when the probability vectors do not exist yet; the binomial table (j rows of
// n + j + 1 counts).
MemoryEstimate ldp_memory(const Task& task) {
  const auto& o = options_of(task);
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
          formula("{:.3g} chain states x 16 B + {:.3g} rows x {:g} B + {:.3g} moves x 48 B", states,
                  rows, row_bytes, moves)};
}

CostEstimate estimate(const Task& task) {
  CostEstimate cost = ldp_cost(task);
  cost.memory = ldp_memory(task);
  return cost;
}

std::optional<CostEstimate> prepare(const Task& t, BlockContext& block) {
  try {
    ldp::validate(options_of(t));
  } catch (const InputError& e) {
    fail_from(block.where(), e, "options the ldp estimators accept (docs/ldp.md)");
  }
  return estimate(t);
}

// ---- execution and text ------------------------------------------------------------------------

void run(const Task& task, const SharedEngines& /*engines*/, TaskOutcome& outcome) {
  const std::array<std::uint64_t, 2> stream = stream_key(task);  // named by its content
  const auto& result =
      outcome.result.emplace<ldp::Result>(ldp::estimate(options_of(task), stream[0], stream[1]));
  outcome.status = TaskStatus::done;
  outcome.warning = result.warning;
}

std::string describe_task(const Task& t) {
  const ldp::Options& o = options_of(t);
  std::string policy(name_of(o.policy));
  if (o.policy == ldp::Policy::power_of_d) policy += fmt::format("(d={})", o.policy_d);
  std::string text = fmt::format("ldp {} n={} j={} T={:g} lambda={:.6g} {}", policy, o.n, o.j, o.T,
                                 o.lambda, name_of(o.estimator));
  if (o.estimator != ldp::Estimator::exact) text += fmt::format(" samples={:g}", o.samples);
  return text;
}

std::string category_of(const Task& t) {
  return fmt::format("{} {}", name_of(options_of(t).policy), name_of(options_of(t).estimator));
}

// ---- results columns ---------------------------------------------------------------------------

std::vector<Column> columns() {
  using R = ldp::Result;
  std::vector<Column> c{task_id_column()};
  const auto estimator = [](const Task& t) { return options_of(t).estimator; };
  c.push_back(parameter("policy", "dispatching policy", "", ColumnType::str,
                        [](const Task& t) { return std::string(name_of(options_of(t).policy)); }));
  c.push_back(parameter("policy_d", "queues sampled by power_of_d (-1: other policy)", "",
                        ColumnType::i64, [](const Task& t) {
                          return options_of(t).policy == ldp::Policy::power_of_d
                                     ? std::int64_t{options_of(t).policy_d}
                                     : kNone;
                        }));
  c.push_back(parameter("n", "number of servers (rate 1 each)", "", ColumnType::i64,
                        [](const Task& t) { return options_of(t).n; }));
  c.push_back(parameter("j", "event: some queue reaches j jobs by time T", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).j}; }));
  c.push_back(parameter("T", "time horizon", "time", ColumnType::f64,
                        [](const Task& t) { return options_of(t).T; }));
  c.push_back(parameter("lambda", "per-server arrival rate (total n * lambda)", "1/time",
                        ColumnType::f64, [](const Task& t) { return options_of(t).lambda; }));
  c.push_back(
      parameter("estimator", "exact, monte_carlo or importance", "", ColumnType::str,
                [](const Task& t) { return std::string(name_of(options_of(t).estimator)); }));
  c.push_back(parameter("samples", "sample paths asked for (NaN: exact estimator)", "",
                        ColumnType::f64, [estimator](const Task& t) {
                          return estimator(t) == ldp::Estimator::exact ? kNaN
                                                                       : options_of(t).samples;
                        }));
  c.push_back(parameter("target_rel_error", "target relative error (0: none; NaN: exact)", "",
                        ColumnType::f64, [estimator](const Task& t) {
                          return estimator(t) == ldp::Estimator::exact
                                     ? kNaN
                                     : options_of(t).target_rel_error;
                        }));
  c.push_back(parameter("truncation", "exact estimator: bound on the neglected mass (NaN: other)",
                        "", ColumnType::f64, [estimator](const Task& t) {
                          return estimator(t) == ldp::Estimator::exact ? options_of(t).truncation
                                                                       : kNaN;
                        }));
  c.push_back(parameter(
      "initial_counts", "queues of length k at time 0, k = 0.. (count 0: all of length 1)", "",
      ColumnType::i64_ragged, [](const Task& t) { return options_of(t).initial_counts; },
      [](const Task& t) { return options_of(t).initial_counts.size(); }));
  c.push_back(result_f64<R>("probability", "P(E_j^n(T)) (exact: a guaranteed lower bound)", "",
                            &R::probability));
  c.push_back(
      result_f64<R>("ci_low", "lower end of the 95% interval (exact: bound)", "", &R::ci_low));
  c.push_back(
      result_f64<R>("ci_high", "upper end of the 95% interval (exact: bound)", "", &R::ci_high));
  c.push_back(result_f64<R>("log_probability", "ln of probability (finite where it underflows)", "",
                            &R::log_probability));
  c.push_back(result_f64<R>("log_rate", "(1/n) ln probability", "", &R::log_rate));
  c.push_back(result_f64<R>("log_rate_low", "(1/n) ln ci_low", "", &R::log_rate_low));
  c.push_back(result_f64<R>("log_rate_high", "(1/n) ln ci_high", "", &R::log_rate_high));
  c.push_back(
      result_f64<R>("relative_error", "standard error / probability", "", &R::relative_error));
  c.push_back(result_f64<R>("samples_used", "sample paths used (exact: 0)", "", &R::samples));
  c.push_back(result_f64<R>("hits", "sample paths that reached the event", "", &R::hits));
  c.push_back(result_f64<R>("cpu_seconds", "CPU time of the estimate", "s", &R::cpu_seconds));
  c.back().spec.per_run = true;
  c.push_back(result_f64<R>("theory_rate", "large-deviation rate -lim (1/n) ln P (NaN: none)", "",
                            &R::theory_rate));
  c.push_back(
      result_f64<R>("events", "events simulated (exact: uniformization steps)", "", &R::events));
  c.push_back(result_f64<R>("tilt", "importance sampling tilt u (1: none)", "", &R::tilt));
  c.push_back(
      result_f64<R>("states", "states of the lumped chain (exact estimator)", "", &R::states));
  return c;
}

}  // namespace

const MethodAdapter& ldp_method() {
  static const MethodAdapter adapter{
      .method = Method::ldp,
      .description = "many-server rare-event probability and its large-deviation rate",
      .random = true,
      .keys = keys(),
      .columns = columns(),
      .derive = derive,
      .list_bytes = [](const Task& t) -> std::uint64_t {
        return options_of(t).initial_counts.size() * sizeof(std::int64_t);
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
