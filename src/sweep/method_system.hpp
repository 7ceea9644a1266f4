#pragma once
// Private to the sweep layer: what the methods that run on a queueing system (exact and
// simulate) share: the system's keys, its derivation and checks, its results columns.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cost_detail.hpp"
#include "method.hpp"
#include "qsweep/model/model.hpp"

namespace qsweep::sweep::detail {

// The keys of the system: family and its parameters, speeds or speed_profile, lambda or rho.
std::vector<KeySpec> system_keys();
// `lambda`, also a key of ldp: sets the Draft's load.
KeySpec lambda_key();

// Torus N, speeds from a profile, lambda from rho or heavy_traffic.
void derive_system(Draft& d, const BlockContext& block);

// Bytes of the system's lists: speeds, types, tree edges.
std::uint64_t system_list_bytes(const SystemParams& system);

double mean_speed(const SystemParams& system);

// A system built at expansion, with what is known of its stability region.
struct KnownSystem {
  std::unique_ptr<model::System> system;
  SystemSums sums;  // of `system`, whose load alone changes from task to task
  double stable_up_to = 0.0;
  double unstable_from = std::numeric_limits<double>::infinity();
  int checks = 0;     // of this system's stability so far
  double step = 0.0;  // how far above a task's load the next probe looks (check_stable)
};

// The task's system with its lambda, built once per block and family (a located InputError if
// the family refuses its parameters).
KnownSystem& known_system(const Task& task, BlockContext& block);

// False if the task is outside the stability region (paper eq. 2); an error with
// on_unstable: error.
bool check_stable(const Task& task, KnownSystem& known, const BlockContext& block);

// The system of a task on its own (a worker, or an estimate outside expansion).
model::System build_system(const SystemParams& system);

// "ring N=8 lambda=0.9", for describe().
std::string family_text(const SystemParams& system);

// Results columns: the system's parameters, and the lengths of per-type and per-server columns.
void add_system_parameters(std::vector<Column>& columns);
double type_count(const Task& task);
std::size_t listable_types(const Task& task, double limit);  // 0 if more than `limit`
std::size_t servers(const Task& task);
// A mean over the whole system divided by its servers: a mean per server (EQ_per_server).
double per_server(const Task& task, double whole);

}  // namespace qsweep::sweep::detail
