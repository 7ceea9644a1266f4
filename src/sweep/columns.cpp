#include "qsweep/sweep/columns.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include "keys.hpp"

namespace qsweep::sweep {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kNone = -1;

// One column: its spec, how a row's cell is computed, and (vector and ragged columns) the
// length planned for a task.
struct Column {
  ColumnSpec spec;
  std::function<CellValue(const Task&, const TaskOutcome&)> value;
  std::function<std::size_t(const Task&)> length;
};

// The method's result, only for tasks that ran to the end.
template <class R>
const R* done_result(const TaskOutcome& o) {
  return o.status == TaskStatus::done ? std::get_if<R>(&o.result) : nullptr;
}

// ---- column builders ---------------------------------------------------------------------------

Column parameter(std::string name, std::string description, std::string units, ColumnType type,
                 std::function<CellValue(const Task&)> value,
                 std::function<std::size_t(const Task&)> length = {}) {
  return {{std::move(name), std::move(description), std::move(units), type, true},
          [value = std::move(value)](const Task& t, const TaskOutcome&) { return value(t); },
          std::move(length)};
}

template <class R>
Column result_f64(std::string name, std::string description, std::string units, double R::*member) {
  return {{std::move(name), std::move(description), std::move(units), ColumnType::f64},
          [member](const Task&, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            return r ? r->*member : kNaN;
          },
          {}};
}

template <class R, class Int>
Column result_i64(std::string name, std::string description, Int R::*member) {
  return {{std::move(name), std::move(description), "", ColumnType::i64},
          [member](const Task&, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            return r ? static_cast<std::int64_t>(r->*member) : kNone;
          },
          {}};
}

template <class R>
Column result_vector(std::string name, std::string description, std::string units, ColumnType type,
                     std::vector<double> R::*member,
                     std::function<std::size_t(const Task&)> length) {
  return {{std::move(name), std::move(description), std::move(units), type},
          [member, length](const Task& t, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            if (!r || length(t) == 0) return std::vector<double>{};
            return r->*member;
          },
          std::move(length)};
}

// An integer vector result (server sets as int64 bitmasks: bit 63 wraps to negative).
template <class R, class Int>
Column result_ints(std::string name, std::string description, std::vector<Int> R::*member,
                   std::function<std::size_t(const Task&)> length) {
  return {{std::move(name), std::move(description), "", ColumnType::i64_ragged},
          [member, length](const Task& t, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            if (!r || length(t) == 0) return std::vector<std::int64_t>{};
            const auto& values = r->*member;
            return std::vector<std::int64_t>(values.begin(), values.end());
          },
          std::move(length)};
}

// The columns every method with per-type results starts them with: the types and their means.
template <class R>
void add_type_columns(std::vector<Column>& c,
                      const std::function<std::size_t(const Task&)>& types) {
  c.push_back(result_ints<R>("type_servers",
                             "job type S as a bitmask (bit n: server n + 1), enumerate() order",
                             &R::type_servers, types));
  c.push_back(result_vector<R>("type_p", "probability p_S of the type", "", ColumnType::f64_ragged,
                               &R::type_p, types));
  c.push_back(result_vector<R>("EQ_type", "mean number of type-S jobs E[Q_S]", "jobs",
                               ColumnType::f64_ragged, &R::EQ_type, types));
}

// ---- planned lengths ---------------------------------------------------------------------------

// Number of job types of the task's family (the store asks for every ragged column of every
// task; consecutive tasks mostly share a family, so one cached family per thread suffices).
double type_count(const Task& t) {
  thread_local model::FamilyParams cached_params;
  thread_local double cached_types = -1.0;
  if (cached_types < 0.0 || !(cached_params == t.family)) {
    cached_types = model::Family(t.family).num_types();
    cached_params = t.family;
  }
  return cached_types;
}

std::size_t listable_types(const Task& t, double limit) {
  if (t.family.N > model::kMaxMaskServers) return 0;
  const double types = std::round(type_count(t));  // binomials come from lgamma: 90.99999...
  return types <= limit ? static_cast<std::size_t>(types) : 0;
}

std::size_t servers(const Task& t) { return static_cast<std::size_t>(t.family.N); }

// ---- groups ------------------------------------------------------------------------------------

Column task_id_column() {
  return parameter("task_id", "row of this task in /tasks", "", ColumnType::i64,
                   [](const Task& t) { return static_cast<std::int64_t>(t.id); });
}

void add_system_parameters(std::vector<Column>& c) {
  auto uses = [](const Task& t) { return model::family_uses(t.family.kind); };
  c.push_back(parameter("family", "compatibility family", "", ColumnType::str,
                        [](const Task& t) { return std::string(name_of(t.family.kind)); }));
  c.push_back(parameter("N", "number of servers", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.family.N}; }));
  c.push_back(parameter(
      "d", "servers per type of the complete family (-1: other family)", "", ColumnType::i64,
      [uses](const Task& t) { return uses(t).d ? std::int64_t{t.family.d} : kNone; }));
  c.push_back(parameter("eps", "asymmetry parameter eps (NaN: not used by the family)", "",
                        ColumnType::f64,
                        [uses](const Task& t) { return uses(t).eps ? t.family.eps : kNaN; }));
  c.push_back(parameter(
      "degree", "degree of random_regular (-1: other family)", "", ColumnType::i64,
      [uses](const Task& t) { return uses(t).degree ? std::int64_t{t.family.degree} : kNone; }));
  c.push_back(parameter(
      "edge_prob", "edge probability of erdos_renyi (NaN: other family)", "", ColumnType::f64,
      [uses](const Task& t) { return uses(t).edge_prob ? t.family.edge_prob : kNaN; }));
  c.push_back(parameter("graph_seed", "seed of the random graph or tree (-1: none)", "",
                        ColumnType::i64, [uses](const Task& t) {
                          const bool random = uses(t).graph_seed && t.family.tree_edges.empty();
                          return random ? static_cast<std::int64_t>(t.family.graph_seed) : kNone;
                        }));
  c.push_back(parameter(
      "rows", "torus rows (-1: other family)", "", ColumnType::i64,
      [uses](const Task& t) { return uses(t).torus_shape ? std::int64_t{t.family.rows} : kNone; }));
  c.push_back(parameter(
      "cols", "torus columns (-1: other family)", "", ColumnType::i64,
      [uses](const Task& t) { return uses(t).torus_shape ? std::int64_t{t.family.cols} : kNone; }));
  c.push_back(parameter(
      "speeds", "server speeds mu_1..mu_N (count 0: all speeds 1)", "1/time",
      ColumnType::f64_ragged, [](const Task& t) { return t.speeds; },
      [](const Task& t) { return t.speeds.size(); }));
  c.push_back(parameter("lambda", "per-server arrival rate (total rate N * lambda)", "1/time",
                        ColumnType::f64, [](const Task& t) { return t.lambda; }));
  c.push_back(parameter("rho", "load lambda / mean speed", "", ColumnType::f64, [](const Task& t) {
    const double mean = t.speeds.empty() ? 1.0
                                         : std::accumulate(t.speeds.begin(), t.speeds.end(), 0.0) /
                                               static_cast<double>(t.speeds.size());
    return t.lambda / mean;
  }));
}

std::vector<Column> exact_columns() {
  using R = exact::Result;
  std::vector<Column> c{task_id_column()};
  add_system_parameters(c);
  c.push_back(parameter("policy", "redundancy_coc (cancel on completion) or redundancy_cos", "",
                        ColumnType::str,
                        [](const Task& t) { return std::string(name_of(t.exact.policy)); }));
  c.push_back(parameter("qmax", "P(Q = q) is given for q = 0..qmax", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.exact.qmax}; }));
  c.push_back(parameter("light_traffic", "1 if alpha was asked for", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.exact.light_traffic}; }));
  c.push_back(parameter("per_type", "1 if per-type and per-server results were asked for", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.exact.per_type}; }));
  const auto joint = [](const Task& t) { return t.exact.joint_qmax >= 0; };
  c.push_back(parameter("joint_qmax", "joint pmf on counts 0..joint_qmax per type (-1: off)", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.exact.joint_qmax}; }));
  c.push_back(parameter(
      "joint_bin", "counts per bin of the joint pmf on each axis (-1: off)", "", ColumnType::i64,
      [joint](const Task& t) { return joint(t) ? std::int64_t{t.exact.joint_bin} : kNone; }));
  // Stability is known for unstable tasks too (the result says so).
  c.push_back({{"stable", "1 if the system is stable (paper eq. 2), 0 if not, -1 unknown", "",
                ColumnType::i64},
               [](const Task&, const TaskOutcome& o) -> CellValue {
                 const R* r = std::get_if<R>(&o.result);
                 return r ? std::int64_t{r->stable} : kNone;
               },
               {}});
  c.push_back({{"locally_stable", "1 if locally stable (paper eq. 5), 0 if not, -1 unknown", "",
                ColumnType::i64},
               [](const Task&, const TaskOutcome& o) -> CellValue {
                 const R* r = std::get_if<R>(&o.result);
                 return r ? std::int64_t{r->locally_stable} : kNone;
               },
               {}});
  c.push_back(
      {{"engine", "exact engine used (general, symmetric-complete, ...)", "", ColumnType::str},
       [](const Task&, const TaskOutcome& o) -> CellValue {
         const R* r = done_result<R>(o);
         return r ? r->engine : std::string();
       },
       {}});
  c.push_back(result_f64<R>("C", "P(Q = 0), the normalisation constant", "", &R::C));
  c.push_back(result_f64<R>("log_C", "ln P(Q = 0) (finite where C underflows)", "", &R::log_C));
  c.push_back(result_f64<R>("EQ", "mean number of jobs E[Q]", "jobs", &R::EQ));
  c.push_back(result_f64<R>("VarQ", "variance of the number of jobs", "jobs^2", &R::VarQ));
  c.push_back(result_f64<R>("ET", "mean sojourn time E[T] (Little)", "time", &R::ET));
  c.push_back(result_f64<R>("scaled_EQ", "(1 - rho) E[Q] (tends to 1 in heavy traffic)", "",
                            &R::scaled_EQ));
  const auto series = [](const Task& t) { return static_cast<std::size_t>(t.exact.qmax) + 1; };
  c.push_back(result_vector<R>("pmf", "P(Q = q), q = 0..qmax", "", ColumnType::f64_vector, &R::pmf,
                               series));
  c.push_back(
      result_vector<R>("alpha", "light-traffic coefficients alpha_q (paper eq. 30), q = 0..qmax",
                       "", ColumnType::f64_vector, &R::alpha,
                       [series](const Task& t) { return t.exact.light_traffic ? series(t) : 0; }));
  const auto types = [](const Task& t) {
    return t.exact.per_type ? listable_types(t, kMaxStoredTypes) : 0;
  };
  add_type_columns<R>(c, types);
  c.push_back(result_vector<R>("ET_type", "mean sojourn time of type S, E[T_S]", "time",
                               ColumnType::f64_ragged, &R::ET_type, types));
  c.push_back(result_vector<R>("scaled_EQ_type", "(1 - rho) E[Q_S] / p_S", "",
                               ColumnType::f64_ragged, &R::scaled_EQ_type, types));
  c.push_back(result_vector<R>("ER_server", "mean number of replicas at server n, E[R_n], n = 1..N",
                               "jobs", ColumnType::f64_ragged, &R::ER_server, [](const Task& t) {
                                 const bool replicas =
                                     t.exact.policy == exact::Policy::redundancy_coc;
                                 return t.exact.per_type && replicas ? servers(t) : 0;
                               }));
  const auto joint_axes = [joint](const Task& t) -> std::size_t {
    const double count = std::round(type_count(t));
    return joint(t) && count <= exact::kMaxJointTypes ? static_cast<std::size_t>(count) : 0;
  };
  // (bins per axis)^axes; 0 for options that exact::validate() refuses (tasks that bypassed it).
  const auto joint_bins = [joint_axes](const Task& t) -> std::size_t {
    const std::int64_t bin = t.exact.joint_bin;
    if (joint_axes(t) == 0 || bin < 1) return 0;
    const std::int64_t per_axis = (t.exact.joint_qmax + bin) / bin;  // ceil((qmax + 1) / bin)
    const double bins = std::pow(static_cast<double>(per_axis), static_cast<double>(joint_axes(t)));
    return bins <= exact::kMaxJointBins ? static_cast<std::size_t>(bins) : 0;
  };
  c.push_back(result_vector<R>(
      "joint_pmf",
      "P(every Q_S in its bin): row-major over the types in type_servers order, shape joint_shape",
      "", ColumnType::f64_ragged, &R::joint_pmf, joint_bins));
  c.push_back(result_ints<R>("joint_shape", "bins per axis of joint_pmf, one axis per type",
                             &R::joint_shape, joint_axes));
  c.push_back({{"joint_mass", "sum of joint_pmf: P(every Q_S <= joint_qmax) (NaN: off)", "",
                ColumnType::f64},
               [joint](const Task& t, const TaskOutcome& o) -> CellValue {
                 const R* r = done_result<R>(o);
                 return r && joint(t) ? r->joint_mass : kNaN;
               },
               {}});
  c.push_back(result_i64<R>("unions", "server-set unions visited by the engine", &R::unions));
  return c;
}

std::vector<Column> simulate_columns() {
  using R = sim::Result;
  std::vector<Column> c{task_id_column()};
  add_system_parameters(c);
  c.push_back(parameter("policy", "redundancy or dispatching policy", "", ColumnType::str,
                        [](const Task& t) { return std::string(name_of(t.simulate.policy)); }));
  c.push_back(parameter("policy_d", "servers sampled by power_of_d (-1: other policy)", "",
                        ColumnType::i64, [](const Task& t) {
                          return t.simulate.policy == sim::Policy::power_of_d
                                     ? std::int64_t{t.simulate.policy_d}
                                     : kNone;
                        }));
  c.push_back(
      parameter("service", "job size distribution (unit mean)", "", ColumnType::str,
                [](const Task& t) { return std::string(name_of(t.simulate.service.kind)); }));
  c.push_back(parameter("cv2", "squared coefficient of variation of hyperexponential sizes", "",
                        ColumnType::f64, [](const Task& t) {
                          return t.simulate.service.kind == sim::ServiceKind::hyperexponential
                                     ? t.simulate.service.cv2
                                     : kNaN;
                        }));
  c.push_back(parameter("identical_replicas", "1 if the replicas of a job share one size", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.simulate.identical_replicas}; }));
  c.push_back(parameter("longest_idle",
                        "1 if redundancy_cos starts a job at its longest idle server (-1: other "
                        "policy)",
                        "", ColumnType::i64, [](const Task& t) {
                          return t.simulate.policy == sim::Policy::redundancy_cos
                                     ? std::int64_t{t.simulate.longest_idle}
                                     : kNone;
                        }));
  c.push_back(parameter("horizon", "simulated time per replication after warm-up", "time",
                        ColumnType::f64, [](const Task& t) { return t.simulate.horizon; }));
  c.push_back(parameter(
      "warmup", "warm-up asked for (NaN: detected, see warmup_used)", "time", ColumnType::f64,
      [](const Task& t) { return t.simulate.warmup >= 0.0 ? t.simulate.warmup : kNaN; }));
  c.push_back(parameter("replications", "replications asked for", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.simulate.replications}; }));
  c.push_back(parameter("target_rel_half_width", "target relative half-width of E[T] (0: none)", "",
                        ColumnType::f64,
                        [](const Task& t) { return t.simulate.target_rel_half_width; }));
  c.push_back(parameter("max_replications", "cap on replications with a target", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.simulate.max_replications}; }));
  c.push_back(parameter("qmax", "P(Q = q) is estimated for q = 0..qmax", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.simulate.qmax}; }));
  c.push_back(parameter("occupancy_max", "occupancy x_i is estimated for i = 1..occupancy_max", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.simulate.occupancy_max}; }));
  const std::pair<const char*, double R::*> estimates[] = {
      {"EQ", &R::EQ},           {"EQ_hw", &R::EQ_hw}, {"VarQ", &R::VarQ},
      {"VarQ_hw", &R::VarQ_hw}, {"ET", &R::ET},       {"ET_hw", &R::ET_hw}};
  const char* estimate_text[] = {"time-average number of jobs E[Q]",
                                 "95% half-width of EQ",
                                 "time-average variance of the number of jobs",
                                 "95% half-width of VarQ",
                                 "mean sojourn time E[T]",
                                 "95% half-width of ET"};
  const char* estimate_units[] = {"jobs", "jobs", "jobs^2", "jobs^2", "time", "time"};
  for (std::size_t i = 0; i < std::size(estimates); ++i)
    c.push_back(result_f64<R>(estimates[i].first, estimate_text[i], estimate_units[i],
                              estimates[i].second));
  const auto series = [](const Task& t) { return static_cast<std::size_t>(t.simulate.qmax) + 1; };
  const auto occupancy = [](const Task& t) {
    return static_cast<std::size_t>(t.simulate.occupancy_max);
  };
  c.push_back(result_vector<R>("pmf", "P(Q = q), q = 0..qmax (time fraction)", "",
                               ColumnType::f64_vector, &R::pmf, series));
  c.push_back(result_vector<R>("pmf_hw", "95% half-widths of pmf", "", ColumnType::f64_vector,
                               &R::pmf_hw, series));
  c.push_back(result_vector<R>("occupancy",
                               "fraction of servers with >= i jobs, i = 1..occupancy_max", "",
                               ColumnType::f64_vector, &R::occupancy, occupancy));
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
  c.push_back(result_vector<R>("ER_server", "mean number of jobs (replicas) at server n", "jobs",
                               ColumnType::f64_ragged, &R::ER_server, servers));
  c.push_back(result_vector<R>("ER_server_hw", "95% half-widths of ER_server", "jobs",
                               ColumnType::f64_ragged, &R::ER_server_hw, servers));
  c.push_back(result_vector<R>("utilisation", "fraction of time server n is busy", "",
                               ColumnType::f64_ragged, &R::utilisation, servers));
  c.push_back(result_vector<R>("utilisation_hw", "95% half-widths of utilisation", "",
                               ColumnType::f64_ragged, &R::utilisation_hw, servers));
  c.push_back(result_f64<R>("T_p50", "median sojourn time", "time", &R::T_p50));
  c.push_back(result_f64<R>("T_p50_hw", "95% half-width of T_p50", "time", &R::T_p50_hw));
  c.push_back(result_f64<R>("T_p90", "90th percentile of the sojourn time", "time", &R::T_p90));
  c.push_back(result_f64<R>("T_p90_hw", "95% half-width of T_p90", "time", &R::T_p90_hw));
  c.push_back(result_f64<R>("T_p99", "99th percentile of the sojourn time", "time", &R::T_p99));
  c.push_back(result_f64<R>("T_p99_hw", "95% half-width of T_p99", "time", &R::T_p99_hw));
  c.push_back(
      result_f64<R>("warmup_used", "simulated time discarded per replication", "time", &R::warmup));
  c.push_back(result_i64<R>("warmup_detected", "1 if the warm-up was detected (MSER-5)",
                            &R::warmup_detected));
  c.push_back(result_i64<R>("replications_used", "replications run", &R::replications));
  c.push_back(
      result_f64<R>("hw99_factor", "99% half-width = 95% half-width x this", "", &R::hw99_factor));
  c.push_back(result_i64<R>("events", "arrivals and departures simulated", &R::events));
  c.push_back(
      {{"events_per_second", "simulated events per wall-clock second", "1/s", ColumnType::f64},
       [](const Task&, const TaskOutcome& o) -> CellValue {
         const R* r = done_result<R>(o);
         return r && o.wall_seconds > 0.0 ? static_cast<double>(r->events) / o.wall_seconds : kNaN;
       },
       {}});
  return c;
}

std::vector<Column> ldp_columns() {
  using R = ldp::Result;
  std::vector<Column> c{task_id_column()};
  const auto estimator = [](const Task& t) { return t.ldp.estimator; };
  c.push_back(parameter("policy", "dispatching policy", "", ColumnType::str,
                        [](const Task& t) { return std::string(name_of(t.ldp.policy)); }));
  c.push_back(parameter("policy_d", "queues sampled by power_of_d (-1: other policy)", "",
                        ColumnType::i64, [](const Task& t) {
                          return t.ldp.policy == ldp::Policy::power_of_d
                                     ? std::int64_t{t.ldp.policy_d}
                                     : kNone;
                        }));
  c.push_back(parameter("n", "number of servers (rate 1 each)", "", ColumnType::i64,
                        [](const Task& t) { return t.ldp.n; }));
  c.push_back(parameter("j", "event: some queue reaches j jobs by time T", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.ldp.j}; }));
  c.push_back(parameter("T", "time horizon", "time", ColumnType::f64,
                        [](const Task& t) { return t.ldp.T; }));
  c.push_back(parameter("lambda", "per-server arrival rate (total n * lambda)", "1/time",
                        ColumnType::f64, [](const Task& t) { return t.ldp.lambda; }));
  c.push_back(parameter("estimator", "exact, monte_carlo or importance", "", ColumnType::str,
                        [](const Task& t) { return std::string(name_of(t.ldp.estimator)); }));
  c.push_back(parameter("samples", "sample paths asked for (NaN: exact estimator)", "",
                        ColumnType::f64, [estimator](const Task& t) {
                          return estimator(t) == ldp::Estimator::exact ? kNaN : t.ldp.samples;
                        }));
  c.push_back(parameter("target_rel_error", "target relative error (0: none; NaN: exact)", "",
                        ColumnType::f64, [estimator](const Task& t) {
                          return estimator(t) == ldp::Estimator::exact ? kNaN
                                                                       : t.ldp.target_rel_error;
                        }));
  c.push_back(parameter("truncation", "exact estimator: bound on the neglected mass (NaN: other)",
                        "", ColumnType::f64, [estimator](const Task& t) {
                          return estimator(t) == ldp::Estimator::exact ? t.ldp.truncation : kNaN;
                        }));
  c.push_back(parameter(
      "initial_counts", "queues of length k at time 0, k = 0.. (count 0: all of length 1)", "",
      ColumnType::i64_ragged, [](const Task& t) { return t.ldp.initial_counts; },
      [](const Task& t) { return t.ldp.initial_counts.size(); }));
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
  c.push_back(result_f64<R>("theory_rate", "large-deviation rate -lim (1/n) ln P (NaN: none)", "",
                            &R::theory_rate));
  c.push_back(
      result_f64<R>("events", "events simulated (exact: uniformization steps)", "", &R::events));
  c.push_back(result_f64<R>("tilt", "importance sampling tilt u (1: none)", "", &R::tilt));
  c.push_back(
      result_f64<R>("states", "states of the lumped chain (exact estimator)", "", &R::states));
  return c;
}

struct Group {
  std::vector<Column> columns;
  std::vector<ColumnSpec> specs;
  std::unordered_map<std::string, std::size_t> index;
};

Group make_group(std::vector<Column> columns) {
  Group g;
  g.columns = std::move(columns);
  for (std::size_t i = 0; i < g.columns.size(); ++i) {
    g.specs.push_back(g.columns[i].spec);
    g.index.emplace(g.columns[i].spec.name, i);
  }
  return g;
}

const Group& group(Method method) {
  static const Group groups[] = {make_group(exact_columns()), make_group(simulate_columns()),
                                 make_group(ldp_columns())};
  return groups[static_cast<std::size_t>(method)];
}

}  // namespace

std::string_view group_name(Method method) { return name_of(method); }

const std::vector<ColumnSpec>& group_columns(Method method) { return group(method).specs; }

std::size_t planned_length(const Task& task, const ColumnSpec& column) {
  const Group& g = group(task.method);
  const auto it = g.index.find(column.name);
  if (it == g.index.end())
    throw std::logic_error("planned_length: no column '" + column.name + "' in group " +
                           std::string(group_name(task.method)));
  const Column& c = g.columns[it->second];
  return c.length ? c.length(task) : 0;
}

Row make_row(const Task& task, const TaskOutcome& outcome) {
  Row row;
  for (const auto& column : group(task.method).columns)
    row.cells.push_back(column.value(task, outcome));
  return row;
}

}  // namespace qsweep::sweep
