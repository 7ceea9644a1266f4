#pragma once
// "Did you mean": the closest known name to a misspelt one (sweep keys, CLI flags, columns).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace qsweep {

// The closest of `candidates` to `word` if it is a plausible misspelling, else "".
inline std::string closest_match(std::string_view word,
                                 const std::vector<std::string_view>& candidates) {
  // Levenshtein distance, case-insensitive; accept distance <= 2 (or 1 for short words).
  auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  auto distance = [&](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min(
            {row[j] + 1, row[j - 1] + 1, diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_distance = word.size() <= 3 ? 1 : 2;
  for (auto candidate : candidates) {
    const std::size_t d = distance(word, candidate);
    if (d <= best_distance && d < word.size()) {
      if (d < best_distance || best.empty()) best = std::string(candidate);
      best_distance = d;
    }
  }
  return best;
}

}  // namespace qsweep
