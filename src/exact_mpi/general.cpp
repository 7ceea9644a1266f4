// Distributed general engine (docs/exact.md, "Distributed general engine"). The top h bits of a
// union B choose its block X = B >> (N - h); B' subset of B implies block(B') subset of
// block(B), so the forward pass (pushes from B to B | t) only ever goes from a block to itself or
// to a superset block, the backward pass (reads of H(B | t)) the other way. Blocks are processed
// in layers of popcount(X): every block of a layer depends on lower layers only (forward) or on
// higher ones only (backward), so the blocks of a layer are spread over the ranks. When a layer
// is done its blocks are sent, whole, to the ranks that own a block they feed, which apply them
// (one receive buffer at a time) and drop them; the pushes inside a block are the single-rank
// engine's own kernels (qsweep/exact/general_lattice.hpp) on that block.
//
// Backward, the terms of s(B) from other blocks arrive before B is reached, so they wait in a
// third double per union, s_ext(B): 24 bytes per union in all, on 1/k of the unions.
#include "qsweep/exact_mpi/general.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/general_lattice.hpp"
#include "qsweep/exact/lattice_array.hpp"
#include "qsweep/exact/summation.hpp"

namespace qsweep::exact_mpi {
namespace {

using exact::ZeroedMemory;
using exact::detail::Cell;
using exact::detail::CompensatedSum;
using exact::detail::Lattice;
using exact::detail::Mask;
using exact::detail::Moments;

// Block length of the plain partial sums (as in the single-rank engine, src/exact/general.cpp).
constexpr std::uint64_t kBlock = 4096;

void check(int result, const char* call) {
  if (result != MPI_SUCCESS) throw Error(fmt::format("exact_mpi: {} failed", call));
}

// Types as parallel arrays (the kernels' form), with their index in the input.
struct TypeList {
  std::vector<Mask> mask;
  std::vector<double> rate;
  std::vector<std::size_t> index;
  void reserve(std::size_t count) {
    mask.reserve(count);
    rate.reserve(count);
    index.reserve(count);
  }
  void add(const Lattice& lat, std::size_t t) {
    mask.push_back(lat.mask[t]);
    rate.push_back(lat.rate[t]);
    index.push_back(t);
  }
};

class Engine {
 public:
  Engine(MPI_Comm comm, const Lattice& lat, int requested_bits, Stats& stats, const StopCheck& stop)
      : comm_(comm), lat_(lat), stats_(stats), stop_(stop) {
    check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &ranks_), "MPI_Comm_size");
    h_ = block_bits(lat.N, requested_bits);
    low_bits_ = lat.N - h_;
    cells_ = std::uint64_t{1} << low_bits_;
    blocks_ = Mask{1} << h_;
    chunk_ = std::min(kBlock, cells_);
    stats_.block_bits = h_;
    // Layers in increasing block order; the blocks of all layers dealt round the ranks in turn.
    layers_.resize(static_cast<std::size_t>(h_) + 1);
    for (Mask X = 0; X < blocks_; ++X) layers_[std::popcount(X)].push_back(X);
    owner_.resize(blocks_);
    slot_.resize(blocks_);
    int next = 0;
    for (const auto& layer : layers_) {
      for (Mask X : layer) {
        owner_[X] = next;
        if (next == rank_) {
          slot_[X] = mine_.size();
          mine_.push_back(X);
        }
        next = (next + 1) % ranks_;
      }
    }
    stats_.owned_cells = mine_.size() * cells_;
    // Types by block: high_[t] = block of the type's mask; inside_[slot] = the types whose pushes
    // from that block stay in it.
    const std::size_t T = lat.mask.size();
    std::vector<bool> highs(blocks_);
    for (std::size_t t = 0; t < T; ++t) {
      high_.push_back(lat.mask[t] >> low_bits_);
      highs[high_.back()] = true;
    }
    in_block_.resize(mine_.size());
    for (std::size_t i = 0; i < mine_.size(); ++i) {
      in_block_[i].reserve(T);  // at most T each (the memory estimate counts T)
      for (std::size_t t = 0; t < T; ++t)
        if ((high_[t] & ~mine_[i]) == 0) in_block_[i].add(lat, t);
    }
    // feeds_[X * blocks + Y]: some type takes a union of block X to block Y != X.
    feeds_.assign(std::size_t{blocks_} * blocks_, false);
    for (Mask hb = 0; hb < blocks_; ++hb)
      if (highs[hb])
        for (Mask X = 0; X < blocks_; ++X)
          if ((X | hb) != X) feeds_[std::size_t{X} * blocks_ + (X | hb)] = true;
  }

  Moments run(int qmax, bool per_type) {
    Moments out;
    memory_ = ZeroedMemory(std::max<std::uint64_t>(mine_.size() * cells_, 1) * sizeof(Cell));
    cell_ = static_cast<Cell*>(memory_.data());
    double start = MPI_Wtime();
    if (!forward(out)) return out;
    stats_.forward_seconds = MPI_Wtime() - start;
    start = MPI_Wtime();
    backward(per_type, out);
    stats_.backward_seconds = MPI_Wtime() - start;
    start = MPI_Wtime();
    distribution(qmax, out);
    stats_.distribution_seconds = MPI_Wtime() - start;
    return out;
  }

 private:
  // Before each layer or step, when no message of this run is in flight: every rank asks its
  // StopCheck and all of them stop if one says so.
  void between_layers() const {
    int stop = stop_ && stop_() ? 1 : 0;
    check(MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_LOR, comm_), "MPI_Allreduce");
    if (stop != 0) throw Stopped();
  }

  Cell* cells_of(Mask X) const { return cell_ + slot_[X] * cells_; }
  Mask base(Mask X) const { return X << low_bits_; }
  Mask low(Mask m) const { return m & static_cast<Mask>(cells_ - 1); }
  bool feeds(Mask X, Mask Y) const { return feeds_[std::size_t{X} * blocks_ + Y]; }
  bool owns(Mask X) const { return owner_[X] == rank_; }

  // Sends `data` (count doubles) of block X to every other rank in `to` (at most once each).
  double send(Mask X, const double* data, std::uint64_t count, const std::vector<bool>& to,
              std::vector<MPI_Request>& requests) const {
    double bytes = 0.0;
    for (int r = 0; r < ranks_; ++r) {
      if (r == rank_ || !to[static_cast<std::size_t>(r)]) continue;
      requests.emplace_back();
      check(MPI_Isend(data, static_cast<int>(count), MPI_DOUBLE, r, static_cast<int>(X), comm_,
                      &requests.back()),
            "MPI_Isend");
      bytes += static_cast<double>(count * sizeof(double));
    }
    return bytes;
  }
  // Receives block X (at most `count` doubles); false if it came empty (nothing to apply).
  bool receive(Mask X, std::vector<double>& buffer, std::uint64_t count) const {
    buffer.resize(count);
    MPI_Status status;
    check(MPI_Recv(buffer.data(), static_cast<int>(count), MPI_DOUBLE, owner_[X],
                   static_cast<int>(X), comm_, &status),
          "MPI_Recv");
    int received = 0;
    check(MPI_Get_count(&status, MPI_DOUBLE, &received), "MPI_Get_count");
    return received > 0;
  }
  static void wait(std::vector<MPI_Request>& requests) {
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    requests.clear();
  }
  double sum_over_ranks(double x) const {
    check(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
    return x;
  }
  // Sum of per-chunk partial sums, each filled by one rank: every rank gets them all (adding the
  // zeros of the other ranks is exact) and adds them in chunk order, compensated.
  void gather_chunks(std::vector<double>& parts) const {
    check(MPI_Allreduce(MPI_IN_PLACE, parts.data(), static_cast<int>(parts.size()), MPI_DOUBLE,
                        MPI_SUM, comm_),
          "MPI_Allreduce");
  }

  // --- forward ----------------------------------------------------------------------------------

  // Pushes of the unions of block X (cells `src`) into the blocks above it that this rank owns.
  // The unions of a block (cells with a nonzero first value) are listed once, then pushed type
  // by type: a block holds 20-40% unions on sparse graphs, and one scan per type costs more.
  template <class Value>
  void list_unions(const Value* src) {
    union_.clear();
    for (Mask b = 0; b < cells_; ++b)
      if (first_value(src[b]) != 0.0) union_.push_back(b);
  }
  static double first_value(const Cell& c) { return c.g; }
  static double first_value(double w) { return w; }

  // Pushes of the unions of block X (cells `src`) into the blocks above it that this rank owns.
  void forward_apply(Mask X, const Cell* src) {
    list_unions(src);
    for (std::size_t t = 0; t < high_.size(); ++t) {
      const Mask Y = X | high_[t];
      if (Y == X || !owns(Y)) continue;
      Cell* dst = cells_of(Y);
      const Mask m = low(lat_.mask[t]);
      for (Mask b : union_)
        exact::detail::push_union(dst, 0, b, src[b].g, src[b].g1_or_h, &m, &lat_.rate[t], 1);
    }
  }

  bool forward(Moments& out) {
    const std::uint64_t chunks = lat_.size / chunk_;
    std::vector<double> f_part(chunks), f1_part(chunks);
    std::uint64_t unions = 0;
    double violation = std::numeric_limits<double>::infinity(), slack = 0.0;
    std::vector<double> buffer;
    std::vector<MPI_Request> requests;
    for (const auto& layer : layers_) {
      between_layers();
      for (Mask X : layer) {
        if (!owns(X)) continue;
        Cell* c = cells_of(X);
        const TypeList& in = in_block_[slot_[X]];
        const Mask first = base(X);
        for (Mask b = 0; b < cells_; ++b) {
          const Mask B = first + b;
          Cell value{1.0, 0.0};  // the empty union
          if (B != 0) {
            if (c[b].g == 0.0) continue;  // not a union of types
            if (!exact::detail::forward_union(lat_, B, c[b], value, out)) {
              if (static_cast<double>(B) < violation) {  // exact: masks are below 2^53
                violation = static_cast<double>(B);
                slack = out.slack;
              }
              break;
            }
            f_part[B / chunk_] += value.g;
            f1_part[B / chunk_] += value.g1_or_h;
          }
          exact::detail::push_union(c, first, B, value.g, value.g1_or_h, in.mask.data(),
                                    in.rate.data(), in.mask.size());
          c[b] = value;
          ++unions;
        }
      }
      if (!agree_on_violation(violation, slack, out)) return false;
      // Blocks of this layer to the owners of the blocks they feed.
      double bytes = 0.0;
      for (Mask X : layer) {
        if (!owns(X)) continue;
        std::vector<bool> to(static_cast<std::size_t>(ranks_));
        for (Mask Y = 0; Y < blocks_; ++Y)
          if (feeds(X, Y)) to[static_cast<std::size_t>(owner_[Y])] = true;
        bytes += send(X, &cells_of(X)->g, 2 * cells_, to, requests);
      }
      for (Mask X : layer)
        if (owns(X)) forward_apply(X, cells_of(X));
      for (Mask X : layer) {
        if (owns(X) || !needs_forward(X)) continue;
        receive(X, buffer, 2 * cells_);
        forward_apply(X, reinterpret_cast<const Cell*>(buffer.data()));
      }
      wait(requests);
      stats_.forward_bytes.push_back(sum_over_ranks(bytes));
    }
    gather_chunks(f_part);
    gather_chunks(f1_part);
    f_.add(1.0);  // the empty union
    for (std::uint64_t i = 0; i < chunks; ++i) {
      f_.add(f_part[i]);
      f1_.add(f1_part[i]);
    }
    out.unions = static_cast<std::uint64_t>(sum_over_ranks(static_cast<double>(unions)));
    check(MPI_Allreduce(MPI_IN_PLACE, &out.condition, 1, MPI_DOUBLE, MPI_MAX, comm_),
          "MPI_Allreduce");
    return true;
  }

  bool needs_forward(Mask X) const {
    for (Mask Y = 0; Y < blocks_; ++Y)
      if (feeds(X, Y) && owns(Y)) return true;
    return false;
  }

  // Every rank learns the smallest union with d(B) <= 0 met by any rank in this layer (the
  // single-rank engine reports the smallest in mask order, which may lie in a later layer).
  bool agree_on_violation(double violation, double slack, Moments& out) const {
    struct {
      double mask, slack;
    } mine{violation, slack};
    std::vector<decltype(mine)> all(static_cast<std::size_t>(ranks_));
    check(MPI_Allgather(&mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, comm_), "MPI_Allgather");
    const auto least =
        std::min_element(all.begin(), all.end(), [](auto& a, auto& b) { return a.mask < b.mask; });
    if (std::isinf(least->mask)) return true;
    out.violating_set = exact::detail::members(static_cast<Mask>(least->mask));
    out.slack = least->slack;
    return false;
  }

  // --- backward ---------------------------------------------------------------------------------

  // Terms of s(B) and of the per-type sums for the unions B of this rank's blocks below Y whose
  // B | t lies in block Y (cells `src`, H in g1_or_h).
  void backward_apply(Mask Y, const Cell* src, bool per_type) {
    for (Mask X : mine_) {
      if (!feeds(X, Y)) continue;
      const Cell* c = cells_of(X);
      double* s = s_ext_ + slot_[X] * cells_;
      // B = 0 included: G(empty) = 1 and H(empty | t) is the empty union's term of type t.
      list_unions(c);
      for (std::size_t t = 0; t < high_.size(); ++t) {
        if ((X | high_[t]) != Y) continue;
        const Mask m = low(lat_.mask[t]);
        const double rate = lat_.rate[t];
        double type_part = 0.0;
        for (Mask b : union_) {
          const double h = src[b | m].g1_or_h;
          s[b] += rate * h;
          type_part += c[b].g * h;
        }
        if (per_type) type_sum_[t].add(type_part);
      }
    }
  }

  void backward(bool per_type, Moments& out) {
    const std::size_t T = lat_.mask.size();
    ZeroedMemory s_memory(std::max<std::uint64_t>(mine_.size() * cells_, 1) * sizeof(double));
    s_ext_ = static_cast<double*>(s_memory.data());
    type_sum_.assign(T, CompensatedSum{});
    const std::uint64_t chunks = lat_.size / chunk_;
    std::vector<double> f2_part(chunks), h_next(T), type_part(T);
    std::vector<double> buffer;
    std::vector<MPI_Request> requests;
    stats_.backward_bytes.assign(layers_.size(), 0.0);
    for (std::size_t l = layers_.size(); l-- > 0;) {
      between_layers();
      for (Mask X : layers_[l]) {
        if (!owns(X)) continue;
        Cell* c = cells_of(X);
        const double* s_ext = s_ext_ + slot_[X] * cells_;
        const TypeList& in = in_block_[slot_[X]];
        const Mask first = base(X);
        std::fill(type_part.begin(), type_part.end(), 0.0);
        for (Mask b = static_cast<Mask>(cells_); b-- > 0;) {
          const Mask B = first + b;
          const double g = c[b].g;
          if (B == 0 || g == 0.0) continue;
          double lam = 0.0, s = 0.0;
          exact::detail::backward_terms(c, first, B, in.mask.data(), in.rate.data(), in.mask.size(),
                                        h_next.data(), lam, s);
          s += s_ext[b];
          const double h =
              exact::detail::backward_union(lat_, B, lam, s, c[b].g1_or_h, f2_part[B / chunk_]);
          c[b].g1_or_h = h;
          if (per_type) {  // h_next is 0 exactly for the types inside B
            for (std::size_t i = 0; i < in.index.size(); ++i)
              type_part[in.index[i]] += g * (h_next[i] == 0.0 ? h : h_next[i]);
          }
        }
        if (per_type && X == 0) {  // the empty union: G = 1, every type starts a new union
          for (std::size_t i = 0; i < in.index.size(); ++i)
            type_part[in.index[i]] += c[in.mask[i]].g1_or_h;
        }
        if (per_type)
          for (std::size_t t = 0; t < T; ++t) type_sum_[t].add(type_part[t]);
      }
      double bytes = 0.0;
      for (Mask Y : layers_[l]) {
        if (!owns(Y)) continue;
        std::vector<bool> to(static_cast<std::size_t>(ranks_));
        for (Mask X = 0; X < blocks_; ++X)
          if (feeds(X, Y)) to[static_cast<std::size_t>(owner_[X])] = true;
        bytes += send(Y, &cells_of(Y)->g, 2 * cells_, to, requests);
      }
      for (Mask Y : layers_[l])
        if (owns(Y)) backward_apply(Y, cells_of(Y), per_type);
      for (Mask Y : layers_[l]) {
        if (owns(Y) || !needs_backward(Y)) continue;
        receive(Y, buffer, 2 * cells_);
        backward_apply(Y, reinterpret_cast<const Cell*>(buffer.data()), per_type);
      }
      wait(requests);
      stats_.backward_bytes[l] = sum_over_ranks(bytes);
    }
    s_ext_ = nullptr;
    gather_chunks(f2_part);
    CompensatedSum f2;
    for (std::uint64_t i = chunks; i-- > 0;) f2.add(f2_part[i]);
    // Per-type sums: each rank's compensated sum, added over the ranks in rank order.
    std::vector<double> type_sums;
    if (per_type) {
      std::vector<double> local(T), all(T * static_cast<std::size_t>(ranks_));
      for (std::size_t t = 0; t < T; ++t) local[t] = type_sum_[t].value();
      check(MPI_Allgather(local.data(), static_cast<int>(T), MPI_DOUBLE, all.data(),
                          static_cast<int>(T), MPI_DOUBLE, comm_),
            "MPI_Allgather");
      for (std::size_t t = 0; t < T; ++t) {
        CompensatedSum sum;
        for (int r = 0; r < ranks_; ++r) sum.add(all[static_cast<std::size_t>(r) * T + t]);
        type_sums.push_back(sum.value());
      }
    }
    exact::detail::finish_means(lat_, f_.value(), f1_.value(), f2.value(), type_sums, out);
  }

  bool needs_backward(Mask Y) const {
    for (Mask X : mine_)
      if (feeds(X, Y)) return true;
    return false;
  }

  // --- distribution -----------------------------------------------------------------------------

  // W_{k+1} pushes of block X (weights `src` times `carry`) into the blocks this rank owns.
  void distribution_apply(Mask X, const double* src, double carry) {
    list_unions(src);
    if (union_.empty()) return;
    for (std::size_t t = 0; t < high_.size(); ++t) {
      const Mask Y = X | high_[t];
      if (!owns(Y)) continue;
      double* dst = next_ + slot_[Y] * cells_;
      const Mask m = low(lat_.mask[t]);
      const double rate = lat_.rate[t];
      for (Mask b : union_) dst[b | m] += rate * (src[b] * carry);
    }
  }

  void distribution(int qmax, Moments& out) {
    out.log_weight.assign(static_cast<std::size_t>(qmax) + 1, 0.0);
    if (qmax == 0) return;
    const std::uint64_t owned = mine_.size() * cells_;
    auto* cur = reinterpret_cast<double*>(cell_);
    next_ = cur + owned;
    std::fill(cur, cur + 2 * owned, 0.0);
    if (owns(0)) cur[slot_[0] * cells_] = 1.0;
    const std::uint64_t chunks = lat_.size / chunk_;
    std::vector<double> parts(chunks), buffer;
    std::vector<MPI_Request> requests;
    double log_scale = 0.0;  // stored weights are true weights times e^-log_scale
    double carry = 1.0;      // rescales the previous step's weights to a maximum of 1
    for (int k = 1; k <= qmax; ++k) {
      between_layers();
      double bytes = 0.0;
      for (Mask X : mine_) {
        std::vector<bool> to(static_cast<std::size_t>(ranks_));
        for (Mask Y = 0; Y < blocks_; ++Y)
          if (feeds(X, Y)) to[static_cast<std::size_t>(owner_[Y])] = true;
        // A block no sequence of k - 1 jobs reaches yet goes as an empty message.
        const double* w = cur + slot_[X] * cells_;
        const bool empty = std::all_of(w, w + cells_, [](double x) { return x == 0.0; });
        bytes += send(X, w, empty ? 0 : cells_, to, requests);
      }
      for (Mask X : mine_) distribution_apply(X, cur + slot_[X] * cells_, carry);
      for (Mask X = 0; X < blocks_; ++X) {
        if (owns(X) || !needs_forward(X)) continue;
        if (receive(X, buffer, cells_)) distribution_apply(X, buffer.data(), carry);
      }
      wait(requests);
      stats_.distribution_bytes.push_back(sum_over_ranks(bytes));
      std::fill(cur, cur + owned, 0.0);
      std::fill(parts.begin(), parts.end(), 0.0);
      double largest = 0.0;
      for (Mask X : mine_) {
        double* w = next_ + slot_[X] * cells_;
        for (Mask b = 0; b < cells_; ++b) {
          if (w[b] == 0.0) continue;
          const Mask B = base(X) + b;
          w[b] /= lat_.mu(B);
          parts[B / chunk_] += w[b];
          largest = std::max(largest, w[b]);
        }
      }
      gather_chunks(parts);
      check(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
      CompensatedSum sum;
      for (double part : parts) sum.add(part);
      out.log_weight[static_cast<std::size_t>(k)] = log_scale + std::log(sum.value());
      carry = 1.0 / largest;
      log_scale += std::log(largest);
      std::swap(cur, next_);
    }
  }

  MPI_Comm comm_;
  const Lattice& lat_;
  Stats& stats_;
  const StopCheck& stop_;
  int rank_ = 0, ranks_ = 1, h_ = 0, low_bits_ = 0;
  std::uint64_t cells_ = 1, chunk_ = 1;  // unions per block, per plain partial sum
  Mask blocks_ = 1;
  std::vector<std::vector<Mask>> layers_;
  std::vector<int> owner_;
  std::vector<std::size_t> slot_;
  std::vector<Mask> mine_;
  std::vector<Mask> high_;
  std::vector<TypeList> in_block_;
  std::vector<bool> feeds_;
  std::vector<Mask> union_;  // list_unions
  ZeroedMemory memory_;
  Cell* cell_ = nullptr;
  double* s_ext_ = nullptr;
  double* next_ = nullptr;
  CompensatedSum f_, f1_;
  std::vector<CompensatedSum> type_sum_;
};

}  // namespace

exact::detail::Moments general_engine(MPI_Comm comm, const std::vector<model::JobType>& types,
                                      const std::vector<double>& speeds, double total_rate,
                                      int qmax, bool per_type, Stats* stats, int block_bits,
                                      const StopCheck& stop) {
  if (speeds.empty() || speeds.size() > static_cast<std::size_t>(kMaxServers))
    throw InputError(
        fmt::format("exact_mpi: N = {} servers for the distributed general engine; "
                    "expected 1 <= N <= {}",
                    speeds.size(), kMaxServers));
  const Lattice lat(types, speeds, total_rate);
  Stats local;
  Engine engine(comm, lat, block_bits, stats != nullptr ? *stats : local, stop);
  return engine.run(qmax, per_type);
}

exact::Validation validate(const model::System& system, const exact::Options& options) {
  return exact::detail::validate_with(system, options, kMaxServers);
}

exact::Result evaluate(MPI_Comm comm, const model::System& system, const exact::Options& options,
                       Stats* stats) {
  return exact::detail::evaluate_with(
      system, options,
      [&](const std::vector<model::JobType>& types, const std::vector<double>& speeds,
          double total_rate, int qmax, bool per_type) {
        return general_engine(comm, types, speeds, total_rate, qmax, per_type, stats);
      },
      kMaxServers);
}

}  // namespace qsweep::exact_mpi
