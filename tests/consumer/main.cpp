// Uses qsweep as a library through its installed package: expands a sweep and evaluates its tasks
// with the exact engine. Full redundancy on two unit-speed servers is an M/M/1 queue of rate 2,
// so E[Q] = rho / (1 - rho) with rho = lambda (per-server arrival rate lambda, total 2 lambda).
#include <cmath>
#include <cstdio>
#include <exception>

#include "qsweep/exact/exact.hpp"
#include "qsweep/sweep/plan.hpp"
#include "qsweep/version.hpp"

int main() {
  try {
    const auto plan = qsweep::sweep::parse_plan(R"(name: consumer
blocks:
  - method: exact
    family: complete
    N: 2
    d: 2
    lambda: [0.25, 0.5, 0.75]
)",
                                                "consumer.yaml");
    if (plan.tasks.size() != 3) {
      std::fprintf(stderr, "expected 3 tasks, got %zu\n", plan.tasks.size());
      return 1;
    }
    for (const double lambda : {0.25, 0.5, 0.75}) {
      const qsweep::model::System system(
          qsweep::model::Family({.kind = qsweep::model::FamilyKind::complete, .N = 2, .d = 2}),
          {1.0, 1.0}, lambda);
      const auto result = qsweep::exact::evaluate(system, {});
      const double expected = lambda / (1 - lambda);
      if (std::abs(result.EQ - expected) > 1e-12 * expected) {
        std::fprintf(stderr, "lambda %g: E[Q] = %.17g, expected %.17g\n", lambda, result.EQ,
                     expected);
        return 1;
      }
    }
    std::printf("qsweep %s (git %s): 3 tasks planned, E[Q] equals the M/M/1 value\n",
                qsweep::kVersion, qsweep::git_commit());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
