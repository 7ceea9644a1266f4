// Must not compile: the store knows tables and rows, not tasks; it sees only its own headers and
// common's (ctest layering.store_knows_no_sweep expects the compiler to report this include
// missing).
#include "qsweep/sweep/task.hpp"
