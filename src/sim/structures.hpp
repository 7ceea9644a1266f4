#pragma once
// Small data structures of the simulation kernels (internal to src/sim).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace qsweep::sim {

inline std::size_t idx(int i) { return static_cast<std::size_t>(i); }

// The busy servers, for drawing one with probability proportional to its speed (the next
// completion in a race of exponential clocks). Identical speeds: an unordered array, O(1).
// Otherwise a sum tree whose inner nodes are recomputed from the leaves (no drift), O(log N).
class BusySet {
 public:
  explicit BusySet(const std::vector<double>& speeds)
      : identical_(std::all_of(speeds.begin(), speeds.end(),
                               [&](double s) { return s == speeds.front(); })),
        speed_(speeds.front()),
        inverse_speed_(1.0 / speed_),
        list_(identical_ ? speeds.size() : 0),
        position_(speeds.size(), -1),
        speeds_(speeds) {
    if (!identical_) {
      while (leaves_ < speeds.size()) leaves_ *= 2;
      tree_.assign(2 * leaves_, 0.0);
    }
  }
  void add(int n) {
    if (identical_) {
      position_[idx(n)] = static_cast<int>(count_);
      list_[count_++] = n;
      rate_ = speed_ * static_cast<double>(count_);
      return;
    }
    std::size_t i = leaves_ + idx(n);
    tree_[i] = speeds_[idx(n)];
    for (i /= 2; i >= 1; i /= 2) tree_[i] = tree_[2 * i] + tree_[2 * i + 1];
    rate_ = tree_[1];
  }
  void remove(int n) {
    if (identical_) {
      const int last = list_[--count_];
      const int pos = position_[idx(n)];
      list_[idx(pos)] = last;
      position_[idx(last)] = pos;
      position_[idx(n)] = -1;
      rate_ = speed_ * static_cast<double>(count_);
      return;
    }
    std::size_t i = leaves_ + idx(n);
    tree_[i] = 0.0;
    for (i /= 2; i >= 1; i /= 2) tree_[i] = tree_[2 * i] + tree_[2 * i + 1];
    rate_ = tree_[1];
  }
  // Total speed of the busy servers.
  double rate() const { return rate_; }
  // Busy servers, when all speeds are identical.
  std::size_t count() const { return count_; }
  // The busy server at position u of [0, rate()) when servers are laid end to end by speed.
  int pick(double u) const {
    if (identical_) {
      const auto i = static_cast<std::size_t>(u * inverse_speed_);
      return list_[std::min(i, count_ - 1)];
    }
    std::size_t i = 1;
    while (i < leaves_) {
      // Rounding can leave u at or beyond a subtree's total: never step into an empty subtree.
      if (u < tree_[2 * i] || tree_[2 * i + 1] == 0.0) {
        i = 2 * i;
      } else {
        u -= tree_[2 * i];
        i = 2 * i + 1;
      }
    }
    return static_cast<int>(i - leaves_);
  }

 private:
  bool identical_;
  double speed_, inverse_speed_;
  double rate_ = 0.0;                 // rate(), kept current by add() and remove()
  std::vector<int> list_, position_;  // identical speeds: list_[0..count_) are busy
  std::size_t count_ = 0;
  std::vector<double> speeds_, tree_;  // heterogeneous: leaves at tree_[leaves_ + n]
  std::size_t leaves_ = 1;
};

// Binary min-heap of servers keyed by a time (their next completion), with positions so that a
// server's key can be changed or removed in O(log N).
class IndexedMinHeap {
 public:
  explicit IndexedMinHeap(int N) : position_(static_cast<std::size_t>(N), -1) {}
  bool empty() const { return heap_.empty(); }
  int top() const { return heap_.front().server; }
  double top_key() const { return heap_.front().key; }
  // Inserts n or changes its key.
  void set(int n, double key) {
    const int pos = position_[idx(n)];
    if (pos < 0) {
      heap_.push_back({key, n});
      place(heap_.size() - 1, heap_.back());
      sift_up(heap_.size() - 1);
    } else if (key < heap_[idx(pos)].key) {
      heap_[idx(pos)].key = key;
      sift_up(idx(pos));
    } else {
      heap_[idx(pos)].key = key;
      sift_down(idx(pos));
    }
  }
  void remove(int n) {
    const auto pos = idx(position_[idx(n)]);
    position_[idx(n)] = -1;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (pos == heap_.size()) return;
    place(pos, last);
    sift_up(pos);
    sift_down(idx(position_[idx(last.server)]));
  }

 private:
  struct Entry {
    double key;
    int server;
  };
  void place(std::size_t i, Entry e) {
    heap_[i] = e;
    position_[static_cast<std::size_t>(e.server)] = static_cast<int>(i);
  }
  void sift_up(std::size_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!(e.key < heap_[parent].key)) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }
  void sift_down(std::size_t i) {
    const Entry e = heap_[i];
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1].key < heap_[child].key) ++child;
      if (!(heap_[child].key < e.key)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, e);
  }
  std::vector<Entry> heap_;
  std::vector<int> position_;
};

// A FIFO queue in a growing ring buffer (capacity a power of two; never shrinks, so memory is
// bounded by the longest queue seen, not by simulated time). Small (24 bytes), so that an array
// of them, one per server, stays in cache.
template <class T>
class RingQueue {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& front() { return buffer_[head_]; }
  const T& front() const { return buffer_[head_]; }
  void push(const T& value) {
    if (size_ == capacity_) grow();
    buffer_[(head_ + size_) & (capacity_ - 1)] = value;
    ++size_;
  }
  void pop() {
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
  }

 private:
  void grow() {
    const std::uint32_t capacity = capacity_ == 0 ? 4 : 2 * capacity_;
    auto bigger = std::make_unique<T[]>(capacity);
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = buffer_[(head_ + i) & (capacity_ - 1)];
    buffer_ = std::move(bigger);
    capacity_ = capacity;
    head_ = 0;
  }
  std::unique_ptr<T[]> buffer_;
  std::uint32_t capacity_ = 0, head_ = 0, size_ = 0;  // at most kMaxJobsInSystem jobs
};

// Servers grouped by queue length: one array ordered by length, and where each length starts, so
// that the servers of the smallest length (JSQ over all servers) or the idle ones (JIQ) are a
// prefix of the array. Changing one queue by one job is a swap: O(1).
class LengthBuckets {
 public:
  explicit LengthBuckets(int N)
      : order_(idx(N)), position_(idx(N)), length_(idx(N), 0), start_{0, N} {
    for (int n = 0; n < N; ++n) order_[idx(n)] = position_[idx(n)] = n;
  }
  void increment(int n) {  // n moves from the end of its group to the start of the next
    const auto k = idx(length_[idx(n)]);
    if (start_.size() < k + 3) start_.push_back(static_cast<int>(order_.size()));
    swap_positions(position_[idx(n)], --start_[k + 1]);
    ++length_[idx(n)];
  }
  void decrement(int n) {  // n moves from the start of its group to the end of the previous
    const auto k = idx(length_[idx(n)]);
    swap_positions(position_[idx(n)], start_[k]++);
    --length_[idx(n)];
  }
  // The servers of the smallest length are at(0 .. shortest_count()), the idle ones
  // at(0 .. idle_count()).
  int shortest_count() const { return start_[idx(length_[idx(order_[0])]) + 1]; }
  int idle_count() const { return start_[1]; }
  int at(int i) const { return order_[idx(i)]; }
  int size() const { return static_cast<int>(order_.size()); }
  // The positions of the servers as long as n: [group_start(n), group_end(n)).
  int group_start(int n) const { return start_[idx(length_[idx(n)])]; }
  int group_end(int n) const { return start_[idx(length_[idx(n)]) + 1]; }

 private:
  void swap_positions(int i, int j) {
    std::swap(order_[idx(i)], order_[idx(j)]);
    position_[idx(order_[idx(i)])] = i;
    position_[idx(order_[idx(j)])] = j;
  }
  std::vector<int> order_, position_, length_;
  std::vector<int> start_;  // start_[k]: number of servers shorter than k
};

// Jobs of a redundancy (cancel-on-completion) system with their replicas threaded into
// per-server FCFS lists (paper Fig. 1b). The head of server n's list is the oldest job that
// contains n, i.e. the job n serves in the central-queue picture (Fig. 1c).
class ReplicaLists {
 public:
  explicit ReplicaLists(int N)
      : head_(static_cast<std::size_t>(N), -1), tail_(static_cast<std::size_t>(N), -1) {}

  // Appends a job with replicas at `servers`; returns its id.
  int add(const std::vector<int>& servers, int type, double arrival, double size) {
    const auto count = servers.size();
    if (free_blocks_.size() <= count) free_blocks_.resize(count + 1);
    int first;
    if (!free_blocks_[count].empty()) {
      first = free_blocks_[count].back();
      free_blocks_[count].pop_back();
    } else {
      first = static_cast<int>(nodes_.size());
      nodes_.resize(nodes_.size() + count);
      servers_.resize(servers_.size() + count);
    }
    int job;
    if (!free_jobs_.empty()) {
      job = free_jobs_.back();
      free_jobs_.pop_back();
    } else {
      job = static_cast<int>(jobs_.size());
      jobs_.emplace_back();
    }
    jobs_[idx(job)] = {first, static_cast<int>(count), type, arrival, size};
    for (std::size_t s = 0; s < count; ++s) {
      const int node = first + static_cast<int>(s);
      const int n = servers[s];
      servers_[idx(node)] = n;
      const int last = tail_[idx(n)];
      nodes_[idx(node)] = {last, -1, job};
      if (last < 0) {
        head_[idx(n)] = node;
      } else {
        nodes_[idx(last)].next = node;
      }
      tail_[idx(n)] = node;
    }
    return job;
  }
  // Removes the replica of `job` in its `slot`-th server; true if it was at the head there.
  bool unlink(int job, int slot) {
    const int node = jobs_[idx(job)].first + slot;
    const int n = servers_[idx(node)];
    const Node& x = nodes_[idx(node)];
    if (x.next < 0) {
      tail_[idx(n)] = x.prev;
    } else {
      nodes_[idx(x.next)].prev = x.prev;
    }
    if (x.prev < 0) {
      head_[idx(n)] = x.next;
      return true;
    }
    nodes_[idx(x.prev)].next = x.next;
    return false;
  }
  // Frees `job` once all its replicas are unlinked.
  void release(int job) {
    const Job& j = jobs_[idx(job)];
    free_blocks_[idx(j.count)].push_back(j.first);
    free_jobs_.push_back(job);
  }

  bool idle(int n) const { return head_[idx(n)] < 0; }
  int head_job(int n) const { return nodes_[idx(head_[idx(n)])].job; }
  // The job's servers, contiguous, in the order given to add().
  const int* servers(int job) const { return &servers_[idx(jobs_[idx(job)].first)]; }
  int replicas(int job) const { return jobs_[idx(job)].count; }
  int type(int job) const { return jobs_[idx(job)].type; }
  double arrival(int job) const { return jobs_[idx(job)].arrival; }
  double size(int job) const { return jobs_[idx(job)].size; }

 private:
  struct Node {
    int prev, next, job;
  };
  struct Job {
    int first, count, type;
    double arrival, size;
  };
  std::vector<int> head_, tail_;
  std::vector<Node> nodes_;
  std::vector<int> servers_;  // server of node i, contiguous per job
  std::vector<Job> jobs_;
  std::vector<int> free_jobs_;
  std::vector<std::vector<int>> free_blocks_;  // by replica count: first node of a free block
};

}  // namespace qsweep::sim
