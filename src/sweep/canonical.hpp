#pragma once
// Private to the sweep layer: a canonical text form of value types, written through their
// Boost-style serialize() so that a field added there is covered automatically. Used for the
// plan hash and for removing duplicate tasks. Doubles are written as their exact bit pattern,
// so the text does not depend on locale, precision settings or library versions.
#include <bit>
#include <charconv>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace qsweep::sweep::detail {

class CanonicalWriter {
 public:
  CanonicalWriter() { text_.reserve(512); }  // a task's text in one allocation
  template <class T>
  CanonicalWriter& operator&(const T& value) {
    write(value);
    return *this;
  }
  const std::string& text() const { return text_; }

 private:
  template <class T>
  void write(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      text_ += value ? "T;" : "F;";
    } else if constexpr (std::is_enum_v<T>) {
      write(static_cast<std::int64_t>(value));
    } else if constexpr (std::is_integral_v<T>) {
      char digits[24];
      const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
      text_.append(digits, end);
      text_ += ';';
    } else if constexpr (std::is_same_v<T, double>) {
      char hex[20] = {'x'};
      const auto end =
          std::to_chars(hex + 1, hex + sizeof hex, std::bit_cast<std::uint64_t>(value), 16).ptr;
      text_.append(hex, end);
      text_ += ';';
    } else if constexpr (std::is_same_v<T, std::string>) {
      write(value.size());
      text_ += value;
    } else if constexpr (requires {
                           value.first;
                           value.second;
                         }) {
      write(value.first);
      write(value.second);
    } else if constexpr (requires {
                           value.begin();
                           value.size();
                         }) {
      text_ += '[';
      write(value.size());
      for (const auto& item : value) write(item);
      text_ += ']';
    } else {
      // A type with a serialize(Archive&, unsigned) member (it does not modify the object).
      text_ += '{';
      const_cast<T&>(value).serialize(*this, 0u);
      text_ += '}';
    }
  }
  std::string text_;
};

template <class T>
std::string canonical_text(const T& value) {
  CanonicalWriter writer;
  writer& value;
  return writer.text();
}

}  // namespace qsweep::sweep::detail
