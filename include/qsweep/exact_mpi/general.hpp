#pragma once
// The general exact engine with its lattice of unions split over the ranks of an MPI
// communicator (docs/exact.md, "Distributed general engine"): memory per rank about 24 x 2^N / k
// bytes on k ranks instead of 16 x 2^N on one. Every rank returns the same results, equal to the
// single-rank engine's to rounding (the sums are taken in another order).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "qsweep/exact/distributed_memory.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/model/model.hpp"

namespace qsweep::exact_mpi {

// The partition and its memory (exact/distributed_memory.hpp, shared with the sweep layer).
using exact::distributed::block_bits;
using exact::distributed::kMaxServers;
using exact::distributed::max_owned_cells;
using exact::distributed::peak_bytes_per_rank;

// What one run exchanged and how long it took (bytes summed over the ranks; seconds of this rank).
struct Stats {
  int block_bits = 0;                      // the top block_bits bits of a union choose its block
  std::uint64_t owned_cells = 0;           // unions stored on this rank
  std::vector<double> forward_bytes;       // per layer (popcount of the block), sent by all ranks
  std::vector<double> backward_bytes;      // per layer
  std::vector<double> distribution_bytes;  // per step q = 1..qmax
  double forward_seconds = 0.0, backward_seconds = 0.0, distribution_seconds = 0.0;
};

// Asked on every rank before each layer of a run (and each step of the distribution), when no
// message of the run is in flight: when it returns true on any rank, every rank throws Stopped
// and the run is abandoned. A caller that stops a long run (a stop request, a heartbeat) uses it.
using StopCheck = std::function<bool()>;
struct Stopped : std::runtime_error {
  Stopped() : std::runtime_error("exact_mpi: stopped between layers") {}
};

// exact::detail::general_engine on the ranks of `comm` for N <= kMaxServers (collective: every
// rank calls it with the same arguments). Errors every rank meets alike (unstable in doubles, 1/C
// out of range) are reported alike on every rank; one that a single rank meets (std::bad_alloc)
// leaves the others waiting, so the caller ends the job (run::MpiSession aborts on an escaping
// exception). block_bits: blocks of 2^(N - block_bits) unions (-1: N - 18 within 8..12, at most N).
exact::detail::Moments general_engine(MPI_Comm comm, const std::vector<model::JobType>& types,
                                      const std::vector<double>& speeds, double total_rate,
                                      int qmax, bool per_type, Stats* stats = nullptr,
                                      int block_bits = -1, const StopCheck& stop = {});

// exact::validate for exact_mpi::evaluate: the general engine takes N <= kMaxServers
// (include/qsweep/exact/distributed_memory.hpp) instead of exact::kMaxGeneralServers.
exact::Validation validate(const model::System& system, const exact::Options& options);

// exact::evaluate with the distributed general engine where evaluate would use the general one
// (the symmetric and cancel-on-start engines run on every rank as they are), for N up to
// kMaxServers. Collective.
exact::Result evaluate(MPI_Comm comm, const model::System& system, const exact::Options& options,
                       Stats* stats = nullptr);

}  // namespace qsweep::exact_mpi
