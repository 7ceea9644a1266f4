// Memory of the distributed general engine per rank (include/qsweep/exact/distributed_memory.hpp),
// item by item as src/exact_mpi/general.cpp allocates it.
#include "qsweep/exact/distributed_memory.hpp"

#include <algorithm>
#include <cmath>

#include "qsweep/exact/general_lattice.hpp"  // Mask, Cell, kMaxTableTypes

namespace qsweep::exact::distributed {
namespace {

// Partial sums over chunks of at most this many unions (kBlock of general.cpp).
constexpr double kChunk = 4096.0;

// A ZeroedMemory block: from 4 MiB on, a mapping rounded up to whole 2 MiB pages.
double zeroed(double bytes) {
  const double huge = 2.0 * 1048576.0;
  return bytes >= 2.0 * huge ? std::ceil(bytes / huge) * huge : bytes;
}

}  // namespace

int block_bits(int N, int requested) {
  return requested >= 0 ? std::min(requested, N) : std::min(N, std::clamp(N - 18, 8, 12));
}

std::uint64_t max_owned_cells(int N, int ranks, int block_bits_requested) {
  const int h = block_bits(N, block_bits_requested);
  const std::uint64_t blocks = std::uint64_t{1} << h;
  const auto k = static_cast<std::uint64_t>(std::max(ranks, 1));
  return (blocks + k - 1) / k * (std::uint64_t{1} << (N - h));
}

double peak_bytes_per_rank(int N, std::size_t types, int ranks, int qmax, bool per_type) {
  using exact::detail::Cell;
  using exact::detail::Mask;
  const double mask = sizeof(Mask), dbl = sizeof(double);
  const int h = block_bits(N, -1);
  const double T = static_cast<double>(types);
  const double blocks = std::ldexp(1.0, h);
  const double cells = std::ldexp(1.0, N - h);  // unions per block
  const double owned = static_cast<double>(max_owned_cells(N, ranks));
  const double owned_blocks = owned / cells;
  const double chunks = std::ldexp(1.0, N) / std::min(kChunk, cells);

  // Alive throughout: the lattice (types, half tables of speeds and of the types inside a set),
  // the partition (layers, owner, slot, which block feeds which, the types per owned block) and
  // the list of a block's unions.
  const double halves = std::ldexp(1.0, N / 2) + std::ldexp(1.0, N - N / 2);
  const double type_words = types <= exact::detail::kMaxTableTypes ? std::ceil(T / 64.0) : 0.0;
  const double lattice = T * (mask + dbl) + dbl * halves * (1.0 + type_words);
  const double partition = blocks * (mask + 4.0 + 8.0) + blocks * blocks / 8.0 +
                           owned_blocks * (mask + T * (mask + 2.0 * dbl)) + T * mask;
  const double union_list = cells * mask;
  // The enumerated types and the result (P(Q = q), alpha_q and ln weights; five values per type
  // and one per server with the per-type means).
  const double around =
      T * 16.0 + 3.0 * dbl * (qmax + 1.0) + (per_type ? 5.0 * dbl * T + dbl * N : 0.0);

  const double lattice_block = zeroed(owned * sizeof(Cell));
  const double forward = lattice_block + 2.0 * dbl * chunks + 2.0 * dbl * cells;
  const double backward = lattice_block + zeroed(owned * dbl) + dbl * chunks + 2.0 * dbl * cells +
                          (per_type ? dbl * T * (4.0 + ranks) : dbl * T);
  const double distribution = qmax > 0 ? lattice_block + dbl * chunks + dbl * cells : 0.0;
  return lattice + partition + union_list + around + std::max({forward, backward, distribution});
}

}  // namespace qsweep::exact::distributed
