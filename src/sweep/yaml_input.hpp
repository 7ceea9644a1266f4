#pragma once
// Private to the sweep layer: locating YAML nodes for error messages and reading typed scalars.
// A sweep file reports "FILE:LINE:COLUMN"; a `qsweep eval` flag reports "--flag".
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "qsweep/common/printable.hpp"

namespace qsweep::sweep::detail {

class Locator {
 public:
  // Names are shown printable(): a path or flag with a control byte must not act on the terminal.
  static Locator in_file(const std::string& file) { return Locator(printable(file), false); }
  static Locator in_flag(const std::string& flag) { return Locator("--" + printable(flag), true); }

  // "FILE:LINE:COLUMN" (1-based) of `node`, or "--flag" for every node of a flag's value.
  std::string at(const YAML::Node& node) const;
  std::string at(const YAML::Mark& mark) const;

 private:
  Locator(std::string name, bool is_flag) : name_(std::move(name)), is_flag_(is_flag) {}
  std::string name_;
  bool is_flag_;
};

// Throws InputError("WHERE: WHAT").
[[noreturn]] void fail(const std::string& where, const std::string& what);

// How a node looks to a user ("a list", "a mapping", "'abc'", "nothing"); control bytes of a
// scalar shown as \xNN.
std::string show(const YAML::Node& node);

// Readers for scalar nodes; `what` names the value in messages ("lambda", "linspace count").
// Each throws a located InputError ending in "; expected <expected>".
double read_number(const YAML::Node& node, const Locator& loc, std::string_view what,
                   std::string_view expected);
std::int64_t read_integer(const YAML::Node& node, const Locator& loc, std::string_view what,
                          std::string_view expected);
std::uint64_t read_unsigned(const YAML::Node& node, const Locator& loc, std::string_view what,
                            std::string_view expected);
bool read_bool(const YAML::Node& node, const Locator& loc, std::string_view what);
std::string read_string(const YAML::Node& node, const Locator& loc, std::string_view what,
                        std::string_view expected);

}  // namespace qsweep::sweep::detail
