// The MPI wrapper on one rank (the test program is an MPI singleton): serialised values through
// a message to itself and a broadcast, and MPI errors as exceptions that name the call.
#include <gtest/gtest.h>

#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <vector>

#include "../store/mpi_test_environment.hpp"
#include "qsweep/run/mpi.hpp"

namespace qsweep::run {
namespace {

using Payload = std::pair<std::vector<std::uint64_t>, std::string>;

TEST(Comm, AMessageToItselfArrivesWhole) {
  const Comm comm = Comm::world().duplicate();
  ASSERT_EQ(comm.size(), 1);
  const Payload sent{{1, 2, 1ull << 40}, std::string("text with a \0 inside", 20)};
  EXPECT_FALSE(comm.iprobe().has_value());
  SendRequest request = comm.isend(0, 7, sent);
  std::optional<Envelope> envelope;
  while (!(envelope = comm.iprobe())) {
  }
  EXPECT_EQ(envelope->source, 0);
  EXPECT_EQ(envelope->tag, 7);
  EXPECT_EQ(static_cast<std::size_t>(envelope->bytes), to_bytes(sent).size());
  EXPECT_EQ(comm.recv<Payload>(*envelope), sent);
  request.wait();
  EXPECT_TRUE(request.test());
  EXPECT_FALSE(comm.iprobe().has_value());
}

TEST(Comm, BroadcastKeepsTheRootsValue) {
  const Comm comm = Comm::world().duplicate();
  std::string text = "rank 0's value";
  comm.broadcast(text, 0);
  EXPECT_EQ(text, "rank 0's value");
  bool flag = true;
  comm.broadcast(flag, 0);
  EXPECT_TRUE(flag);
}

TEST(Comm, AnMpiErrorIsAnExceptionNamingTheCall) {
  const Comm comm = Comm::world().duplicate();
  try {
    comm.isend(3, 1, 0);  // no rank 3 in a singleton
    FAIL() << "MPI_Isend to a rank that does not exist succeeded";
  } catch (const MpiError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("MPI_Isend failed: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace qsweep::run
