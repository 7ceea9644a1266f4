#pragma once
#include <Random123/philox.h>

#include <cmath>
#include <cstdint>

namespace qsweep {

// Counter-based random stream (Philox4x64-10), keyed by two words with the replication in the
// counter. A sweep's task passes its key (sweep::stream_key: a hash of its method, parameters and
// seed), so every task and replication has its own reproducible stream, independent of which
// rank runs it, in which order, and of the other tasks of the plan. The kernels' parameters call
// the words (seed, task_id), after their use on their own (tests). A substream (counter word 2)
// is a further independent stream of the same key and replication; substream 0 is the stream as
// it was before substreams existed (common random numbers, docs/sim.md).
class Rng {
 public:
  Rng(std::uint64_t key0, std::uint64_t key1, std::uint64_t replication = 0,
      std::uint64_t substream = 0)
      : key_{{key0, key1}}, ctr_{{replication, 0, substream, 0}} {}

  std::uint64_t next_u64() {
    if (pos_ == 4) refill();
    return buf_.v[pos_++];
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1]: safe for log().
  double uniform_pos() { return static_cast<double>((next_u64() >> 11) + 1) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift with rejection: unbiased).
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next_u64()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }
  double exponential(double rate) { return -std::log(uniform_pos()) / rate; }
  // Jumps to the start of sequence `sequence` (counter word 3) of this substream, another
  // independent stream: with common random numbers the policy's draws for the i-th arrival
  // start at the same place in every task, however many draws earlier arrivals took.
  void restart(std::uint64_t sequence) {
    ctr_.v[1] = 0;
    ctr_.v[3] = sequence;
    pos_ = 4;
  }

 private:
  using Philox = r123::Philox4x64;
  void refill() {
    buf_ = Philox()(ctr_, key_);
    ++ctr_.v[1];
    pos_ = 0;
  }
  Philox::key_type key_;
  Philox::ctr_type ctr_;
  Philox::ctr_type buf_{};
  int pos_ = 4;
};

}  // namespace qsweep
