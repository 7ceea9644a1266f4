#pragma once
#include <stdexcept>
#include <string>

namespace qsweep {

// Base of every error qsweep reports to a user: the message is one line and names the place.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Invalid input (parameters, sweep files, options): the CLI exits with the bad-input code.
class InputError : public Error {
 public:
  using Error::Error;
};

}  // namespace qsweep
