#include "runtime/comm/shm_all_reduce.h"

#include <sched.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <utility>

#include "ir/error.h"

namespace lt::rt::comm {
namespace {

constexpr int64_t kLine = 64;
constexpr int64_t kHeaderBytes = 4 * kLine;
constexpr int64_t kPage = 4096;
enum Counter : int { kArrived = 0, kReduced = 1, kCopied = 2 };
// Slices start on a cache line of every element size (no two ranks write one line).
constexpr int64_t kSliceAlign = 16;

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

std::atomic_ref<uint64_t> counter_of(std::byte* part, int counter) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(part + counter * kLine));
}

// Spins on `ready`, yielding the core after a while: ranks may outnumber the cores.
template <typename Ready>
void spin_until(Ready ready) {
  for (int spins = 0; !ready();) {
    if (spins < 256) {
      ++spins;
      __builtin_ia32_pause();
    } else {
      sched_yield();
    }
  }
}

// Copies n bytes to dst with stores that bypass the caches where the CPU has them, as wide as
// the build's vector unit allows; fence_streaming() then orders them before a later store (the
// counter that publishes them). A cached store to a line another rank read last (the segment's
// lines, each step) first takes the line from that core's cache; a streaming store does not.
void copy_streaming(std::byte* dst, const std::byte* src, size_t n) {
  size_t i = 0;
#if defined(__AVX512F__)
  if ((reinterpret_cast<uintptr_t>(dst) & 63) == 0)
    for (; i + 64 <= n; i += 64)
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), _mm512_loadu_si512(src + i));
#elif defined(__AVX__)
  if ((reinterpret_cast<uintptr_t>(dst) & 31) == 0)
    for (; i + 32 <= n; i += 32)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
#elif defined(__SSE2__)
  if ((reinterpret_cast<uintptr_t>(dst) & 15) == 0)
    for (; i + 16 <= n; i += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
#endif
  std::memcpy(dst + i, src + i, n - i);
}

void fence_streaming() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

void copy(Stores stores, std::byte* dst, const std::byte* src, size_t n) {
  if (stores == Stores::Streaming) copy_streaming(dst, src, n);
  else std::memcpy(dst, src, n);
}

struct Sum {
  template <typename T> static T apply(T a, T b) { return a + b; }
};
struct Max {
  template <typename T> static T apply(T a, T b) { return std::max(a, b); }
};
struct Min {
  template <typename T> static T apply(T a, T b) { return std::min(a, b); }
};

// out_b = in[0] op in[1] op ... (in rank order), times `scale` when it is not 1, where out_b is
// in[self]: the rank's own operand, reduced in place (the first pass reads in[0] and in[1] before
// it writes an element; the operand of a later rank is set aside first). Each block, still in
// L1, is then copied to out_a in the segment with `stores` (unless out_a is null): cheaper than
// interleaving the segment's stores with the loads from the other ranks' parts, or staging every
// pass in a buffer.
template <typename T, typename Op>
void combine(const std::vector<const T*>& in, int self, int64_t n, double scale, Stores stores,
             T* out_a, T* out_b) {
  constexpr int64_t kBlock = 256;
  alignas(64) T own[kBlock];
  const T s = static_cast<T>(scale);
  const size_t ranks = in.size();
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    const size_t bytes = static_cast<size_t>(m) * sizeof(T);
    T* out = out_b + b;
    if (ranks > 1) {  // one rank: out is the operand already
      const T* x0 = in[0] + b;
      const T* x1 = in[1] + b;
      if (self >= 2) std::memcpy(own, in[self] + b, bytes);  // before out is written
      for (int64_t i = 0; i < m; ++i) out[i] = Op::apply(x0[i], x1[i]);
      for (size_t q = 2; q < ranks; ++q) {
        const T* x = static_cast<int>(q) == self ? own : in[q] + b;
        for (int64_t i = 0; i < m; ++i) out[i] = Op::apply(out[i], x[i]);
      }
    }
    if (scale != 1.0)
      for (int64_t i = 0; i < m; ++i) out[i] *= s;
    if (out_a != nullptr)
      copy(stores, reinterpret_cast<std::byte*>(out_a + b),
           reinterpret_cast<const std::byte*>(out), bytes);
  }
}

template <typename T>
void combine_op(ir::ReduceKind op, const std::vector<const T*>& in, int self, int64_t n,
                double scale, Stores stores, T* out_a, T* out_b) {
  switch (op) {
    case ir::ReduceKind::Sum: case ir::ReduceKind::Mean:
      return combine<T, Sum>(in, self, n, scale, stores, out_a, out_b);
    case ir::ReduceKind::Max: return combine<T, Max>(in, self, n, scale, stores, out_a, out_b);
    case ir::ReduceKind::Min: return combine<T, Min>(in, self, n, scale, stores, out_a, out_b);
  }
  LT_UNREACHABLE();
}

template <typename T>
void combine_typed(ir::ReduceKind op, const std::vector<const std::byte*>& in, int self, int64_t n,
                   double scale, Stores stores, std::byte* out_a, std::byte* out_b) {
  std::vector<const T*> typed(in.size());
  for (size_t q = 0; q < in.size(); ++q) typed[q] = reinterpret_cast<const T*>(in[q]);
  combine_op<T>(op, typed, self, n, scale, stores, reinterpret_cast<T*>(out_a),
                reinterpret_cast<T*>(out_b));
}

}  // namespace

int64_t ShmAllReduce::part_bytes(int64_t capacity) {
  return round_up(kHeaderBytes + capacity, kPage);
}

ShmAllReduce::ShmAllReduce(int rank, int size, StorePolicy stores)
    : rank_(rank), size_(size), choice_(stores) {
  LT_CHECK(size >= 1 && rank >= 0 && rank < size, "rank {} of {}", rank, size);
}

void ShmAllReduce::attach(std::vector<std::byte*> parts, int64_t capacity) {
  LT_CHECK(in_flight_ == 0, "a new segment with {} collectives in flight", in_flight_);
  LT_CHECK(static_cast<int>(parts.size()) == size_, "{} parts for {} ranks", parts.size(), size_);
  parts_ = std::move(parts);
  capacity_ = capacity;
  seq_ = 0;  // the new segment's counters are 0
  next_offset_ = 0;
  settled_ = false;
}

std::pair<int64_t, int64_t> ShmAllReduce::slice(int64_t count, int q) const {
  const int64_t per = round_up((count + size_ - 1) / size_, kSliceAlign);
  const int64_t lo = std::min(count, per * q);
  return {lo, std::min(count, lo + per)};
}

std::byte* ShmAllReduce::operands(int q, const Collective& c) const {
  return parts_[q] + kHeaderBytes + c.offset;
}

uint64_t ShmAllReduce::lowest(int counter) const {
  uint64_t low = UINT64_MAX;
  for (int q = 0; q < size_; ++q)
    low = std::min(low, counter_of(parts_[q], counter).load(std::memory_order_acquire));
  return low;
}

void ShmAllReduce::publish(int counter, uint64_t seq) {
  counter_of(parts_[rank_], counter).store(seq, std::memory_order_release);
}

void ShmAllReduce::quiesce() const {
  if (parts_.empty()) return;
  spin_until([&] { return lowest(kCopied) >= seq_; });
}

int ShmAllReduce::begin(int64_t bytes, bool first) {
  if (first) {
    LT_CHECK(in_flight_ == 0, "a new epoch with {} collectives in flight", in_flight_);
    next_offset_ = 0;
    demand_ = 0;
    reusing_ = true;
    measuring_ = std::exchange(settled_, true);
  }
  demand_ += bytes;
  if (parts_.empty() || next_offset_ + bytes > capacity_) return -1;
  // The epoch's first collective here reuses bytes the other ranks may still be copying out of.
  if (std::exchange(reusing_, false)) quiesce();
  int id = 0;
  while (id < static_cast<int>(collectives_.size()) && collectives_[id].active) ++id;
  if (id == static_cast<int>(collectives_.size())) collectives_.emplace_back();
  Collective& c = collectives_[id];
  c = Collective{};
  c.seq = ++seq_;
  c.offset = next_offset_;
  c.active = true;
  next_offset_ += bytes;
  return id;
}

int ShmAllReduce::launch(int id) {
  Collective& c = collectives_[id];
  run_timed(c, &ShmAllReduce::copy_in);
  publish(kArrived, c.seq);
  order_.push_back(id);
  ++in_flight_;
  progress();
  return id;
}

int ShmAllReduce::start(void* data, int64_t count, DType dtype, ir::ReduceKind op,
                        bool first) {
  const int64_t bytes = round_up(count * static_cast<int64_t>(dtype_size(dtype)), kLine);
  const int id = begin(bytes, first);
  if (id < 0) return -1;
  Collective& c = collectives_[id];
  c.data = static_cast<std::byte*>(data);
  c.count = count;
  c.dtype = dtype;
  c.op = op;
  if (bytes >= kLargeBytes && size_ > 1) {
    c.stores = choice_.pick(large_++);
    c.timed = measuring_ && choice_.policy() == StorePolicy::Auto;
    streamed_ += c.stores == Stores::Streaming;
  }
  return launch(id);
}

int ShmAllReduce::start_reduce_scatter(const void* in, void* out, int64_t count, DType dtype,
                                       ir::ReduceKind op, bool first) {
  const auto esize = static_cast<int64_t>(dtype_size(dtype));
  const int64_t block = round_up(count * esize, kLine);  // each block on its own lines
  const int id = begin(block * size_, first);
  if (id < 0) return -1;
  Collective& c = collectives_[id];
  c.kind = Kind::ReduceScatter;
  c.data = static_cast<std::byte*>(out);
  c.count = count;
  c.dtype = dtype;
  c.op = op;
  // The other ranks read block q of this rank's part when they reduce block q; this rank's own
  // block goes to its result now, where the reduction then accumulates.
  const auto* src = static_cast<const std::byte*>(in);
  for (int q = 0; q < size_; ++q)
    std::memcpy(q == rank_ ? c.data : operands(rank_, c) + q * block, src + q * count * esize,
                static_cast<size_t>(count * esize));
  return launch(id);
}

int ShmAllReduce::start_all_gather(const void* in, void* out, int64_t bytes, bool first) {
  const int id = begin(round_up(bytes, kLine), first);
  if (id < 0) return -1;
  Collective& c = collectives_[id];
  c.kind = Kind::AllGather;
  c.data = static_cast<std::byte*>(out);
  c.count = bytes;
  c.dtype = DType::Bool;
  std::memcpy(operands(rank_, c), in, static_cast<size_t>(bytes));
  std::memcpy(c.data + rank_ * bytes, in, static_cast<size_t>(bytes));
  return launch(id);
}

void ShmAllReduce::copy_in(Collective& c) {
  if (c.kind != Kind::AllReduce) return;  // their start copied the operand in
  // The other ranks read the slices they reduce; this rank reads its own slice from `data`.
  const auto esize = static_cast<int64_t>(dtype_size(c.dtype));
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    const auto [lo, hi] = slice(c.count, q);
    if (hi > lo)
      copy(c.stores, operands(rank_, c) + lo * esize, c.data + lo * esize,
           static_cast<size_t>((hi - lo) * esize));
  }
  if (c.stores == Stores::Streaming) fence_streaming();
}

void ShmAllReduce::run_timed(Collective& c, void (ShmAllReduce::*work)(Collective&)) {
  if (!c.timed) return (this->*work)(c);
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  (this->*work)(c);
  c.work_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

void ShmAllReduce::reduce(Collective& c) {
  const auto esize = static_cast<int64_t>(dtype_size(c.dtype));
  if (c.kind == Kind::AllGather) {
    for (int q = 0; q < size_; ++q)
      if (q != rank_)
        std::memcpy(c.data + q * c.count, operands(q, c), static_cast<size_t>(c.count));
    return;
  }
  // An all-reduce's slice of the rank's elements, or a reduce-scatter's block (each part holds
  // every block, on lines of their own; the own one is in `data`).
  const bool scatter = c.kind == Kind::ReduceScatter;
  const auto [lo, hi] = scatter ? std::pair<int64_t, int64_t>{0, c.count} : slice(c.count, rank_);
  const int64_t at = scatter ? rank_ * round_up(c.count * esize, kLine) : lo * esize;
  std::vector<const std::byte*> in(static_cast<size_t>(size_));
  for (int q = 0; q < size_; ++q)
    in[q] = q == rank_ ? c.data + lo * esize : operands(q, c) + at;
  const double scale = c.op == ir::ReduceKind::Mean ? 1.0 / size_ : 1.0;
  // A reduce-scatter's result is wanted here only: nothing goes back to the segment.
  std::byte* mine = scatter ? nullptr : operands(rank_, c) + at;
  std::byte* data = c.data + lo * esize;
  const int64_t n = hi - lo;
  switch (c.dtype) {
    case DType::F32: combine_typed<float>(c.op, in, rank_, n, scale, c.stores, mine, data); break;
    case DType::F64: combine_typed<double>(c.op, in, rank_, n, scale, c.stores, mine, data); break;
    case DType::I32: combine_typed<int32_t>(c.op, in, rank_, n, 1.0, c.stores, mine, data); break;
    case DType::I64: combine_typed<int64_t>(c.op, in, rank_, n, 1.0, c.stores, mine, data); break;
    case DType::Bool: case DType::F16: case DType::BF16: LT_UNREACHABLE();
  }
  if (c.stores == Stores::Streaming) fence_streaming();
}

void ShmAllReduce::copy_out(Collective& c) {
  if (c.kind != Kind::AllReduce) return;  // the result is complete once reduce() ran
  const auto esize = static_cast<int64_t>(dtype_size(c.dtype));
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    const auto [lo, hi] = slice(c.count, q);
    if (hi > lo)
      std::memcpy(c.data + lo * esize, operands(q, c) + lo * esize,
                  static_cast<size_t>((hi - lo) * esize));
  }
}

void ShmAllReduce::advance(Stage from, int ready, int published,
                           void (ShmAllReduce::*work)(Collective&)) {
  uint64_t low = 0;  // of `ready` over the ranks, read again only when it is not enough
  for (int id : order_) {
    Collective& c = collectives_[id];
    if (c.stage != from) continue;
    if (low < c.seq && (low = lowest(ready)) < c.seq) break;
    run_timed(c, work);
    c.stage = static_cast<Stage>(static_cast<int>(from) + 1);
    if (c.stage == Stage::Done && c.timed)
      choice_.record(c.stores, static_cast<double>(c.work_ns) /
                                   static_cast<double>(c.count * dtype_size(c.dtype)));
    publish(published, c.seq);
  }
}

void ShmAllReduce::progress() {
  // Both passes go in start order, so each counter says "every collective up to this one".
  advance(Stage::Arrived, kArrived, kReduced, &ShmAllReduce::reduce);
  advance(Stage::Reduced, kReduced, kCopied, &ShmAllReduce::copy_out);
}

bool ShmAllReduce::done(int id) const {
  LT_CHECK(id >= 0 && id < static_cast<int>(collectives_.size()) && collectives_[id].active,
           "shared-memory collective {} is not in flight", id);
  return collectives_[id].stage == Stage::Done;
}

void ShmAllReduce::wait(int id, const std::function<void()>& meanwhile) {
  if (!done(id)) {
    spin_until([&] {
      if (meanwhile) meanwhile();
      progress();
      return collectives_[id].stage == Stage::Done;
    });
  }
  collectives_[id].active = false;
  order_.erase(std::find(order_.begin(), order_.end(), id));
  --in_flight_;
}

}  // namespace lt::rt::comm
