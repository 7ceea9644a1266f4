#include "qsweep/sweep/task.hpp"

#include <fmt/format.h>

#include "keys.hpp"

namespace qsweep::sweep {
namespace {

std::string family_text(const Task& t) {
  const auto& f = t.family;
  const auto uses = model::family_uses(f.kind);
  std::string s = fmt::format("{} N={}", name_of(f.kind), f.N);
  if (uses.d) s += fmt::format(" d={}", f.d);
  if (uses.eps) s += fmt::format(" eps={:g}", f.eps);
  if (uses.degree) s += fmt::format(" degree={}", f.degree);
  if (uses.edge_prob) s += fmt::format(" edge_prob={:g}", f.edge_prob);
  if (uses.torus_shape) s += fmt::format(" ({}x{})", f.rows, f.cols);
  if (uses.types) s += fmt::format(" ({} types)", f.types.size());
  if (uses.tree_edges && !f.tree_edges.empty())
    s += " (given tree)";
  else if (uses.graph_seed)
    s += fmt::format(" graph_seed={}", f.graph_seed);
  if (!t.speeds.empty()) s += " (speeds given)";
  return s + fmt::format(" lambda={:.6g}", t.lambda);
}

}  // namespace

std::string describe(const Task& t) {
  switch (t.method) {
    case Method::exact: {
      std::string text =
          fmt::format("exact {}{} qmax={}",
                      t.exact.policy == exact::Policy::redundancy_cos ? "redundancy_cos " : "",
                      family_text(t), t.exact.qmax);
      if (t.exact.joint_qmax >= 0)
        text += fmt::format(" joint_qmax={} joint_bin={}", t.exact.joint_qmax, t.exact.joint_bin);
      return text;
    }
    case Method::simulate: {
      const auto& o = t.simulate;
      std::string policy(name_of(o.policy));
      if (o.policy == sim::Policy::power_of_d) policy += fmt::format("(d={})", o.policy_d);
      if (o.longest_idle) policy += "(longest_idle)";
      std::string service(name_of(o.service.kind));
      if (o.service.kind == sim::ServiceKind::hyperexponential)
        service += fmt::format("(cv2={:g})", o.service.cv2);
      return fmt::format("simulate {} {} service={} horizon={:g} replications={}", policy,
                         family_text(t), service, o.horizon, o.replications);
    }
    case Method::ldp: {
      const auto& o = t.ldp;
      std::string policy(name_of(o.policy));
      if (o.policy == ldp::Policy::power_of_d) policy += fmt::format("(d={})", o.policy_d);
      std::string text = fmt::format("ldp {} n={} j={} T={:g} lambda={:.6g} {}", policy, o.n, o.j,
                                     o.T, o.lambda, name_of(o.estimator));
      if (o.estimator != ldp::Estimator::exact) text += fmt::format(" samples={:g}", o.samples);
      return text;
    }
  }
  return "unknown task";
}

std::string category(const Task& t) {
  switch (t.method) {
    case Method::exact:
      return std::string(name_of(t.family.kind));
    case Method::simulate:
      return fmt::format("{} {}", name_of(t.family.kind), name_of(t.simulate.policy));
    case Method::ldp:
      return fmt::format("{} {}", name_of(t.ldp.policy), name_of(t.ldp.estimator));
  }
  return "unknown";
}

}  // namespace qsweep::sweep
