#include "qsweep/ldp/ldp.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "estimators.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/ldp/theory.hpp"

namespace qsweep::ldp {

namespace detail {

std::vector<std::int64_t> initial_counts(const Options& options) {
  if (!options.initial_counts.empty()) return options.initial_counts;
  return {0, options.n};
}

double exact_state_count(const Options& options) {
  // Occupancies of n queues over lengths 0..j-1: C(n + j - 1, j - 1).
  double states = 1.0;
  for (int i = 1; i <= options.j - 1; ++i)
    states = states * (static_cast<double>(options.n) + i) / i;
  return std::round(states);
}

void set_from_logs(Result& result, double log_p, double log_low, double log_high, std::int64_t n) {
  log_high = std::min(log_high, 0.0);  // a probability
  const double inverse_n = 1.0 / static_cast<double>(n);
  result.log_probability = log_p;
  result.probability = std::exp(log_p);
  result.ci_low = std::exp(log_low);
  result.ci_high = std::exp(log_high);
  result.log_rate = log_p * inverse_n;
  result.log_rate_low = log_low * inverse_n;
  result.log_rate_high = log_high * inverse_n;
}

}  // namespace detail

namespace {

constexpr double max_exact_states = 4e7;  // two vectors of doubles: 640 MB

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

bool positive_finite(double x) { return x > 0.0 && std::isfinite(x); }

// Warning thresholds (docs/ldp.md, "Warnings").
// The relative error of a sampled estimate is estimated from the same paths; with k effective
// paths it is about 1/sqrt(k) and the 95% interval assumes a normal estimate, which for a count
// of hits needs about 10 of them (the usual rule n p >= 10 for a binomial).
constexpr double kMinEffectiveSamples = 10;
// The exact chain's relative gap is (upper - lower) / lower; the subtraction rounds by a few ulp.
constexpr double kGapRounding = 4 * std::numeric_limits<double>::epsilon();

std::string warnings(const Result& r, const Options& o) {
  std::vector<std::string> w;
  const bool sampled = o.estimator != Estimator::exact;
  if (std::isnan(r.log_probability)) w.push_back("the estimate is NaN (a numerical failure)");
  if (sampled && r.hits == 0) {
    w.push_back(o.estimator == Estimator::monte_carlo
                    ? fmt::format("no path reached the event in {:.6g} paths: probability 0 and "
                                  "log rate -inf are only the bound p <= {:.2g} (95%)",
                                  r.samples, r.ci_high)
                    : fmt::format("no path reached the event in {:.6g} paths: probability 0 and "
                                  "log rate -inf are not estimates",
                                  r.samples));
  } else if (sampled && r.effective_samples < kMinEffectiveSamples) {
    w.push_back(
        r.hits < kMinEffectiveSamples
            ? fmt::format("only {:.0f} hits in {:.6g} paths: the relative error {:.2g} is not "
                          "reliable",
                          r.hits, r.samples, r.relative_error)
            : fmt::format("the weights rest on {:.2g} effective paths ({:.0f} hits): the "
                          "relative error {:.2g} is not reliable",
                          r.effective_samples, r.hits, r.relative_error));
  }
  if (o.estimator == Estimator::exact && r.log_probability == -HUGE_VAL) {
    w.push_back(fmt::format(
        "the exact chain lost p to underflow: it only bounds it, ln p <= {:.6g}; use importance",
        r.log_rate_high * static_cast<double>(o.n)));
  } else if (o.estimator == Estimator::exact && r.relative_error > o.truncation + kGapRounding) {
    w.push_back(fmt::format(
        "underflow: exact bounds differ by {:.2g} relative, more than truncation {:.2g}",
        r.relative_error, o.truncation));
  }
  if (r.probability == 0.0 && std::isfinite(r.log_probability))
    w.push_back(fmt::format(
        "p = exp({:.6g}) underflows a double: probability columns are 0, use log_probability",
        r.log_probability));
  if (sampled && o.target_rel_error > 0.0 && !(r.relative_error <= o.target_rel_error))
    w.push_back(fmt::format("target_rel_error {:.3g} not reached: {:.3g} after {:.6g} paths",
                            o.target_rel_error, r.relative_error, r.samples));
  std::string text;
  for (const std::string& sentence : w) text += (text.empty() ? "" : "; ") + sentence;
  return text;
}

}  // namespace

void validate(const Options& o) {
  if (o.n < 1) throw InputError(fmt::format("ldp: n must be >= 1 (got {})", o.n));
  if (o.j < 2) throw InputError(fmt::format("ldp: j must be >= 2 (got {})", o.j));
  if (!positive_finite(o.T)) throw InputError(fmt::format("ldp: T must be > 0 (got {})", o.T));
  if (!positive_finite(o.lambda))
    throw InputError(fmt::format("ldp: lambda must be > 0 (got {})", o.lambda));
  if (o.policy == Policy::power_of_d && (o.policy_d < 1 || o.policy_d > o.n))
    throw InputError(
        fmt::format("ldp: power_of_d needs 1 <= d <= n (got d = {}, n = {})", o.policy_d, o.n));
  if (!o.initial_counts.empty()) {
    const auto& c = o.initial_counts;
    if (std::any_of(c.begin(), c.end(), [](std::int64_t x) { return x < 0; }) ||
        std::accumulate(c.begin(), c.end(), std::int64_t{0}) != o.n)
      throw InputError("ldp: initial_counts must be >= 0 and sum to n");
    for (std::size_t k = static_cast<std::size_t>(o.j); k < c.size(); ++k)
      if (c[k] > 0)
        throw InputError(fmt::format(
            "ldp: initial_counts has a queue of length {} >= j = {} (the event holds at time 0)", k,
            o.j));
  }
  switch (o.estimator) {
    case Estimator::importance:
      if (o.policy != Policy::jsq)
        throw InputError(
            "ldp: importance sampling is implemented for policy jsq only (use monte_carlo or "
            "exact for jiq and power_of_d)");
      [[fallthrough]];
    case Estimator::monte_carlo:
      if (!(o.samples >= 1.0 && o.samples <= 9e18))
        throw InputError(fmt::format("ldp: samples must be in [1, 9e18] (got {})", o.samples));
      if (!(o.target_rel_error >= 0.0 && std::isfinite(o.target_rel_error)))
        throw InputError(
            fmt::format("ldp: target_rel_error must be >= 0 (got {})", o.target_rel_error));
      break;
    case Estimator::exact: {
      if (!(o.truncation > 0.0 && o.truncation < 1.0))
        throw InputError(fmt::format("ldp: truncation must be in (0, 1) (got {})", o.truncation));
      const double states = detail::exact_state_count(o);
      if (states > max_exact_states)
        throw InputError(fmt::format(
            "ldp: the exact chain for n = {}, j = {} has {:.3g} states (limit {:.0e}); use "
            "importance or monte_carlo",
            o.n, o.j, states, max_exact_states));
      break;
    }
  }
}

Result estimate(const Options& options, std::uint64_t seed, std::uint64_t task_id) {
  validate(options);
  const double start = thread_cpu_seconds();
  Result result;
  switch (options.estimator) {
    case Estimator::monte_carlo:
      result = detail::monte_carlo(options, seed, task_id);
      break;
    case Estimator::importance:
      result = detail::importance(options, seed, task_id);
      break;
    case Estimator::exact:
      result = detail::exact_chain(options);
      break;
  }
  // The theory is for jsq started with every queue of length 1.
  const bool theory_applies =
      options.policy == Policy::jsq &&
      detail::initial_counts(options) == std::vector<std::int64_t>{0, options.n};
  result.theory_rate = theory_applies
                           ? decay_rate_fixed_lambda(options.j, options.T, options.lambda)
                           : std::numeric_limits<double>::quiet_NaN();
  result.cpu_seconds = thread_cpu_seconds() - start;
  result.warning = warnings(result, options);
  return result;
}

}  // namespace qsweep::ldp
