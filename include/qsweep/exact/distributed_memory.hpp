#pragma once
// Memory of the distributed general engine (exact_mpi) on each rank, known before running it: how
// many ranks a task must span to fit a per-rank budget. In the exact layer, without MPI, so that
// the sweep layer estimates it too (exact_mpi uses the same partition).
#include <cstddef>
#include <cstdint>

namespace qsweep::exact::distributed {

// The distributed engine's largest N. Its masks and union indices are 64-bit; what limits it is
// memory, about 24 x 2^N / k bytes per rank on k ranks (N = 36: 1.5 TiB in all, N = 40: 24 TiB).
// The single-rank engine keeps its own limit, exact::kMaxGeneralServers = 30.
inline constexpr int kMaxServers = 40;

// Block bits of the partition: the top h bits of a union choose its block. `requested` >= 0 is
// taken as it is (at most N); -1 gives the default N - 18 within 8..12, at most N (at least 256
// blocks for the ranks to share, at most 2^18 unions per block below N = 30, at most 4096 blocks).
int block_bits(int N, int requested = -1);

// Unions stored by the rank that stores the most on `ranks` ranks: the blocks are dealt round the
// ranks, so rank 0 holds ceil(2^h / ranks) of them.
std::uint64_t max_owned_cells(int N, int ranks, int block_bits_requested = -1);

// Peak bytes of exact_mpi::evaluate (general engine) on the busiest of `ranks` ranks, beyond the
// rank's memory before the call, for N servers and `types` job types: the largest of its three
// passes (forward 16 B per owned union, backward 24, distribution 16) plus the receive buffer,
// the per-chunk partial sums, the lattice's and the partition's tables and the result. An upper
// bound for families that reach few unions (untouched pages are never resident); checked against
// the measured peak resident size in tests/exact_mpi/test_memory.cpp. The MPI library's own
// buffers are not counted (they are part of the rank's baseline).
double peak_bytes_per_rank(int N, std::size_t types, int ranks, int qmax, bool per_type);

}  // namespace qsweep::exact::distributed
