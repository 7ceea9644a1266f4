#include "qsweep/model/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "qsweep/common/error.hpp"

namespace qsweep::model {

std::vector<double> speed_profile(const std::string& name, int N, double fast) {
  if (N < 1 || N > kMaxServers)
    throw InputError(
        fmt::format("speed profile for N = {}; expected 1 <= N <= {}", N, kMaxServers));
  if (!(fast > 0.0 && std::isfinite(fast)))
    throw InputError(fmt::format("speed profile '{}': fast = {} must be > 0", name, fast));
  std::vector<double> speeds(static_cast<std::size_t>(N), 1.0);
  if (name == "two_class") {
    for (int n = 0; n < N / 2; ++n) speeds[static_cast<std::size_t>(n)] = fast;
  } else if (name == "linear") {
    for (int n = 0; n < N; ++n)
      speeds[static_cast<std::size_t>(n)] = N == 1 ? 1.0 : 1.0 + (fast - 1.0) * n / (N - 1.0);
  } else {
    throw InputError(fmt::format("unknown speed profile '{}'; expected two_class or linear", name));
  }
  return speeds;
}

System::System(Family family_, std::vector<double> speeds_, double lambda_)
    : family(std::move(family_)), speeds(std::move(speeds_)), lambda(lambda_) {
  if (speeds.empty()) speeds.assign(static_cast<std::size_t>(family.num_servers()), 1.0);
  if (static_cast<int>(speeds.size()) != family.num_servers())
    throw InputError(
        fmt::format("{} speeds given for N = {} servers", speeds.size(), family.num_servers()));
  for (std::size_t n = 0; n < speeds.size(); ++n)
    if (!(speeds[n] > 0.0 && std::isfinite(speeds[n])))
      throw InputError(
          fmt::format("speed of server {} is {}; expected a finite value > 0", n + 1, speeds[n]));
  if (!(lambda > 0.0 && std::isfinite(lambda)))
    throw InputError(fmt::format("lambda = {}; expected a finite value > 0", lambda));
}

double System::mean_speed() const {
  return std::accumulate(speeds.begin(), speeds.end(), 0.0) / static_cast<double>(speeds.size());
}

bool System::identical_speeds() const {
  return std::all_of(speeds.begin(), speeds.end(), [&](double s) { return s == speeds.front(); });
}

}  // namespace qsweep::model
