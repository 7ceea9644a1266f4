#pragma once
// The state of a task in a results file (/tasks/status): shared by the sweep layer, which
// decides it, and the store, whose row protocol it is (pending rows carry no checksum).
#include <array>
#include <cstdint>

#include "qsweep/common/enum_names.hpp"

namespace qsweep {

enum class TaskStatus : std::int8_t { pending = 0, done = 1, failed = 2, unstable = 3 };

}  // namespace qsweep

template <>
struct qsweep::EnumNames<qsweep::TaskStatus> {
  using K = TaskStatus;
  static constexpr std::array<EnumName<K>, 4> table{{
      {K::pending, "pending"},
      {K::done, "done"},
      {K::failed, "failed"},
      {K::unstable, "unstable"},
  }};
};
