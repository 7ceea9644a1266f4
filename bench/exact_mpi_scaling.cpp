// Strong scaling of the distributed general engine (docs/exact.md, "Distributed general engine"),
// run under mpirun by bench/exact_mpi_scaling.sh. One JSON line per run on rank 0:
//   qsweep_bench_exact_mpi_scaling N [distributed|single|reachable] [budget_MiB]
// distributed: exact_mpi::general_engine on every rank of MPI_COMM_WORLD; single: the single-rank
// engine on rank 0 alone; reachable: the number of unions of the instance, counted on a bitset.
// The instance: the uniform edges of a random 3-regular graph (graph_seed 1), speeds 0.5..1.5
// around the servers, rho = 0.7, per-type means and P(Q = q) for q <= 10.
// budget_MiB caps each rank's data segment (RLIMIT_DATA, which covers private anonymous mappings
// since Linux 4.7): an engine that needs more fails with std::bad_alloc instead of running.
#include <mpi.h>
#include <sys/resource.h>
#include <sys/time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "qsweep/exact/engine.hpp"
#include "qsweep/exact_mpi/general.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/model/model.hpp"

namespace {

using namespace qsweep;

// Peak resident set of this process (VmHWM of /proc/self/status), MiB.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  double kib = 0.0;
  while (status >> key) {
    if (key == "VmHWM:") {
      status >> kib;
      break;
    }
    status.ignore(1 << 12, '\n');
  }
  return kib / 1024.0;
}

// CPU seconds of this process so far (user + system).
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

model::System instance(int N) {
  model::FamilyParams params;
  params.kind = model::FamilyKind::random_regular;
  params.N = N;
  params.degree = 3;
  params.graph_seed = 1;
  std::vector<double> speeds(static_cast<std::size_t>(N));
  for (int n = 0; n < N; ++n)
    speeds[static_cast<std::size_t>(n)] = 0.5 + static_cast<double>(n) / (N - 1);
  return model::System(model::Family(params), speeds, 0.7);  // mean speed 1: rho = 0.7
}

// Unions of the type masks (the empty union included): a bitset of 2^N bits filled in
// increasing mask order (every union is reached from a smaller one).
std::uint64_t count_unions(const std::vector<model::JobType>& types, int N) {
  std::vector<std::uint64_t> bits((std::uint64_t{1} << N) / 64 + 1);
  bits[0] = 1;
  std::uint64_t count = 0;
  for (std::uint64_t B = 0; B < (std::uint64_t{1} << N); ++B) {
    if (((bits[B / 64] >> (B % 64)) & 1U) == 0) continue;
    ++count;
    for (const auto& type : types) {
      const std::uint64_t target = B | type.servers;
      bits[target / 64] |= std::uint64_t{1} << (target % 64);
    }
  }
  return count;
}

std::string list(const std::vector<double>& values, double scale) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i] * scale);
  return out + "]";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc < 3) {
    if (rank == 0)
      std::fprintf(stderr, "usage: %s N distributed|single|reachable [budget_MiB]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const int N = std::atoi(argv[1]);
  const std::string mode = argv[2];
  if (argc > 3) {
    const rlim_t bytes = static_cast<rlim_t>(std::atof(argv[3]) * 1024 * 1024);
    const rlimit limit{bytes, bytes};
    setrlimit(RLIMIT_DATA, &limit);
  }
  const model::System system = instance(N);
  const auto types = system.family.enumerate();
  const int qmax = 10;
  std::string line;
  const auto start = std::chrono::steady_clock::now();
  try {
    if (mode == "reachable") {
      if (rank == 0) {
        const std::uint64_t unions = count_unions(types, N);
        const double dense = 16.0 * static_cast<double>(std::uint64_t{1} << N);
        // Compact: 16 bytes per union, a bitset of 2^N bits and a 32-bit count per 512 bits
        // (rank queries to find a union's slot).
        const double compact = 16.0 * static_cast<double>(unions) +
                               static_cast<double>(std::uint64_t{1} << N) * (1.0 / 8 + 4.0 / 512);
        line = "{\"N\": " + std::to_string(N) + ", \"types\": " + std::to_string(types.size()) +
               ", \"unions\": " + std::to_string(unions) + ", \"fraction\": " +
               std::to_string(static_cast<double>(unions) / std::ldexp(1.0, N)) +
               ", \"dense_MiB\": " + std::to_string(dense / 1048576) +
               ", \"compact_MiB\": " + std::to_string(compact / 1048576) + "}";
      }
    } else if (mode == "single") {
      if (rank == 0) {
        const auto m = exact::detail::general_engine(types, system.speeds,
                                                     system.total_arrival_rate(), qmax, true);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        line = "{\"N\": " + std::to_string(N) +
               ", \"engine\": \"single\", \"seconds\": " + std::to_string(seconds) +
               ", \"peak_rss_MiB\": [" + std::to_string(peak_rss_mib()) + "], \"cpu_s\": [" +
               std::to_string(cpu_seconds()) + "], \"EQ\": " + std::to_string(m.EQ) +
               ", \"unions\": " + std::to_string(m.unions) + "}";
      }
    } else {
      exact_mpi::Stats stats;
      const auto m = exact_mpi::general_engine(MPI_COMM_WORLD, types, system.speeds,
                                               system.total_arrival_rate(), qmax, true, &stats);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double mine[2] = {peak_rss_mib(), cpu_seconds()};
      std::vector<double> both(2 * static_cast<std::size_t>(ranks)), peaks, cpu;
      MPI_Gather(mine, 2, MPI_DOUBLE, both.data(), 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      for (int r = 0; r < ranks; ++r) {
        peaks.push_back(both[2 * static_cast<std::size_t>(r)]);
        cpu.push_back(both[2 * static_cast<std::size_t>(r) + 1]);
      }
      double distribution = 0.0;
      for (double b : stats.distribution_bytes) distribution += b;
      const double MiB = 1.0 / 1048576;
      line = "{\"N\": " + std::to_string(N) +
             ", \"engine\": \"distributed\", \"ranks\": " + std::to_string(ranks) +
             ", \"block_bits\": " + std::to_string(stats.block_bits) +
             ", \"seconds\": " + std::to_string(seconds) +
             ", \"forward_s\": " + std::to_string(stats.forward_seconds) +
             ", \"backward_s\": " + std::to_string(stats.backward_seconds) +
             ", \"distribution_s\": " + std::to_string(stats.distribution_seconds) +
             ", \"peak_rss_MiB\": " + list(peaks, 1.0) + ", \"cpu_s\": " + list(cpu, 1.0) +
             ", \"forward_MiB_per_layer\": " + list(stats.forward_bytes, MiB) +
             ", \"backward_MiB_per_layer\": " + list(stats.backward_bytes, MiB) +
             ", \"distribution_MiB_per_step\": " + std::to_string(distribution * MiB / qmax) +
             ", \"EQ\": " + std::to_string(m.EQ) + ", \"unions\": " + std::to_string(m.unions) +
             "}";
    }
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "rank %d: out of memory under the budget\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (rank == 0) std::printf("%s\n", line.c_str());
  MPI_Finalize();
  return 0;
}
