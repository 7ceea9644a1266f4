#pragma once
// Stability of a simulated system under its policy (docs/sim.md, "Stability before running").
// Paper eq. (2) is necessary for every policy; the dispatching policies have their own regions.
#include <string>

#include "qsweep/model/model.hpp"
#include "qsweep/sim/options.hpp"

namespace qsweep::sim {

struct PolicyStability {
  bool stable = true;   // false: outside a known stability region of the policy
  std::string reason;   // when !stable: which servers are overloaded, and by how much
  std::string warning;  // when stable: why the policy may still be unstable (empty if none)
};

// redundancy_coc, redundancy_cos, jsq: eq. (2). random: every server's share of the arrivals
// below its speed. power_of_d: eq. (2) for the sets it samples (d of S). jiq: eq. (2), and a
// warning where random routing would overload a server (jiq routes at random when S is busy).
PolicyStability check_stability(const model::System& system, const Options& options);

}  // namespace qsweep::sim
