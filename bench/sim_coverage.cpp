// Coverage harness of simulate()'s intervals (docs/sim.md, "Output analysis"): independent
// intervals for E[T] on systems whose E[T] is known exactly, per system and load:
//   coverage of the unflagged nominal 95% intervals, the fraction flagged, the relative bias of
//   the unflagged estimates, and the CPU seconds to a valid 1% interval.
//   qsweep_bench_sim_coverage [--intervals K] [--loads 0.5,0.8,...] [--systems mm1,ring6,...]
//                             [--max-events E] [--horizon H] [--replications R] [--no-cost]
// Systems: mm1 (M/M/1), mmc4 (M/M/4, cancel-on-start to all servers: Erlang C), ringN and
// completeN (redundancy_coc, d = 2 for complete; exact engine), jsq2_3 (JSQ on complete pairs of
// 3 servers, brute-force chain truncated at 60 jobs per server: loads up to 0.95). Load rho =
// lambda (identical speeds 1, every family's limit is lambda = 1).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "qsweep/exact/exact.hpp"
#include "qsweep/sim/simulate.hpp"

namespace {

using namespace qsweep;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

struct Case {
  model::System system;
  sim::Policy policy;
  double ET;  // exact
};

// E[T] of M/M/c with unit rates at total arrival rate c rho (Erlang C).
double erlang_c_ET(int c, double rho) {
  const double a = c * rho;
  double term = 1.0, sum = 1.0;  // a^k / k!, k = 0..c-1
  for (int k = 1; k < c; ++k) {
    term *= a / k;
    sum += term;
  }
  const double last = term * a / c / (1.0 - rho);  // a^c / c! / (1 - rho)
  const double wait_probability = last / (sum + last);
  return 1.0 + wait_probability / (c - a);
}

// JSQ among the pairs of 3 unit-speed servers (complete, d = 2) by its queue-length chain,
// truncated at K jobs per server (arrivals to a full server are lost), Gauss-Seidel; E[T] by
// Little's law.
double jsq_pairs3_ET(double lambda, int K) {
  const int side = K + 1;
  const auto index = [side](int a, int b, int c) { return (a * side + b) * side + c; };
  std::vector<double> pi(static_cast<std::size_t>(side * side * side), 1.0);
  const double arrival = 3.0 * lambda / 3.0;  // per pair: total 3 lambda over 3 pairs
  const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  // Rate into q + e_n from q under JSQ on the pairs containing n.
  const auto join_rate = [&](const int q[3], int n) {
    double rate = 0.0;
    for (const auto& p : pairs) {
      const int m = p[0] == n ? p[1] : p[1] == n ? p[0] : -1;
      if (m < 0) continue;
      if (q[n] < q[m]) rate += arrival;
      if (q[n] == q[m]) rate += arrival / 2.0;
    }
    return rate;
  };
  for (int sweep = 0; sweep < 20000; ++sweep) {
    double change = 0.0, total = 0.0;
    for (int a = 0; a <= K; ++a)
      for (int b = 0; b <= K; ++b)
        for (int c = 0; c <= K; ++c) {
          const int q[3] = {a, b, c};
          double out = 0.0, in = 0.0;
          for (int n = 0; n < 3; ++n) {
            if (q[n] < K) out += join_rate(q, n);
            if (q[n] > 0) {
              out += 1.0;
              int from[3] = {a, b, c};
              --from[n];
              in += pi[static_cast<std::size_t>(index(from[0], from[1], from[2]))] *
                    join_rate(from, n);
            }
            if (q[n] < K) {
              int from[3] = {a, b, c};
              ++from[n];
              in += pi[static_cast<std::size_t>(index(from[0], from[1], from[2]))];
            }
          }
          if (out == 0.0) continue;
          double& x = pi[static_cast<std::size_t>(index(a, b, c))];
          const double next = in / out;
          change += std::abs(next - x);
          x = next;
          total += next;
        }
    for (double& x : pi) x /= total;
    if (change / total < 1e-13) break;
  }
  double EQ = 0.0;
  for (int a = 0; a <= K; ++a)
    for (int b = 0; b <= K; ++b)
      for (int c = 0; c <= K; ++c) EQ += (a + b + c) * pi[static_cast<std::size_t>(index(a, b, c))];
  return EQ / (3.0 * lambda);
}

Case make_case(const std::string& name, double rho) {
  model::FamilyParams p;
  if (name == "mm1") {
    p.kind = model::FamilyKind::independent;
    p.N = 1;
    return {model::System(model::Family(p), {}, rho), sim::Policy::redundancy_coc,
            1.0 / (1.0 - rho)};
  }
  if (name == "mmc4") {
    p.kind = model::FamilyKind::complete;
    p.N = 4;
    p.d = 4;
    return {model::System(model::Family(p), {}, rho), sim::Policy::redundancy_cos,
            erlang_c_ET(4, rho)};
  }
  if (name == "jsq2_3") {
    p.kind = model::FamilyKind::complete;
    p.N = 3;
    p.d = 2;
    return {model::System(model::Family(p), {}, rho), sim::Policy::jsq, jsq_pairs3_ET(rho, 60)};
  }
  for (const auto& [prefix, kind] : {std::pair{"ring", model::FamilyKind::ring},
                                     std::pair{"complete", model::FamilyKind::complete}}) {
    const std::string pre(prefix);
    if (name.rfind(pre, 0) != 0) continue;
    p.kind = kind;
    p.N = std::stoi(name.substr(pre.size()));
    if (kind == model::FamilyKind::complete) p.d = 2;
    model::System system(model::Family(p), {}, rho);
    const exact::Result exact = exact::evaluate(system, exact::Options{});
    return {std::move(system), sim::Policy::redundancy_coc, exact.ET};
  }
  throw std::runtime_error("unknown system " + name);
}

}  // namespace

int main(int argc, char** argv) {
  int intervals = 200, replications = 8;
  double max_events = 1e8, horizon = 1e4;
  bool cost = true;
  std::vector<std::string> systems = {"mm1",   "mmc4",   "jsq2_3",    "ring4",
                                      "ring6", "ring10", "complete4", "complete10"};
  std::vector<double> loads = {0.5, 0.8, 0.9, 0.95, 0.99, 0.999};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (arg == "--intervals")
      intervals = std::stoi(value());
    else if (arg == "--replications")
      replications = std::stoi(value());
    else if (arg == "--max-events")
      max_events = std::stod(value());
    else if (arg == "--horizon")
      horizon = std::stod(value());
    else if (arg == "--no-cost")
      cost = false;
    else if (arg == "--systems")
      systems = split(value());
    else if (arg == "--loads") {
      loads.clear();
      for (const std::string& x : split(value())) loads.push_back(std::stod(x));
    } else {
      fmt::print(stderr, "unknown argument {}\n", arg);
      return 2;
    }
  }
  fmt::print(
      "intervals {} per point, replications {}, horizon {:g} (first round), max_events "
      "{:g}\n\n",
      intervals, replications, horizon, max_events);
  fmt::print(
      "| system | rho | exact E[T] | unflagged covered | coverage | flagged | rel. bias "
      "(unflagged) | z mean | z sd | rel. hw | mean events | CPU s to valid 1% |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& name : systems)
    for (double rho : loads) {
      const Case c = make_case(name, rho);
      sim::Options o;
      o.policy = c.policy;
      o.horizon = horizon;
      o.replications = replications;
      o.max_events = max_events;
      int unflagged = 0, covered = 0;
      double bias = 0.0, events = 0.0, z_sum = 0.0, z_squares = 0.0, rel_hw = 0.0;
      for (int k = 0; k < intervals; ++k) {
        const sim::Result r = sim::simulate(c.system, o, 1000 + static_cast<std::uint64_t>(k), 1);
        events += static_cast<double>(r.events) / intervals;
        if (r.flags != 0) continue;
        ++unflagged;
        if (std::abs(r.ET - c.ET) <= r.ET_hw) ++covered;
        bias += (r.ET - c.ET) / c.ET;
        // The error in units of the reported standard error (hw / 1.96): mean 0 and sd 1 when the
        // interval is right; a mean off 0 is bias, an sd above 1 a variance estimated too small.
        const double z = (r.ET - c.ET) / (r.ET_hw / 1.96);
        z_sum += z;
        z_squares += z * z;
        rel_hw += r.ET_hw / r.ET;
      }
      const double z_mean = unflagged > 0 ? z_sum / unflagged : 0.0;
      const double z_sd =
          unflagged > 1 ? std::sqrt((z_squares - unflagged * z_mean * z_mean) / (unflagged - 1))
                        : 0.0;
      std::string to_one_percent = "-";
      if (cost) {
        sim::Options precise = o;
        precise.target_rel_half_width = 0.01;
        const double start = cpu_seconds();
        const sim::Result r = sim::simulate(c.system, precise, 1, 1);
        const double seconds = cpu_seconds() - start;
        to_one_percent = r.flags == 0 ? fmt::format("{:.3g}", seconds)
                                      : fmt::format("> {:.3g} (flags {})", seconds, r.flags);
      }
      fmt::print(
          "| {} | {:g} | {:.6g} | {}/{} | {} | {:.3f} | {} | {:+.2f} | {:.2f} | {:.3g} | {:.3g} | "
          "{} |\n",
          name, rho, c.ET, covered, unflagged,
          unflagged > 0 ? fmt::format("{:.3f}", static_cast<double>(covered) / unflagged)
                        : std::string("-"),
          1.0 - static_cast<double>(unflagged) / intervals,
          unflagged > 0 ? fmt::format("{:+.4f}", bias / unflagged) : std::string("-"), z_mean, z_sd,
          unflagged > 0 ? rel_hw / unflagged : 0.0, events, to_one_percent);
      std::fflush(stdout);
    }
  return 0;
}
