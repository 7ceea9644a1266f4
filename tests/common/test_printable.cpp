// Control bytes of input text are shown, not sent to the terminal.
#include <gtest/gtest.h>

#include <string>

#include "qsweep/common/printable.hpp"

namespace qsweep {
namespace {

TEST(Printable, ControlBytesAreShownAsHexEscapes) {
  using namespace std::string_literals;
  EXPECT_EQ(printable("ring"), "ring");
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable("x\nvalid, 1 tasks"), "x\\x0avalid, 1 tasks");
  EXPECT_EQ(printable("cut\0here"s), "cut\\x00here");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("\t"), "\\x09");
}

TEST(Printable, Utf8IsKeptAsItIs) { EXPECT_EQ(printable("λ = 0.5 – µ"), "λ = 0.5 – µ"); }

}  // namespace
}  // namespace qsweep
