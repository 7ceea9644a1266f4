// The method `exact`: the stationary distribution of the redundancy system from its product form
// (src/exact), on the system of the shared keys (method_system.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "cost_detail.hpp"
#include "method_system.hpp"
#include "qsweep/exact/distributed_memory.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/model/family_registry.hpp"

namespace qsweep::sweep::detail {
namespace {

const exact::Options& options_of(const Task& t) { return t.as<ExactTask>().options; }
exact::Options& options_of(Task& t) { return t.as<ExactTask>().options; }

// Numbers version 2 (docs/exact.md, "Numbers version"): the symmetric engine keeps its weights
// with binary exponents and its means as two-double sums, which changes the last digits of
// every value it gives (E[R_n] and the per-type means by up to 1.65e-8 at N = 1e6); the joint pmf
// flushes subnormal cells to 0, which changes its smallest bins.
int numbers_version(const Task& t) {
  const auto& task = t.as<ExactTask>();
  const exact::Options& o = task.options;
  const auto& speeds = task.system.speeds;
  const bool identical =
      std::all_of(speeds.begin(), speeds.end(), [&](double s) { return s == speeds.front(); });
  const bool symmetric = o.policy == exact::Policy::redundancy_coc &&
                         o.engine != exact::Engine::general && identical &&
                         model::family_info(task.system.family.kind).size_symmetric;
  return symmetric || o.joint_qmax >= 0 ? 2 : 1;
}

// ---- keys --------------------------------------------------------------------------------------

// `ranks`: an integer >= 1, or auto (kAutoRanks).
Value parse_ranks(const YAML::Node& node, const Locator& loc) {
  constexpr std::string_view kExpected = "an integer >= 1 or auto";
  if (node.IsScalar() && node.Scalar() == "auto") return std::int64_t{kAutoRanks};
  const std::int64_t ranks = read_integer(node, loc, "ranks", kExpected);
  if (ranks < 1 || ranks > kMaxTaskRanks)
    fail(loc.at(node),
         fmt::format("ranks is {}; expected {} (at most {})", ranks, kExpected, kMaxTaskRanks));
  return ranks;
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
  k.push_back(
      {.name = "light_traffic",
       .kind = Kind::boolean,
       .help = "compute the light-traffic coefficients alpha_q (default true)",
       .apply = [](Draft& d, const Value& v) { options_of(d.task).light_traffic = boolean(v); }});
  k.push_back(
      {.name = "per_type",
       .kind = Kind::boolean,
       .help = "compute E[Q_S], E[T_S] per type and E[R_n] per server (default true)",
       .apply = [](Draft& d, const Value& v) { options_of(d.task).per_type = boolean(v); }});
  k.push_back({.name = "engine",
               .kind = Kind::choice,
               .help = "exact engine (default automatic: symmetric where it applies)",
               .choices = enum_names<exact::Engine>(),
               .apply = [](Draft& d, const Value& v) {
                 options_of(d.task).engine = *parse_name<exact::Engine>(text(v));
               }});
  k.push_back(
      {.name = "joint_qmax",
       .kind = Kind::integer,
       .help = "joint pmf of the per-type counts on 0..joint_qmax per type (<= 3 types; "
               "default: off)",
       .bounds = between(0, 1'000'000, false, false),
       .selector = true,
       .apply = [](Draft& d, const Value& v) { options_of(d.task).joint_qmax = small_int(v); }});
  k.push_back(
      {.name = "joint_bin",
       .kind = Kind::integer,
       .help = "counts per bin on each axis of the joint pmf (default 1)",
       .bounds = between(1, kIntMax, false, false),
       .used_by = "joint_qmax",
       .applies = [](const Draft& d) { return options_of(d.task).joint_qmax >= 0; },
       .apply = [](Draft& d, const Value& v) { options_of(d.task).joint_bin = small_int(v); }});
  k.push_back({.name = "policy",
               .kind = Kind::choice,
               .help = "exact: redundancy_coc (cancel on completion, default) or redundancy_cos "
                       "(cancel on start, the longest idle server first)",
               .choices = enum_names<exact::Policy>(),
               .apply = [](Draft& d, const Value& v) {
                 options_of(d.task).policy = *parse_name<exact::Policy>(text(v));
               }});
  k.push_back({.name = "ranks",
               .kind = Kind::fixed,
               .help = "ranks the task runs on together (general engine): an integer, or auto for "
                       "the fewest whose memory fits each rank's budget (default 1)",
               .apply = [](Draft& d, const Value& v) { d.task.ranks = small_int(v); },
               .parse_fixed = parse_ranks});
  return k;
}
#pragma GCC diagnostic pop

// ---- cost --------------------------------------------------------------------------------------

// Seconds per elementary step, measured with `qsweep eval` on the development machine
// (docs/sweep-format.md, "Cost estimates"); only the orders of magnitude matter.
constexpr double kSecondsPerGeneralStep = 1e-8;    // one (union, type, series term) update
constexpr double kSecondsPerSymmetricStep = 2e-8;  // one (size, growth, series term) update
constexpr double kSecondsPerListedType = 5e-8;     // listing a type's values (per_type)
// One count vector of the joint pmf: 0.74-1.02 ns of CPU measured (qsweep_bench_exact_engines
// Joint, 2 and 3 types, load 9) once subnormal cells flush to 0 (docs/exact.md, "Joint pmf").
constexpr double kSecondsPerJointCell = 1e-9;

// Unions the general engine visits: every union of types, about base^(N + shift) as the
// family's registry entry gives it (src/model/families.cpp: 2^N with singletons or dense types,
// psi^N on a cycle or path, 2^(N-1) on a star).
double union_count(const model::System& system, std::string& text) {
  const model::UnionGrowth& growth = system.family.info().unions;
  const int exponent = system.N() + growth.shift;
  text = formula("{}^{}", growth.base_text, exponent);
  return growth.base == 2.0 ? std::ldexp(1.0, exponent) : std::pow(growth.base, exponent);
}

// The lattice (or lumped) passes of the chosen engine.
CostEstimate engine_cost(const Task& task, const model::System& system, bool symmetric) {
  // The series up to qmax, plus the moment passes.
  const double terms = options_of(task).qmax + 3.0;
  const double types = system.family.num_types();
  const int N = system.N();
  if (symmetric) {
    // A union of size u grows by 0..d servers (complete, d = 1 for independent); singletons_full
    // grows by one server or jumps to all N.
    const int growth = system.family.is_singletons_full() ? 2 : system.family.max_type_size() + 1;
    double seconds = N * static_cast<double>(growth) * terms * kSecondsPerSymmetricStep;
    if (options_of(task).per_type && types <= exact::kMaxListedTypes)
      seconds += types * kSecondsPerListedType;
    return {seconds,
            formula("{} sizes x {} growths x {:g} terms (symmetric)", N + 1, growth, terms),
            {}};
  }
  if (options_of(task).policy == exact::Policy::redundancy_cos) {
    // src/exact/cancel_on_start.cpp: every set, N + types steps for the means, N per series
    // term, and with per_type about N^2 / 2 (the servers' passes) plus the types' sums.
    const double sets = std::ldexp(1.0, N);
    const double steps = (types + N) + N * options_of(task).qmax +
                         (options_of(task).per_type ? 0.5 * N * N + types : 0.0);
    return {sets * steps * kSecondsPerGeneralStep,
            formula("2^{} sets x {:g} steps (cancel-on-start)", N, steps),
            {}};
  }
  std::string unions_text;
  const double unions = union_count(system, unions_text);
  return {unions * types * terms * kSecondsPerGeneralStep,
          formula("{} unions x {:g} types x {:g} terms", unions_text, types, terms),
          {}};
}

CostEstimate exact_cost(const Task& task, const model::System& system, bool symmetric) {
  CostEstimate cost = engine_cost(task, system, symmetric);
  if (options_of(task).joint_qmax >= 0) {
    const double types = system.family.num_types();
    const double cells = std::pow(options_of(task).joint_qmax + 1.0, types);
    cost.seconds += cells * kSecondsPerJointCell;
    cost.formula += formula(" + {:.3g} joint pmf cells ({} + 1)^{:g}", cells,
                            options_of(task).joint_qmax, types);
  }
  return cost;
}

// What every result of an exact task holds: P(Q = q) and alpha_q (q = 0..qmax), and with
// per_type five values per listed type (servers, p, E[Q_S], E[T_S], scaled) and E[R_n] per
// server.
double exact_result_bytes(const Task& task, const model::System& system, bool listed) {
  double bytes = 2.0 * kDouble * (options_of(task).qmax + 1.0);
  if (options_of(task).per_type) {
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
  const double per_type = 16.0 + 24.0 + 8.0 + (options_of(task).per_type ? 24.0 : 0.0);
  const double working = 16.0 * sets + types * per_type +
                         2.0 * kDouble * std::ldexp(1.0, (N + 1) / 2) +
                         (options_of(task).qmax > 0 ? 16384.0 * 12.0 : 0.0);
  const double result = exact_result_bytes(task, system, true) + kDouble * types;  // + EQ_type
  return {working, result, formula("2^{} sets x 16 B + {:g} types x {:g} B", N, types, per_type)};
}

// The distributed general engine (src/exact_mpi) on `ranks` ranks: the busiest rank's share of the
// lattice, about 24 B per union / ranks, and the rest whole (exact/distributed_memory.hpp).
MemoryEstimate distributed_general_memory(const Task& task, const model::System& system,
                                          int ranks) {
  const auto types = static_cast<std::size_t>(system.family.num_types());
  const double bytes = exact::distributed::peak_bytes_per_rank(
      system.N(), types, ranks, options_of(task).qmax, options_of(task).per_type);
  return {bytes, exact_result_bytes(task, system, true) + kDouble * static_cast<double>(types),
          formula("the busiest rank's share of 2^{} unions on {} ranks, {} types", system.N(),
                  ranks, types)};
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
  return {working, result, formula("2^{} sets x 48 B + {:g} types x {:g} B", N, types, per_type)};
}

// Transitions of the symmetric engine's lumped chain (src/exact/symmetric.cpp): complete with d,
// from size u to u + j for j = max(0, d - u)..min(d, N - u), (N + 1) + d (N - d) in all;
// singletons_full three per size (inside, one more server, the full set).
double symmetric_transitions(const model::System& system) {
  const double N = system.N();
  switch (system.family.kind()) {
    case model::FamilyKind::singletons_full:
      return 3.0 * (N + 1.0);
    case model::FamilyKind::independent:
      return (N + 1.0) + (N - 1.0);
    case model::FamilyKind::complete: {
      const double d = system.family.params().d;
      return (N + 1.0) + d * (N - d);
    }
    default:  // a family marked size-symmetric in the registry without its chain's size here
      throw std::logic_error("symmetric_transitions: no chain size for family " +
                             std::string(name_of(system.family.kind())));
  }
}

// Symmetric engine: the chain's moves (to, class, rate: 16 B each) filled by push_back, so up to
// twice their bytes while the list grows (grown_vector_peak; 6.1 GiB for complete d = 30,
// N = 5e6 with the 24-byte moves of numbers version 1, as measured), and `first` (8 B per size,
// grown likewise). Once built: the moves, and per size d, a mixture (exponent, weight, m2, a
// two-double mean and two two-double class means: 9 doubles) and cur / next of the distribution:
// 96 B. With per_type and at most kMaxListedTypes types on N <= 64 the types are enumerated and
// listed (16 + 8 B each).
MemoryEstimate symmetric_memory(const Task& task, const model::System& system) {
  const double N = system.N();
  const double moves = symmetric_transitions(system);
  const double first = grown_vector_peak(N + 2.0, kDouble);
  const double building = grown_vector_peak(moves, 16.0) + first;
  const double running = 16.0 * moves + first + 96.0 * (N + 1.0);
  const bool listed =
      system.family.num_types() <= exact::kMaxListedTypes && system.N() <= model::kMaxMaskServers;
  const double listing =
      options_of(task).per_type && listed ? 24.0 * system.family.num_types() : 0.0;
  return {std::max(building, running) + listing, exact_result_bytes(task, system, listed),
          formula("{:.3g} chain transitions x 16 B (x 2 while the list grows) + {:g} sizes x "
                  "96 B",
                  moves, N + 1.0)};
}

// Joint pmf (src/exact/joint.cpp): the grid of bins (bins^k doubles, moved into the result) and
// two slabs of counts, (joint_qmax + 1)^2 doubles each for three types, one row of
// joint_qmax + 1 for one or two, plus a zero row.
MemoryEstimate joint_memory(const Task& task, const model::System& system) {
  const double types = system.family.num_types();
  const double extent = options_of(task).joint_qmax + 1.0;
  const double bins = std::pow(std::ceil(extent / options_of(task).joint_bin), types);
  const double slab = types >= 3 ? extent * extent : extent;
  const double working = kDouble * (bins + 2.0 * slab + extent);
  return {working, kDouble * bins,
          formula("{:.3g} joint bins x 8 B + 2 slabs of {:.3g} counts x 8 B", bins, slab)};
}

// The phases of an exact task, one after another: the engine; the joint pmf (the engine's
// arrays freed, its results kept); the result with its row, the copy the results file writer
// (or `qsweep eval`) makes of it. The system's speeds and the family's lists live through all
// three.
// `sums`: system_sums(system); `ranks`: those of the distributed general engine (only for
// general-engine tasks).
MemoryEstimate exact_memory(const Task& task, const model::System& system, const SystemSums& sums,
                            bool symmetric, int ranks = 1) {
  MemoryEstimate engine = symmetric ? symmetric_memory(task, system)
                          : options_of(task).policy == exact::Policy::redundancy_cos
                              ? cancel_on_start_memory(task, system)
                          : ranks > 1 ? distributed_general_memory(task, system, ranks)
                                      : general_memory(task, system);
  double peak = engine.bytes;
  double result = engine.result_bytes;
  if (options_of(task).joint_qmax >= 0) {
    const MemoryEstimate joint = joint_memory(task, system);
    peak = std::max(peak, joint.bytes + result);
    result += joint.result_bytes;
    if (!formulas_off) engine.formula += ", then " + joint.formula;
  }
  peak = std::max({peak, 2.0 * result, sums.stability_check_bytes});
  const double around = kDouble * system.N() + sums.family_bytes;
  return {around + peak, 2.0 * result, engine.formula};
}

// `engine`: the one exact::validate() chose for the task.
CostEstimate cost(const Task& task, const model::System& system, const SystemSums& sums,
                  exact::Engine engine) {
  const bool symmetric = engine == exact::Engine::symmetric;
  CostEstimate estimate = exact_cost(task, system, symmetric);
  estimate.memory = exact_memory(task, system, sums, symmetric);
  return estimate;
}

// ---- expansion ---------------------------------------------------------------------------------

// Whether evaluate() runs the task on the general engine, the one that can span ranks.
bool spans(const model::System& system, const exact::Options& options) {
  return options.policy == exact::Policy::redundancy_coc &&
         exact::detail::validate_with(system, options, exact::distributed::kMaxServers).engine ==
             exact::Engine::general;
}

// The validation of a task on its ranks: up to exact::distributed::kMaxServers servers on the
// general engine when it may span ranks.
exact::Validation validate_on_ranks(const Task& t, const model::System& system) {
  return t.ranks == 1
             ? exact::validate(system, options_of(t))
             : exact::detail::validate_with(system, options_of(t), exact::distributed::kMaxServers);
}

// Families whose exact evaluation can use the symmetric engine; every other one holds 2^N sets.
bool has_symmetric_engine(model::FamilyKind kind) {
  return model::family_info(kind).size_symmetric;
}

std::optional<CostEstimate> prepare(const Task& t, BlockContext& block) {
  const model::FamilyParams& family = t.system().family;
  // The exact engines of a listed family (graphs, explicit types) hold 2^N sets: refuse a
  // large N before the family is built (a ring of 10^7 servers alone takes a GB).
  const int most = t.ranks == 1 ? exact::kMaxGeneralServers : exact::distributed::kMaxServers;
  if (!has_symmetric_engine(family.kind) && family.N > most)
    fail(block.where_of("N"),
         fmt::format(
             "N = {} is too large for the general exact engine (it stores 2^(N+4) bytes) "
             "and family {} has no symmetric engine ('{}'); expected N <= {} (N <= {} "
             "with `ranks` other than 1: the engine spread over several ranks), or a "
             "family with a symmetric engine ({}; identical speeds)",
             family.N, name_of(family.kind), describe(t), most, exact::distributed::kMaxServers,
             model::list_text(
                 model::family_names([](const model::FamilyInfo& f) { return f.size_symmetric; }),
                 ", ")));
  KnownSystem& known = known_system(t, block);
  const auto v = validate_on_ranks(t, *known.system);
  if (!v.ok())
    fail(block.where_of(v.option),
         fmt::format("{} ('{}'); expected {}", v.problem, describe(t), v.expected));
  if (t.ranks > 1 && !spans(*known.system, options_of(t)))
    fail(block.where_of("ranks"),
         fmt::format("ranks is {}, but only the general engine on cancel-on-completion "
                     "redundancy runs on several ranks and this task uses the {} engine ('{}'); "
                     "expected ranks: 1 or auto (which gives such tasks one rank)",
                     t.ranks, name_of(v.engine), describe(t)));
  if (!check_stable(t, known, block)) return std::nullopt;
  return cost(t, *known.system, known.sums, v.engine);
}

std::optional<MemoryEstimate> memory_per_rank(const Task& t, int ranks) {
  const model::System system = build_system(t.system());
  if (!spans(system, options_of(t))) return std::nullopt;
  if (ranks == 1 && system.N() > exact::kMaxGeneralServers) return std::nullopt;
  return exact_memory(t, system, system_sums(system), false, ranks);
}

CostEstimate estimate(const Task& t) {
  const model::System system = build_system(t.system());
  return cost(t, system, system_sums(system), validate_on_ranks(t, system).engine);
}

// ---- execution and text ------------------------------------------------------------------------

void run(const Task& task, const SharedEngines& engines, TaskOutcome& outcome) {
  // evaluate() checks stability itself and says which set violates it.
  const model::System system = build_system(task.system());
  const auto& result = outcome.result.emplace<exact::Result>(
      engines.exact_general
          ? exact::detail::evaluate_with(system, options_of(task), engines.exact_general,
                                         exact::distributed::kMaxServers)
          : exact::evaluate(system, options_of(task)));
  outcome.status = result.stable ? TaskStatus::done : TaskStatus::unstable;
  if (!result.stable) outcome.error = result.unstable_reason;
  outcome.warning = result.warning;
}

std::string describe_task(const Task& t) {
  const exact::Options& o = options_of(t);
  std::string text = fmt::format("exact {}{} qmax={}",
                                 o.policy == exact::Policy::redundancy_cos ? "redundancy_cos " : "",
                                 family_text(t.system()), o.qmax);
  if (o.joint_qmax >= 0)
    text += fmt::format(" joint_qmax={} joint_bin={}", o.joint_qmax, o.joint_bin);
  if (t.ranks != 1)
    text += t.ranks == kAutoRanks ? std::string(" ranks=auto") : fmt::format(" ranks={}", t.ranks);
  return text;
}

std::string category_of(const Task& t) { return std::string(name_of(t.system().family.kind)); }

// ---- results columns ---------------------------------------------------------------------------

std::vector<Column> columns() {
  using R = exact::Result;
  std::vector<Column> c{task_id_column()};
  add_system_parameters(c);
  c.push_back(parameter("policy", "redundancy_coc (cancel on completion) or redundancy_cos", "",
                        ColumnType::str,
                        [](const Task& t) { return std::string(name_of(options_of(t).policy)); }));
  c.push_back(parameter("qmax", "P(Q = q) is given for q = 0..qmax", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).qmax}; }));
  c.push_back(parameter("light_traffic", "1 if alpha was asked for", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).light_traffic}; }));
  c.push_back(parameter("per_type", "1 if per-type and per-server results were asked for", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).per_type}; }));
  const auto joint = [](const Task& t) { return options_of(t).joint_qmax >= 0; };
  c.push_back(parameter("joint_qmax", "joint pmf on counts 0..joint_qmax per type (-1: off)", "",
                        ColumnType::i64,
                        [](const Task& t) { return std::int64_t{options_of(t).joint_qmax}; }));
  c.push_back(parameter(
      "joint_bin", "counts per bin of the joint pmf on each axis (-1: off)", "", ColumnType::i64,
      [joint](const Task& t) { return joint(t) ? std::int64_t{options_of(t).joint_bin} : kNone; }));
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
  c.push_back(result_f64<R>("EQ", "mean number of jobs in the system E[Q]", "jobs", &R::EQ));
  c.push_back(derived_f64<R>("EQ_per_server", "mean number of jobs per server E[Q] / N", "jobs",
                             "EQ", &R::EQ, per_server));
  c.push_back(
      result_f64<R>("VarQ", "variance of the number of jobs in the system", "jobs^2", &R::VarQ));
  c.push_back(result_f64<R>("ET", "mean sojourn time of a job E[T] (Little)", "time", &R::ET));
  c.push_back(result_f64<R>("scaled_EQ", "(1 - rho) E[Q] (tends to 1 in heavy traffic)", "",
                            &R::scaled_EQ));
  const auto series = [](const Task& t) {
    return static_cast<std::size_t>(options_of(t).qmax) + 1;
  };
  c.push_back(result_vector<R>("pmf", "P(Q = q), q = 0..qmax", "", ColumnType::f64_vector, &R::pmf,
                               series));
  c.push_back(result_vector<R>(
      "alpha", "light-traffic coefficients alpha_q (paper eq. 30), q = 0..qmax", "",
      ColumnType::f64_vector, &R::alpha,
      [series](const Task& t) { return options_of(t).light_traffic ? series(t) : 0; }));
  const auto types = [](const Task& t) {
    return options_of(t).per_type ? listable_types(t, kMaxStoredTypes) : 0;
  };
  add_type_columns<R>(c, types);
  c.push_back(result_vector<R>("ET_type", "mean sojourn time of type S, E[T_S]", "time",
                               ColumnType::f64_ragged, &R::ET_type, types));
  c.push_back(result_vector<R>("scaled_EQ_type", "(1 - rho) E[Q_S] / p_S", "",
                               ColumnType::f64_ragged, &R::scaled_EQ_type, types));
  c.push_back(result_vector<R>(
      "ER_server", "mean number of replicas at server n, E[R_n], n = 1..N", "replicas",
      ColumnType::f64_ragged, &R::ER_server, [](const Task& t) {
        const bool replicas = options_of(t).policy == exact::Policy::redundancy_coc;
        return options_of(t).per_type && replicas ? servers(t) : 0;
      }));
  const auto joint_axes = [joint](const Task& t) -> std::size_t {
    const double count = std::round(type_count(t));
    return joint(t) && count <= exact::kMaxJointTypes ? static_cast<std::size_t>(count) : 0;
  };
  // (bins per axis)^axes; 0 for options that exact::validate() refuses (tasks that bypassed it).
  const auto joint_bins = [joint_axes](const Task& t) -> std::size_t {
    const std::int64_t bin = options_of(t).joint_bin;
    if (joint_axes(t) == 0 || bin < 1) return 0;
    const std::int64_t per_axis = (options_of(t).joint_qmax + bin) / bin;  // ceil((qmax + 1) / bin)
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

}  // namespace

const MethodAdapter& exact_method() {
  static const MethodAdapter adapter{
      .method = Method::exact,
      .description = "exact stationary performance from the product form",
      .random = false,
      .numbers = numbers_version,
      .keys = keys(),
      .columns = columns(),
      .derive = derive_system,
      .list_bytes = [](const Task& t) { return system_list_bytes(t.system()); },
      .prepare = prepare,
      .estimate = estimate,
      .run = run,
      .memory_per_rank = memory_per_rank,
      .describe = describe_task,
      .category = category_of,
  };
  return adapter;
}

}  // namespace qsweep::sweep::detail
