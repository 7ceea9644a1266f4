#pragma once
// The message with which a sweep text is refused ("no error" if it expands).
#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep::testing {

inline std::string error_of(const std::string& yaml) {
  try {
    parse_plan(yaml, "test.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace qsweep::sweep::testing
