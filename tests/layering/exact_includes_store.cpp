// Must not compile: the exact layer sees only its own headers and those of the layers below it
// (ctest layering.enforced expects the compiler to report this include missing).
#include "qsweep/store/results_file.hpp"
