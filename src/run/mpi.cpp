#include "qsweep/run/mpi.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>

namespace qsweep::run {

void check_mpi(int result, const char* call) {
  if (result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(result, text, &length);
  throw MpiError(std::string(call) +
                 " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

// --- MpiSession ---------------------------------------------------------------------------------

namespace {

int g_abort_code = 1;

// MPI_Abort of every rank with `code`. MPICH's MPI_Abort ends this process with exit(), which would
// run HDF5's atexit clean-up over files MPI can no longer serve (a crash, exit 139): a handler
// registered now runs first and leaves at once.
[[noreturn]] void abort_job(int code) {
  g_abort_code = code;
  std::atexit([] { std::_Exit(g_abort_code); });
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace

MpiSession::MpiSession() {
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("MPI_Init_thread failed");
  }
  try {
    check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler(MPI_COMM_WORLD)");
    if (provided < MPI_THREAD_FUNNELED) {
      throw Error(
          "the MPI library does not support MPI_THREAD_FUNNELED (a compute thread per rank)");
    }
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank(MPI_COMM_WORLD)");
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size(MPI_COMM_WORLD)");
  } catch (const std::exception& e) {
    abort(e.what(), 1);
  }
}

MpiSession::~MpiSession() {
  if (finalized_) return;
  if (std::uncaught_exceptions() > 0) {
    std::fprintf(stderr, "qsweep: rank %d: error: ending the job after an error\n", rank_);
    abort_job(1);
  }
  MPI_Finalize();
}

void MpiSession::finalize() {
  if (finalized_) return;
  finalized_ = true;
  check_mpi(MPI_Finalize(), "MPI_Finalize");
}

void MpiSession::abort(const std::string& message, int exit_code) {
  int rank = 0;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // One line, as every message is (MPICH's error strings span several).
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::fprintf(stderr, "qsweep: rank %d: error: %s\n", rank, line.c_str());
  std::fflush(stderr);
  if (initialized) abort_job(exit_code);
  std::_Exit(exit_code);
}

// --- SendRequest --------------------------------------------------------------------------------

SendRequest::SendRequest(SendRequest&& other) noexcept
    : bytes_(std::move(other.bytes_)), request_(other.request_) {
  other.request_ = MPI_REQUEST_NULL;
}

SendRequest::~SendRequest() {
  if (request_ == MPI_REQUEST_NULL) return;
  int done = 0;
  if (MPI_Test(&request_, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) return;
  MPI_Request_free(&request_);
  static_cast<void>(bytes_.release());  // MPI may still read them
}

bool SendRequest::test() {
  if (request_ == MPI_REQUEST_NULL) return true;
  int done = 0;
  check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

void SendRequest::wait() {
  if (request_ == MPI_REQUEST_NULL) return;
  check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
}

// --- Comm ---------------------------------------------------------------------------------------

namespace {

int byte_count(std::size_t size, const char* what) {
  if (size > static_cast<std::size_t>(INT_MAX)) {
    throw MpiError(std::string(what) + ": a message of " + std::to_string(size) +
                   " bytes is larger than MPI's int count");
  }
  return static_cast<int>(size);
}

}  // namespace

Comm::~Comm() {
  if (owned_) MPI_Comm_free(&handle_);
}

Comm Comm::duplicate() const {
  MPI_Comm copy = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(handle_, &copy), "MPI_Comm_dup");
  Comm owned(copy, true);
  check_mpi(MPI_Comm_set_errhandler(copy, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return owned;
}

Comm Comm::split_shared() const {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(handle_, MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  Comm owned(node, true);
  check_mpi(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return owned;
}

Comm Comm::create_group(const std::vector<int>& ranks, int tag) const {
  MPI_Group all = MPI_GROUP_NULL, some = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(handle_, &all), "MPI_Comm_group");
  const int included = MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &some);
  MPI_Group_free(&all);
  check_mpi(included, "MPI_Group_incl");
  MPI_Comm group = MPI_COMM_NULL;
  const int created = MPI_Comm_create_group(handle_, some, tag, &group);
  MPI_Group_free(&some);
  check_mpi(created, "MPI_Comm_create_group");
  Comm owned(group, true);
  check_mpi(MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return owned;
}

bool Comm::any(bool value) const {
  int flag = value ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LOR, handle_), "MPI_Allreduce");
  return flag != 0;
}

void Comm::gather_parts(char* data, const std::vector<std::uint64_t>& bytes) const {
  std::vector<int> counts;
  std::vector<int> starts;
  std::uint64_t start = 0;
  for (const std::uint64_t part : bytes) {
    if (start + part > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      throw Error("MPI_Allgatherv: parts of " + std::to_string(start + part) +
                  " bytes in all, more than an int counts");
    counts.push_back(static_cast<int>(part));
    starts.push_back(static_cast<int>(start));
    start += part;
  }
  check_mpi(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), starts.data(),
                           MPI_BYTE, handle_),
            "MPI_Allgatherv");
}

int Comm::rank() const {
  int rank = 0;
  check_mpi(MPI_Comm_rank(handle_, &rank), "MPI_Comm_rank");
  return rank;
}

int Comm::size() const {
  int size = 0;
  check_mpi(MPI_Comm_size(handle_, &size), "MPI_Comm_size");
  return size;
}

void Comm::barrier() const { check_mpi(MPI_Barrier(handle_), "MPI_Barrier"); }

void Comm::broadcast_bytes(std::string& bytes, int root) const {
  unsigned long long size = bytes.size();
  check_mpi(MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, root, handle_), "MPI_Bcast");
  bytes.resize(size);
  check_mpi(MPI_Bcast(bytes.data(), byte_count(bytes.size(), "MPI_Bcast"), MPI_BYTE, root, handle_),
            "MPI_Bcast");
}

std::vector<std::string> Comm::gather_bytes(const std::string& bytes, int root) const {
  const bool at_root = rank() == root;
  int length = byte_count(bytes.size(), "MPI_Gather");
  std::vector<int> lengths(at_root ? static_cast<std::size_t>(size()) : 0);
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, handle_),
            "MPI_Gather");
  std::vector<int> offsets(lengths.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = byte_count(total, "MPI_Gatherv");
    total += static_cast<std::size_t>(lengths[i]);
  }
  byte_count(total, "MPI_Gatherv");
  std::string all(total, '\0');
  check_mpi(MPI_Gatherv(bytes.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(),
                        MPI_BYTE, root, handle_),
            "MPI_Gatherv");
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < lengths.size(); ++i)
    parts.push_back(
        all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  return parts;
}

SendRequest Comm::isend_bytes(int dest, int tag, std::unique_ptr<const std::string> bytes) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(bytes->data(), byte_count(bytes->size(), "MPI_Isend"), MPI_BYTE, dest, tag,
                      handle_, &request),
            "MPI_Isend");
  return SendRequest(std::move(bytes), request);
}

std::optional<Envelope> Comm::iprobe(int source, int tag) const {
  int arrived = 0;
  MPI_Status status;
  check_mpi(MPI_Iprobe(source, tag, handle_, &arrived, &status), "MPI_Iprobe");
  if (!arrived) return std::nullopt;
  Envelope envelope{status.MPI_SOURCE, status.MPI_TAG, 0};
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &envelope.bytes), "MPI_Get_count");
  return envelope;
}

std::string Comm::recv_bytes(const Envelope& envelope) const {
  std::string bytes(static_cast<std::size_t>(envelope.bytes), '\0');
  check_mpi(MPI_Recv(bytes.data(), envelope.bytes, MPI_BYTE, envelope.source, envelope.tag, handle_,
                     MPI_STATUS_IGNORE),
            "MPI_Recv");
  return bytes;
}

}  // namespace qsweep::run
