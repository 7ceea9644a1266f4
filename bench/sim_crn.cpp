// Common random numbers (docs/sim.md, "Common random numbers"): the variance of the difference
// of E[T] between power_of_d with d = 2 and d = 3 (N = 100 servers, every job may go anywhere:
// family complete with d = N; lambda = 0.9), per replication, with independent streams (the two
// tasks' own keys, as without common_random_numbers) and with common random numbers (one stream
// key, coupled streams), measured side by side in one run, two ways:
//  * equal windows: one round of the given horizon each (max_events caps the run at its first
//    round), so that replication r of both tasks covers the same time; the effect of the coupling;
//  * the default procedure (rounds of doubling length until the diagnostics pass): each task
//    stops at its own round, and a pair's windows may differ in length (printed). Then also the
//    coupled pair over the window both observed (from the later truncation to the earlier end),
//    each replication's E[T] recomputed from the totals the results keep on the grid of window
//    bounds (Result::cumulative_time), as the Python loader's paired_difference does.
//   qsweep_bench_sim_crn [replications [horizon]]    (defaults 100 and 8000)
// Prints the variances, their ratio with a 95% interval (F distribution), and the paired
// difference of E[T] with its interval both ways.
#include <algorithm>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "qsweep/sim/simulate.hpp"

namespace {

using namespace qsweep;

struct Summary {
  double mean = 0.0, variance = 0.0;
};

Summary summarise(const std::vector<double>& x) {
  Summary s;
  for (double v : x) s.mean += v;
  s.mean /= static_cast<double>(x.size());
  for (double v : x) s.variance += (v - s.mean) * (v - s.mean);
  s.variance /= static_cast<double>(x.size() - 1);
  return s;
}

std::vector<double> differences(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  for (std::size_t r = 0; r < a.size(); ++r) d.push_back(a[r] - b[r]);
  return d;
}
std::vector<double> differences(const sim::Result& a, const sim::Result& b) {
  return differences(a.ET_replications, b.ET_replications);
}

// The window [start, end] (after the given warm-up) that two coupled results both observed:
// from the later of their truncations to the earlier of their ends, on grid times both hold.
struct Window {
  double start = 0.0, end = 0.0;
};
Window common_window(const sim::Result& a, const sim::Result& b, double warmup) {
  const double end = std::min(a.cumulative_time.back(), b.cumulative_time.back());
  // warm-up used = given + a grid time, rounded
  const double start = std::max(a.warmup, b.warmup) - warmup - 1e-9 * end;
  Window w{end, end};
  for (double t : a.cumulative_time)
    if (t >= start && t < w.start &&
        std::find(b.cumulative_time.begin(), b.cumulative_time.end(), t) != b.cumulative_time.end())
      w.start = t;
  if (start <= 0.0) w.start = 0.0;
  return w;
}

// Each replication's E[T] over the window, from the totals at its two ends.
std::vector<double> window_ET(const sim::Result& r, Window w) {
  const std::size_t K = r.cumulative_time.size();
  const auto at = [&](std::size_t rep, double time, std::size_t j) {
    if (time == 0.0) return 0.0;
    const auto k = static_cast<std::size_t>(
        std::find(r.cumulative_time.begin(), r.cumulative_time.end(), time) -
        r.cumulative_time.begin());
    return r.cumulative_replications[3 * (rep * K + k) + j];
  };
  std::vector<double> ET;
  for (std::size_t rep = 0; rep < r.ET_replications.size(); ++rep)
    ET.push_back((at(rep, w.end, 1) - at(rep, w.start, 1)) /
                 (at(rep, w.end, 2) - at(rep, w.start, 2)));
  return ET;
}

void print_ratio(const char* what, double independent, double common, double df) {
  const boost::math::fisher_f_distribution<double> F(df, df);
  const double ratio = independent / common;
  std::printf("  variance ratio (independent / common%s): %.1f, 95%% interval [%.1f, %.1f]\n", what,
              ratio, ratio / boost::math::quantile(F, 0.975),
              ratio / boost::math::quantile(F, 0.025));
}

// Runs d = 2 and d = 3 with independent and with common streams and prints the comparison.
void compare(const char* title, const model::System& system, const sim::Options& options) {
  const auto run = [&](int d, bool common, std::uint64_t stream) {
    sim::Options o = options;
    o.policy_d = d;
    o.common_random_numbers = common ? static_cast<unsigned>(sim::CommonRandomKey::policy_d) : 0;
    return sim::simulate(system, o, 2026, stream);
  };
  // Independent: each task its own key. Common: one key for both, coupled streams.
  const sim::Result independent2 = run(2, false, 1), independent3 = run(3, false, 2);
  const sim::Result common2 = run(2, true, 3), common3 = run(3, true, 3);

  const Summary independent = summarise(differences(independent2, independent3));
  const Summary common = summarise(differences(common2, common3));
  const double n = options.replications, df = n - 1.0;
  const double t = boost::math::quantile(boost::math::students_t_distribution<double>(df), 0.975);
  std::printf("%s\n", title);
  std::printf(
      "  windows (warm-up used + horizon) of d=2 and d=3: independent %g+%g, %g+%g; "
      "common %g+%g, %g+%g\n",
      independent2.warmup, independent2.horizon, independent3.warmup, independent3.horizon,
      common2.warmup, common2.horizon, common3.warmup, common3.horizon);
  std::printf("  flags: independent %u %u, common %u %u\n", independent2.flags, independent3.flags,
              common2.flags, common3.flags);
  std::printf("  E[T] d=2 %.5f +- %.5f, d=3 %.5f +- %.5f (independent runs, batch means)\n",
              independent2.ET, independent2.ET_hw, independent3.ET, independent3.ET_hw);
  std::printf(
      "  independent streams:   Var[T2 - T3] per replication %.4g, difference %.5f +- %.5f\n",
      independent.variance, independent.mean, t * std::sqrt(independent.variance / n));
  std::printf(
      "  common random numbers: Var[T2 - T3] per replication %.4g, difference %.5f +- %.5f\n",
      common.variance, common.mean, t * std::sqrt(common.variance / n));
  const Summary a = summarise(common2.ET_replications), b = summarise(common3.ET_replications);
  std::printf(
      "  common random numbers: Var[T2] %.4g, Var[T3] %.4g, correlation %.3f\n", a.variance,
      b.variance,
      (a.variance + b.variance - common.variance) / 2.0 / std::sqrt(a.variance * b.variance));
  print_ratio("", independent.variance, common.variance, df);
  // The coupled pair over the window both observed (the same as their own when equal).
  const Window w = common_window(common2, common3, options.warmup);
  if (!(w.start < w.end)) {
    std::printf("  no common window: the coupled rows' windows do not overlap on the grid\n");
    return;
  }
  const std::vector<double> ET2 = window_ET(common2, w), ET3 = window_ET(common3, w);
  const Summary aligned = summarise(differences(ET2, ET3));
  const Summary a2 = summarise(ET2), a3 = summarise(ET3);
  std::printf(
      "  common window %g+%g..%g: Var[T2 - T3] per replication %.4g, difference %.5f +- "
      "%.5f\n",
      options.warmup, w.start, w.end, aligned.variance, aligned.mean,
      t * std::sqrt(aligned.variance / n));
  std::printf(
      "  common window: Var[T2] %.4g, Var[T3] %.4g, correlation %.3f\n", a2.variance, a3.variance,
      (a2.variance + a3.variance - aligned.variance) / 2.0 / std::sqrt(a2.variance * a3.variance));
  print_ratio(", common window", independent.variance, aligned.variance, df);
  // Independent rows of the same window would have Var[T2] + Var[T3]: the coupling alone.
  std::printf("  variance ratio (Var[T2] + Var[T3] / Var[T2 - T3], common window): %.1f\n",
              (a2.variance + a3.variance) / aligned.variance);
}

}  // namespace

int main(int argc, char** argv) {
  const int replications = argc > 1 ? std::atoi(argv[1]) : 100;
  const double horizon = argc > 2 ? std::atof(argv[2]) : 8000.0;
  if (replications < 3 || !(horizon > 0.0)) {
    std::fprintf(stderr, "usage: qsweep_bench_sim_crn [replications >= 3 [horizon > 0]]\n");
    return 2;
  }
  model::FamilyParams family;
  family.kind = model::FamilyKind::complete;
  family.N = 100;
  family.d = 100;
  const double lambda = 0.9;
  const model::System system(model::Family(family), {}, lambda);

  sim::Options options;
  options.policy = sim::Policy::power_of_d;
  options.horizon = horizon;
  options.warmup = 200.0;
  options.replications = replications;
  std::printf(
      "power_of_d d = 2 vs 3, N = 100, lambda = %g: %d replications, first horizon %g, "
      "warm-up 200\n",
      lambda, replications, horizon);
  // A round costs about R (warm-up + horizon) 2 lambda N events (arrivals and departures); the
  // next round would cost twice that again, so 1.5 times one round allows the first only.
  sim::Options one_round = options;
  one_round.max_events = 1.5 * replications * (options.warmup + horizon) * 2.0 * lambda * 100.0;
  compare("equal windows (one round each):", system, one_round);
  options.max_events = 1e18;  // the default procedure, run until its diagnostics pass
  compare("default procedure (rounds until the diagnostics pass):", system, options);
  return 0;
}
