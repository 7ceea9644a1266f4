#pragma once
// Text from inputs (sweep values, paths, attributes of a foreign file) quoted in a message or
// printed by `status`: a control byte must not act on the terminal (ESC), forge a line (a
// newline) or cut the message (NUL), so bytes below 0x20 and 0x7f are shown as \xNN.
#include <string>
#include <string_view>

namespace qsweep {

inline std::string printable(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string shown;
  shown.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      shown += "\\x";
      shown += kHex[byte >> 4];
      shown += kHex[byte & 0xf];
    } else {
      shown += c;
    }
  }
  return shown;
}

}  // namespace qsweep
