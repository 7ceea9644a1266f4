// The refined mean field (docs/meanfield.md, "Refined mean field") against qsweep's own simulator:
// JSQ(d) on `complete` with d distinct servers sampled per arrival (the pooled kernel), started
// at the mean-field fixed point, per-server E[Q] with its interval, beside the limit (order 0)
// and the refined values of order 1 and 2, for d = 2, 3, lambda = 0.7, 0.9, 0.95 and
// N = 20, 100, 1000 (18 cases).
//   qsweep_bench_sim_refined_meanfield [--events E] [--N 20,100,1000] [--d 2,3]
//                                      [--lambda 0.7,0.9,0.95] [--replications R] [--seed S]
// E: events (arrivals and departures) per case, default 4e8; R: replications (default 16).
// Each line: the estimate, its 95% half-width and its Bonferroni half-width (family-wise 95%
// over the cases run: two-sided 1 - 0.05 / cases, Student t on the batch means' degrees of
// freedom), each value's distance from the estimate in Bonferroni half-widths, and the CPU time.
#include <fmt/format.h>

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "qsweep/meanfield/meanfield.hpp"
#include "qsweep/sim/simulate.hpp"

namespace {

using namespace qsweep;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::vector<double> split(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stod(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  double events = 4e8;
  int replications = 16;
  std::uint64_t seed = 2024;
  std::vector<double> Ns{20, 100, 1000}, ds{2, 3}, lambdas{0.7, 0.9, 0.95};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--events")
      events = std::stod(value);
    else if (key == "--N")
      Ns = split(value);
    else if (key == "--d")
      ds = split(value);
    else if (key == "--lambda")
      lambdas = split(value);
    else if (key == "--replications")
      replications = std::stoi(value);
    else if (key == "--seed")
      seed = std::stoull(value);
    else {
      fmt::print(stderr, "unknown option {}\n", key);
      return 2;
    }
  }
  const double cases = static_cast<double>(Ns.size() * ds.size() * lambdas.size());
  const int batch_means = 32 * replications;  // replicated batch means: 32 per replication
  const boost::math::students_t_distribution<double> t(batch_means - 1.0);
  const double t95 = boost::math::quantile(t, 0.975);
  const double t_family = boost::math::quantile(t, 1.0 - 0.05 / (2.0 * cases));
  fmt::print("events {:g} per case, {} replications, {} cases: Bonferroni factor {:.4f} / {:.4f}\n",
             events, replications, cases, t_family, t95);
  fmt::print("{:>2} {:>5} {:>5} {:>10} {:>9} {:>9} {:>10} {:>10} {:>10} {:>7} {:>7} {:>7} {:>7}\n",
             "d", "lam", "N", "sim EQ/N", "hw95", "hwBonf", "order 0", "order 1", "order 2", "z0",
             "z1", "z2", "cpu s");
  for (double d : ds)
    for (double lambda : lambdas)
      for (double N : Ns) {
        meanfield::Options mo;
        mo.policy = meanfield::Policy::power_of_d;
        mo.policy_d = static_cast<int>(d);
        mo.lambda = lambda;
        const meanfield::Result limit = meanfield::solve(mo);
        mo.order = 1;
        mo.N = static_cast<std::int64_t>(N);
        const meanfield::Result first = meanfield::solve(mo);
        double second = NAN;
        mo.order = 2;
        try {
          second = meanfield::solve(mo).EQ_N;
        } catch (const std::exception&) {
        }

        model::FamilyParams family;
        family.kind = model::FamilyKind::complete;
        family.N = static_cast<int>(N);
        family.d = static_cast<int>(d);
        const model::System system(model::Family(family), {}, lambda);
        sim::Options o;
        o.policy = sim::Policy::jsq;
        o.replications = replications;
        o.max_events = 1;  // one round: the events asked for
        o.start = sim::Start::fixed_point;
        o.warmup = 10.0 / (1.0 - lambda);
        o.horizon = events / replications / (2.0 * lambda * N);
        const double start = cpu_seconds();
        const sim::Result r = sim::simulate(system, o, seed, static_cast<std::uint64_t>(N));
        const double cpu = cpu_seconds() - start;
        const double eq = r.EQ / N, hw = r.EQ_hw / N, hw_family = hw / t95 * t_family;
        const auto z = [&](double value) { return (value - eq) / hw_family; };
        fmt::print(
            "{:>2} {:>5} {:>5} {:>10.6f} {:>9.6f} {:>9.6f} {:>10.6f} {:>10.6f} {:>10.6f} {:>7.2f} "
            "{:>7.2f} {:>7.2f} {:>7.1f}{}\n",
            d, lambda, N, eq, hw, hw_family, limit.EQ, first.EQ_N, second, z(limit.EQ),
            z(first.EQ_N), z(second), cpu, r.flags ? fmt::format(" flags {}", r.flags) : "");
        std::fflush(stdout);
      }
  return 0;
}
