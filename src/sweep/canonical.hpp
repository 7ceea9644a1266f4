#pragma once
// Private to the sweep layer: a canonical text form of value types, written through their
// Boost-style serialize() so that a field added there is covered automatically. Used for the
// plan hash and for removing duplicate tasks. Doubles are written as their exact bit pattern,
// so the text does not depend on locale, precision settings or library versions.
#include <algorithm>
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
  explicit CanonicalWriter(std::string& text) : text_(text), size_(text.size()) {}  // appends
  ~CanonicalWriter() { text_.resize(size_); }
  CanonicalWriter(const CanonicalWriter&) = delete;
  CanonicalWriter& operator=(const CanonicalWriter&) = delete;
  template <class T>
  CanonicalWriter& operator&(const T& value) {
    write(value);
    return *this;
  }

 private:
  // The fields are written through a pointer into room made at the end of the text, which
  // grows now and then: 10^6 tasks' texts are written at expansion.
  char* room(std::size_t bytes) {
    if (size_ + bytes > text_.size()) text_.resize(std::max(size_ + bytes + 256, 2 * size_));
    return text_.data() + size_;
  }
  void put(char c) {
    *room(1) = c;
    ++size_;
  }
  void put(const char* end) { size_ = static_cast<std::size_t>(end - text_.data()); }

  template <class T>
  void write(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      char* p = room(2);
      *p++ = value ? 'T' : 'F';
      *p++ = ';';
      put(p);
    } else if constexpr (std::is_enum_v<T>) {
      write(static_cast<std::int64_t>(value));
    } else if constexpr (std::is_integral_v<T>) {
      char* p = room(24);
      p = std::to_chars(p, p + 23, value).ptr;
      *p++ = ';';
      put(p);
    } else if constexpr (std::is_same_v<T, double>) {
      char* p = room(20);
      *p++ = 'x';
      p = std::to_chars(p, p + 18, std::bit_cast<std::uint64_t>(value), 16).ptr;
      *p++ = ';';
      put(p);
    } else if constexpr (std::is_same_v<T, std::string>) {
      write(value.size());
      put(std::copy(value.begin(), value.end(), room(value.size())));
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
      put('[');
      write(value.size());
      for (const auto& item : value) write(item);
      put(']');
    } else {
      // A type with a serialize(Archive&, unsigned) member (it does not modify the object).
      put('{');
      const_cast<T&>(value).serialize(*this, 0u);
      put('}');
    }
  }
  std::string& text_;
  std::size_t size_;  // of the text written so far (text_ may hold more room)
};

// Appends the canonical text of `value` to `text` (expansion reuses one buffer for every task).
template <class T>
void append_canonical_text(std::string& text, const T& value) {
  CanonicalWriter writer(text);
  writer& value;
}

template <class T>
std::string canonical_text(const T& value) {
  std::string text;
  text.reserve(512);  // a task's text in one allocation
  append_canonical_text(text, value);
  return text;
}

}  // namespace qsweep::sweep::detail
