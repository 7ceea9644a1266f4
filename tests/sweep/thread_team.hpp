#pragma once
// Tests of planning as a team (sweep::PlanTeam): the members are threads of this process and
// their exchange goes through shared memory, in place of the ranks of a run and MPI.
#include <algorithm>
#include <barrier>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep::testing {

// Runs `member(team)` on `members` threads at once, each with its own PlanTeam.
inline void run_as_team(int members, const std::function<void(const PlanTeam& team)>& member) {
  std::barrier<> step(members);
  std::vector<char> shared;
  const auto run = [&](int rank) {
    PlanTeam team;
    team.rank = rank;
    team.size = members;
    team.gather_parts = [&, rank](char* data, const std::vector<std::uint64_t>& bytes) {
      std::vector<std::uint64_t> starts(bytes.size() + 1, 0);
      for (std::size_t m = 0; m < bytes.size(); ++m) starts[m + 1] = starts[m] + bytes[m];
      step.arrive_and_wait();  // every member is done with the buffer's previous use
      if (rank == 0) shared.assign(starts.back(), '\0');
      step.arrive_and_wait();
      const auto r = static_cast<std::size_t>(rank);
      std::copy_n(data + starts[r], bytes[r],
                  shared.begin() + static_cast<std::ptrdiff_t>(starts[r]));
      step.arrive_and_wait();
      std::copy(shared.begin(), shared.end(), data);
    };
    member(team);
  };
  std::vector<std::thread> threads;
  for (int rank = 0; rank < members; ++rank) threads.emplace_back(run, rank);
  for (std::thread& thread : threads) thread.join();
}

}  // namespace qsweep::sweep::testing
