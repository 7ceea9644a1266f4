#pragma once
// MPI for the run layer, over the MPI C API only (so that one source builds against Open MPI and
// the MPICH family): the session (MPI_Init/MPI_Finalize), a communicator and a pending send, each
// the RAII owner of its handle. Messages carry values serialised with a Boost binary archive and
// travel as MPI_BYTE (the ranks of a job run the same binary on the same architecture).
#include <mpi.h>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "qsweep/common/error.hpp"

namespace qsweep::run {

// A failed MPI call; the message names the call.
class MpiError : public Error {
 public:
  using Error::Error;
};

// Throws MpiError "CALL failed: MPI's text" unless `result` is MPI_SUCCESS.
void check_mpi(int result, const char* call);

class MpiSession {
 public:
  // MPI_Init_thread with MPI_THREAD_FUNNELED (only the main thread calls MPI; compute threads do
  // not), and MPI_ERRORS_RETURN on MPI_COMM_WORLD so that MPI errors become exceptions.
  MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  // Finalizes, or, while an exception is propagating, ends the job with MPI_Abort (finalizing
  // would wait for ranks that will never arrive). Never throws.
  ~MpiSession();

  int rank() const { return rank_; }
  int size() const { return size_; }
  void finalize();

  // Prints "qsweep: rank R: error: MESSAGE" on stderr and ends every rank of the job.
  [[noreturn]] static void abort(const std::string& message, int exit_code);

 private:
  int rank_ = 0;
  int size_ = 1;
  bool finalized_ = false;
};

// --- serialised values --------------------------------------------------------------------------

template <class T>
std::string to_bytes(const T& value) {
  std::ostringstream out;
  {
    boost::archive::binary_oarchive archive(out, boost::archive::no_header);
    archive << value;
  }
  return std::move(out).str();
}

template <class T>
T from_bytes(std::string bytes) {
  std::istringstream in(std::move(bytes));
  boost::archive::binary_iarchive archive(in, boost::archive::no_header);
  T value{};
  archive >> value;
  return value;
}

// A non-blocking send of serialised bytes, which it owns until the send completes.
class SendRequest {
 public:
  SendRequest(std::unique_ptr<const std::string> bytes, MPI_Request request)
      : bytes_(std::move(bytes)), request_(request) {}
  SendRequest(SendRequest&& other) noexcept;
  SendRequest& operator=(SendRequest&&) = delete;
  SendRequest(const SendRequest&) = delete;
  // A send still pending (only on an error path, which ends the job) is freed, not waited for;
  // its bytes are left allocated, as MPI may still read them. Never throws.
  ~SendRequest();

  bool test();  // true once the send is complete
  void wait();

 private:
  std::unique_ptr<const std::string> bytes_;  // on the heap: its address survives a move
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// A message waiting to be received (from iprobe).
struct Envelope {
  int source = 0;
  int tag = 0;
  int bytes = 0;
};

// A communicator: MPI_COMM_WORLD (not owned) or a duplicate, owned and freed with it.
class Comm {
 public:
  static Comm world() { return Comm(MPI_COMM_WORLD, false); }
  Comm(Comm&& other) noexcept : handle_(other.handle_), owned_(other.owned_) {
    other.owned_ = false;
  }
  Comm& operator=(Comm&&) = delete;
  Comm(const Comm&) = delete;
  ~Comm();  // MPI_Comm_free if owned; never throws

  // A communicator of its own, with MPI_ERRORS_RETURN: its messages never meet anyone else's.
  Comm duplicate() const;
  // Collective: the ranks of this communicator that share memory with this one, i.e. run on the
  // same node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED), ordered as here; MPI_ERRORS_RETURN.
  Comm split_shared() const;
  // Collective over `ranks` only (ranks of this communicator, the new one's in this order; each
  // of them calls it with the same list and tag): their own communicator (MPI_Comm_create_group),
  // with MPI_ERRORS_RETURN. Other ranks go on meanwhile.
  Comm create_group(const std::vector<int>& ranks, int tag) const;

  MPI_Comm handle() const { return handle_; }
  int rank() const;
  int size() const;
  void barrier() const;
  // Collective: whether `value` is true on any rank.
  bool any(bool value) const;
  // Collective: `data` holds this rank's part (bytes[rank()] bytes after the parts of the ranks
  // before it) and then every rank's (sweep::PlanTeam::gather_parts; MPI_Allgatherv in place).
  void gather_parts(char* data, const std::vector<std::uint64_t>& bytes) const;

  // Collective: `value` of `root` on every rank.
  template <class T>
  void broadcast(T& value, int root) const {
    std::string bytes;
    if (rank() == root) bytes = to_bytes(value);
    broadcast_bytes(bytes, root);
    if (rank() != root) value = from_bytes<T>(std::move(bytes));
  }

  // Collective: every rank's `value`, in rank order, on `root` (empty on the other ranks).
  template <class T>
  std::vector<T> gather(const T& value, int root) const {
    std::vector<T> values;
    for (std::string& bytes : gather_bytes(to_bytes(value), root))
      values.push_back(from_bytes<T>(std::move(bytes)));
    return values;
  }

  template <class T>
  SendRequest isend(int dest, int tag, const T& value) const {
    return isend_bytes(dest, tag, std::make_unique<const std::string>(to_bytes(value)));
  }

  // The next message from `source` with `tag` (or any), if one has arrived.
  std::optional<Envelope> iprobe(int source = MPI_ANY_SOURCE, int tag = MPI_ANY_TAG) const;

  // Receives the message that iprobe returned.
  template <class T>
  T recv(const Envelope& envelope) const {
    return from_bytes<T>(recv_bytes(envelope));
  }

 private:
  Comm(MPI_Comm handle, bool owned) : handle_(handle), owned_(owned) {}
  void broadcast_bytes(std::string& bytes, int root) const;
  std::vector<std::string> gather_bytes(const std::string& bytes, int root) const;
  SendRequest isend_bytes(int dest, int tag, std::unique_ptr<const std::string> bytes) const;
  std::string recv_bytes(const Envelope& envelope) const;

  MPI_Comm handle_;
  bool owned_;
};

}  // namespace qsweep::run
