#pragma once
// Private to the sweep layer: a canonical text form of value types, written through their
// Boost-style serialize() so that a field added there is covered automatically. Used for the
// plan hash and for removing duplicate tasks. Doubles are written as their exact bit pattern,
// so the text does not depend on locale, precision settings or library versions.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace qsweep::sweep::detail {

// Every value a serialize() writes, as its exact bits after a tag for its type (and a count
// before a list or a string): objects with equal images have equal canonical texts, and this
// image is cheaper to make than the text (no digits). 0.0 and -0.0, or two NaNs, differ here
// exactly when they differ in the text; `==` would not tell.
class BitsWriter {
 public:
  // Writes over `room` from its start; the image is its first size() bytes (the rest is room
  // kept for the next image: no zeroing per image).
  explicit BitsWriter(std::string& room) : bits_(room) {}
  template <class T>
  BitsWriter& operator&(const T& value) {
    write(value);
    return *this;
  }
  std::string_view image() const { return {bits_.data(), size_}; }

 private:
  // Written through a pointer into room at the end, as CanonicalWriter does.
  char* room(std::size_t bytes) {
    if (size_ + bytes > bits_.size()) bits_.resize(std::max(size_ + bytes + 256, 2 * size_));
    return bits_.data() + size_;
  }
  void put(char tag) {
    *room(1) = tag;
    ++size_;
  }
  template <class T>
  void put(char tag, const T& value) {
    char* p = room(1 + sizeof value);
    *p = tag;
    std::memcpy(p + 1, &value, sizeof value);
    size_ += 1 + sizeof value;
  }
  template <class T>
  void write(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      put(value ? 'T' : 'F');
    } else if constexpr (std::is_enum_v<T>) {
      write(static_cast<std::int64_t>(value));
    } else if constexpr (std::is_integral_v<T>) {
      put(static_cast<char>((std::is_signed_v<T> ? 'a' : 'A') + sizeof(T)), value);
    } else if constexpr (std::is_same_v<T, double>) {
      put('x', std::bit_cast<std::uint64_t>(value));
    } else if constexpr (std::is_same_v<T, std::string>) {
      put('s', value.size());
      std::copy(value.begin(), value.end(), room(value.size()));
      size_ += value.size();
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
      put('[', value.size());
      for (const auto& item : value) write(item);
    } else {
      put('{');
      const_cast<T&>(value).serialize(*this, 0u);
      put('}');
    }
  }
  std::string& bits_;
  std::size_t size_ = 0;  // of the image written so far
};

// The canonical texts of the parts (the structures among its fields) of the last object written,
// with their images: expansion writes 10^6 tasks whose parts (a method's options, the family)
// mostly repeat from one task to the next, and a part whose image is unchanged is copied.
struct TextMemo {
  struct Part {
    std::string bits, text;
  };
  std::vector<Part> parts;  // by position among the object's parts
  std::string room;         // for the image being made
};

class CanonicalWriter {
 public:
  // Appends to `text`; `memo` (kept from one object to the next) copies the unchanged parts.
  explicit CanonicalWriter(std::string& text, TextMemo* memo = nullptr)
      : text_(text), size_(text.size()), memo_(memo) {}
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
    } else if (memo_ && depth_ == 1) {
      write_part(value);
    } else {
      // A type with a serialize(Archive&, unsigned) member (it does not modify the object).
      put('{');
      ++depth_;
      const_cast<T&>(value).serialize(*this, 0u);
      --depth_;
      put('}');
    }
  }
  // A part of the object: its text copied from the memo if its image is unchanged.
  template <class T>
  void write_part(const T& value) {
    if (parts_ == memo_->parts.size()) memo_->parts.emplace_back();
    TextMemo::Part& part = memo_->parts[parts_++];
    const std::string_view image = (BitsWriter(memo_->room) & value).image();
    if (part.bits == image) {  // (a part of another type at this position differs)
      put(std::copy(part.text.begin(), part.text.end(), room(part.text.size())));
      return;
    }
    const std::size_t start = size_;
    put('{');
    ++depth_;
    const_cast<T&>(value).serialize(*this, 0u);
    --depth_;
    put('}');
    part.bits = image;
    part.text.assign(text_.data() + start, size_ - start);
  }
  std::string& text_;
  std::size_t size_;  // of the text written so far (text_ may hold more room)
  TextMemo* memo_;
  int depth_ = 0;          // of the structure being written: 1 in the object's own fields
  std::size_t parts_ = 0;  // of the object written so far
};

// Appends the canonical text of `value` to `text` (expansion reuses one buffer for every task,
// and one memo).
template <class T>
void append_canonical_text(std::string& text, const T& value, TextMemo* memo = nullptr) {
  CanonicalWriter writer(text, memo);
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
