#pragma once
// A redundancy system: a family of job types, server speeds, and the per-server arrival rate.
#include <string>
#include <vector>

#include "qsweep/model/family.hpp"

namespace qsweep::model {

// Named speed profiles for heterogeneous servers (sweep key `speeds: {profile: ...}`).
// "two_class": first half speed `fast`, rest 1; "linear": speeds 1..fast evenly spaced.
std::vector<double> speed_profile(const std::string& name, int N, double fast);

struct System {
  Family family;
  std::vector<double> speeds;  // mu_1..mu_N, all > 0
  double lambda = 0.0;         // per-server arrival rate: total arrival rate N * lambda

  // Validates speeds (size N, finite, > 0) and lambda (finite, > 0); throws InputError.
  System(Family family, std::vector<double> speeds, double lambda);

  int N() const { return family.num_servers(); }
  double total_arrival_rate() const { return N() * lambda; }
  double mean_speed() const;
  double rho() const { return lambda / mean_speed(); }
  bool identical_speeds() const;
};

}  // namespace qsweep::model
