#pragma once
// Private to the model layer: what the family builders of the registry (src/model/families.cpp)
// fill, and the exact probabilities of listed families for the stability check.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dyadic.hpp"
#include "qsweep/model/family.hpp"

namespace qsweep::model::detail {

// A builder's output: a listed family gives its types either as edges (uniform over the
// distinct edges) or as types with their probabilities (summing to 1); an implicit one neither.
struct FamilyBuild {
  std::vector<std::pair<int, int>> edges;
  std::vector<std::vector<int>> types;
  std::vector<double> probs;
  // complete: the ordered d-tuples of distinct servers if they fit in 64 bits (one-draw
  // sampling), else 0.
  std::uint64_t tuples = 0;
};

// The probabilities of a listed family exactly: p_t = w_t / W (one w per listed type).
struct ListedWeights {
  std::vector<Dyadic> w;
  Dyadic W;
};

// InputError "family NAME with N = n: what".
[[noreturn]] void fail_family(const FamilyParams& params, const std::string& what);

}  // namespace qsweep::model::detail
