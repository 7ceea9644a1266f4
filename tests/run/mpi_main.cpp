#include "../store/mpi_test_environment.hpp"

// Registered before main() runs the tests; GoogleTest owns and deletes it.
static ::testing::Environment* const mpi_environment =
    ::testing::AddGlobalTestEnvironment(new qsweep::testing::MpiEnvironment);
