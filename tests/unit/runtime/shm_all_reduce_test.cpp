// The shared-memory all-reduce with threads as ranks: each thread holds its own ShmAllReduce
// over one segment, as the ranks of a host do over a shared mapping, and runs the same script of
// collectives (the same starts and waits in the same order); the progress calls between them are
// each thread's own. Operands are small integers, so every reduction is exact and its reference
// is computed directly.
#include <gtest/gtest.h>

#include <barrier>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "runtime/comm/shm_all_reduce.h"

namespace lt::rt::comm {
namespace {

struct Segment {
  explicit Segment(int ranks, int64_t capacity)
      : part(ShmAllReduce::part_bytes(capacity)),
        bytes(static_cast<size_t>(part * ranks)),
        memory(static_cast<std::byte*>(std::aligned_alloc(4096, bytes)), &std::free) {
    std::memset(memory.get(), 0, bytes);  // a new POSIX shared-memory object is zero-filled
  }
  std::vector<std::byte*> parts(int ranks) const {
    std::vector<std::byte*> p;
    for (int q = 0; q < ranks; ++q) p.push_back(memory.get() + q * part);
    return p;
  }
  int64_t part;
  size_t bytes;
  std::unique_ptr<std::byte, decltype(&std::free)> memory;
};

enum class Kind { AllReduce, ReduceScatter, AllGather };

// One collective of the script: element i of rank r's operand is value(r, i, salt). `count`:
// the elements of an all-reduce, of each rank's block of a reduce-scatter (whose operand holds
// one block per rank), of each rank's operand of an all-gather.
struct Planned {
  int64_t count;
  DType dtype;
  ir::ReduceKind op;
  int salt;
  Kind kind = Kind::AllReduce;
};

int64_t operand_count(const Planned& p, int ranks) {
  return p.kind == Kind::ReduceScatter ? p.count * ranks : p.count;
}

// The segment bytes a collective asks for: its operand's, each rank's block on lines of its own.
int64_t demand_of(const Planned& p, int ranks) {
  const int64_t line = (p.count * static_cast<int64_t>(dtype_size(p.dtype)) + 63) / 64 * 64;
  return p.kind == Kind::ReduceScatter ? line * ranks : line;
}

double value(int r, int64_t i, int salt) {
  return static_cast<double>((i * 7 + r * 13 + salt) % 23 - 11);
}

template <typename T>
std::vector<std::byte> operand(const Planned& p, int r, int ranks) {
  const int64_t n = operand_count(p, ranks);
  std::vector<std::byte> out(static_cast<size_t>(n) * sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    const T v = static_cast<T>(value(r, i, p.salt));
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
  return out;
}

// f(T{}) for the element type T of `t` (f32, f64, i32 or i64).
template <typename F>
std::vector<std::byte> with_type(DType t, F f) {
  switch (t) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::I32: return f(int32_t{});
    default: return f(int64_t{});
  }
}

std::vector<std::byte> operand_of(const Planned& p, int r, int ranks) {
  return with_type(p.dtype, [&](auto t) { return operand<decltype(t)>(p, r, ranks); });
}

// Rank `self`'s result: of an all-reduce, the reduction in rank order, as the collective defines
// it (Mean: the sum times 1/ranks); of a reduce-scatter, that of the operands' block `self`; of
// an all-gather, every rank's operand in rank order.
template <typename T>
std::vector<std::byte> reference(const Planned& p, int ranks, int self) {
  if (p.kind == Kind::AllGather) {
    std::vector<std::byte> out;
    for (int r = 0; r < ranks; ++r) {
      const std::vector<std::byte> x = operand<T>(p, r, ranks);
      out.insert(out.end(), x.begin(), x.end());
    }
    return out;
  }
  const int64_t first = p.kind == Kind::ReduceScatter ? self * p.count : 0;
  std::vector<std::byte> out(static_cast<size_t>(p.count) * sizeof(T));
  for (int64_t i = 0; i < p.count; ++i) {
    T acc = static_cast<T>(value(0, first + i, p.salt));
    for (int r = 1; r < ranks; ++r) {
      const T v = static_cast<T>(value(r, first + i, p.salt));
      acc = p.op == ir::ReduceKind::Max   ? std::max(acc, v)
            : p.op == ir::ReduceKind::Min ? std::min(acc, v)
                                          : acc + v;
    }
    if (p.op == ir::ReduceKind::Mean) acc *= static_cast<T>(1.0 / ranks);
    std::memcpy(out.data() + i * sizeof(T), &acc, sizeof(T));
  }
  return out;
}

std::vector<std::byte> reference_of(const Planned& p, int ranks, int self) {
  return with_type(p.dtype, [&](auto t) { return reference<decltype(t)>(p, ranks, self); });
}

// Starts p with rank r's operand `in`, its result in `out` (the operand itself for an
// all-reduce).
int start(ShmAllReduce& shm, const Planned& p, int ranks, std::vector<std::byte>& in,
          std::vector<std::byte>& out, bool first) {
  const auto esize = static_cast<int64_t>(dtype_size(p.dtype));
  switch (p.kind) {
    case Kind::AllReduce: return shm.start(in.data(), p.count, p.dtype, p.op, first);
    case Kind::ReduceScatter:
      out.assign(static_cast<size_t>(p.count * esize), std::byte{0x5a});
      return shm.start_reduce_scatter(in.data(), out.data(), p.count, p.dtype, p.op, first);
    case Kind::AllGather:
      out.assign(static_cast<size_t>(p.count * esize * ranks), std::byte{0x5a});
      return shm.start_all_gather(in.data(), out.data(), p.count * esize, first);
  }
  return -1;
}

// Epochs of 1-5 collectives of assorted sizes, types and ops (all started, then all waited).
struct Epoch {
  std::vector<Planned> collectives;
  std::vector<int> wait_order;
  std::vector<int> wait_after;  // [j]: an earlier collective waited right after starting j, or -1
};

// `mixed`: reduce-scatters and all-gathers among the all-reduces.
std::vector<Epoch> script(uint32_t seed, int epochs, bool mixed = false) {
  std::mt19937 rng(seed);
  const int64_t sizes[] = {0, 1, 15, 16, 17, 1000, 4099, 70000};
  const DType types[] = {DType::F32, DType::F64, DType::I32, DType::I64};
  const ir::ReduceKind ops[] = {ir::ReduceKind::Sum, ir::ReduceKind::Mean, ir::ReduceKind::Max,
                                ir::ReduceKind::Min};
  std::vector<Epoch> out(static_cast<size_t>(epochs));
  int salt = 0;
  for (Epoch& e : out) {
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int j = 0; j < n; ++j) {
      const DType t = types[rng() % 4];
      ir::ReduceKind op = ops[rng() % 4];
      if (op == ir::ReduceKind::Mean && (t == DType::I32 || t == DType::I64))
        op = ir::ReduceKind::Sum;
      e.collectives.push_back({sizes[rng() % 8], t, op, ++salt});
      if (mixed) e.collectives.back().kind = static_cast<Kind>(rng() % 3);
      // Now and then the oldest collective in flight is waited for between two starts.
      e.wait_after.push_back(j > 0 && rng() % 3 == 0 ? 0 : -1);
    }
    std::vector<bool> waited(static_cast<size_t>(n), false);
    for (int j = 0; j < n; ++j) {
      if (e.wait_after[j] < 0) continue;
      int oldest = 0;
      while (waited[oldest]) ++oldest;
      e.wait_after[j] = oldest;  // oldest <= j: a started one
      waited[oldest] = true;
    }
    for (int j = 0; j < n; ++j)
      if (!waited[j]) e.wait_order.push_back(j);
    std::shuffle(e.wait_order.begin(), e.wait_order.end(), rng);
  }
  return out;
}

// What one rank saw: per epoch and collective, whether it fitted and whether its result was the
// reference; and each epoch's demand.
struct Seen {
  std::vector<std::vector<int>> fitted, correct;
  std::vector<int64_t> demand;
  int64_t streamed = 0;  // collectives written with streaming stores
};

// Runs the script on `ranks` threads over a segment of `capacity` bytes per rank; after epoch
// `grow_after` (if >= 0) every rank quiesces and all attach a new segment of `grown` bytes.
std::vector<Seen> run(int ranks, int64_t capacity, const std::vector<Epoch>& epochs,
                      int grow_after = -1, int64_t grown = 0,
                      StorePolicy stores = StorePolicy::Auto) {
  Segment first(ranks, capacity), second(ranks, grown > 0 ? grown : 64);
  std::barrier sync(ranks);
  std::vector<Seen> seen(static_cast<size_t>(ranks));
  auto rank_main = [&](int r) {
    ShmAllReduce shm(r, ranks, stores);
    shm.attach(first.parts(ranks), capacity);
    std::mt19937 local(1000 + static_cast<uint32_t>(r));  // this rank's own progress calls
    Seen& s = seen[static_cast<size_t>(r)];
    for (size_t ei = 0; ei < epochs.size(); ++ei) {
      const Epoch& e = epochs[ei];
      std::vector<std::vector<std::byte>> data(e.collectives.size()), out(data.size());
      std::vector<int> ids;
      int in_flight = 0;  // what the communicator counts: a start with none begins an epoch
      for (size_t j = 0; j < e.collectives.size(); ++j) {
        const Planned& p = e.collectives[j];
        data[j] = operand_of(p, r, ranks);
        ids.push_back(start(shm, p, ranks, data[j], out[j], in_flight == 0));
        // The operand of a reduce-scatter or all-gather is read by its start alone.
        if (p.kind != Kind::AllReduce) std::fill(data[j].begin(), data[j].end(), std::byte{1});
        ++in_flight;
        for (int k = static_cast<int>(local() % 3); k > 0; --k) shm.progress();
        if (const int w = e.wait_after[j]; w >= 0) {
          if (ids[w] >= 0) shm.wait(ids[w]);
          --in_flight;
        }
      }
      s.demand.push_back(shm.epoch_demand());
      s.fitted.emplace_back();
      s.correct.emplace_back();
      for (int id : ids) s.fitted.back().push_back(id >= 0);
      // Between the same starts, each rank waits in an order of its own.
      std::vector<int> order = e.wait_order;
      std::shuffle(order.begin(), order.end(), local);
      for (int j : order)
        if (ids[j] >= 0) shm.wait(ids[j]);
      for (size_t j = 0; j < e.collectives.size(); ++j) {
        const Planned& p = e.collectives[j];
        s.correct.back().push_back(ids[j] < 0 || (p.kind == Kind::AllReduce ? data[j] : out[j]) ==
                                                     reference_of(p, ranks, r));
      }
      if (static_cast<int>(ei) == grow_after) {
        shm.quiesce();
        sync.arrive_and_wait();  // the communicator's collective calls around a new segment
        shm.attach(second.parts(ranks), grown);
        sync.arrive_and_wait();
      }
    }
    s.streamed = shm.streamed();
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) threads.emplace_back(rank_main, r);
  for (std::thread& t : threads) t.join();
  return seen;
}

TEST(ShmAllReduce, ThreadsAsRanksGetTheReductionOfEveryRanksOperands) {
  for (const bool mixed : {false, true}) {
    const std::vector<Epoch> epochs = script(7, 12, mixed);
    for (int ranks : {1, 2, 3, 4}) {
      const std::vector<Seen> seen = run(ranks, int64_t{8} << 20, epochs);
      for (int r = 0; r < ranks; ++r)
        for (size_t e = 0; e < epochs.size(); ++e)
          for (size_t j = 0; j < epochs[e].collectives.size(); ++j) {
            EXPECT_TRUE(seen[r].fitted[e][j]) << ranks << " ranks, epoch " << e << " #" << j;
            EXPECT_TRUE(seen[r].correct[e][j]) << ranks << " ranks, rank " << r << ", epoch " << e
                                               << " #" << j << (mixed ? ", mixed" : "");
          }
    }
  }
}

// A segment too small for an epoch: the same collectives fail to fit on every rank (so every
// rank sends them the same other way), the epoch's demand counts them all, and a larger segment
// attached between epochs takes them from then on.
TEST(ShmAllReduce, EveryRankAgreesOnWhatFitsAndOnTheDemand) {
  for (const bool mixed : {false, true}) {
    const std::vector<Epoch> epochs = script(11, 10, mixed);
    const int64_t small = 4096;
    for (int ranks : {2, 3}) {
      const std::vector<Seen> seen = run(ranks, small, epochs, 4, int64_t{4} << 20);
      int refused = 0;
      for (size_t e = 0; e < epochs.size(); ++e) {
        int64_t demand = 0;
        for (const Planned& p : epochs[e].collectives) demand += demand_of(p, ranks);
        for (int r = 0; r < ranks; ++r) {
          EXPECT_EQ(seen[r].fitted[e], seen[0].fitted[e]) << "epoch " << e << ", rank " << r;
          EXPECT_EQ(seen[r].demand[e], demand) << "epoch " << e;
          for (int ok : seen[r].correct[e]) EXPECT_TRUE(ok) << "epoch " << e << ", rank " << r;
        }
        for (int fitted : seen[0].fitted[e]) {
          if (e > 4) {
            EXPECT_TRUE(fitted) << "epoch " << e;
          }
          refused += !fitted;
        }
      }
      EXPECT_GT(refused, 0);  // the script does overflow the small segment
    }
  }
}

// Cached or streaming stores move the same bytes: every policy gives every rank the reference,
// and a fixed one is used for every large collective (at least ShmAllReduce::kLargeBytes).
TEST(ShmAllReduce, EveryStorePolicyGetsTheReduction) {
  const std::vector<Epoch> epochs = script(5, 16);
  int64_t large = 0;
  int measured_epochs_with_large = 0;  // auto measures from the second epoch on
  for (size_t e = 0; e < epochs.size(); ++e) {
    int here = 0;
    for (const Planned& p : epochs[e].collectives)
      here += p.count * static_cast<int64_t>(dtype_size(p.dtype)) >= ShmAllReduce::kLargeBytes;
    large += here;
    measured_epochs_with_large += e > 0 && here > 0;
  }
  // Auto tries streaming once a cached one has been measured (it is, at the end of its epoch).
  ASSERT_GE(measured_epochs_with_large, 2);
  for (StorePolicy policy : {StorePolicy::Cached, StorePolicy::Streaming, StorePolicy::Auto})
    for (int ranks : {2, 3}) {
      const std::vector<Seen> seen = run(ranks, int64_t{8} << 20, epochs, -1, 0, policy);
      for (int r = 0; r < ranks; ++r) {
        for (size_t e = 0; e < epochs.size(); ++e)
          for (size_t j = 0; j < epochs[e].collectives.size(); ++j)
            EXPECT_TRUE(seen[r].correct[e][j]) << static_cast<int>(policy) << ", " << ranks
                                               << " ranks, rank " << r << ", epoch " << e;
        switch (policy) {
          case StorePolicy::Cached: EXPECT_EQ(seen[r].streamed, 0); break;
          case StorePolicy::Streaming: EXPECT_EQ(seen[r].streamed, large); break;
          case StorePolicy::Auto:  // each kind is tried
            EXPECT_GE(seen[r].streamed, 1);
            EXPECT_LT(seen[r].streamed, large);
            break;
        }
      }
    }
}

// Each rank reduces its slice in place in its own operand; the sum still goes in rank order
// (x0 + x1) + x2 + ..., which float addition tells apart from any other order: one rank of the
// four holds 1e8 at each element, one -1e8, the others 1 (where the two ones come before both
// large values the rank-order sum is 0, where the large ones meet first it is 2). Every slice,
// whichever rank reduces it (ranks 2 and 3 set their own operand aside first), is the reference.
TEST(ShmAllReduce, SlicesAreReducedInPlaceInRankOrder) {
  constexpr int kRanks = 4;
  constexpr int64_t kCount = 4096;
  auto x = [](int r, int64_t i) {
    const int big = static_cast<int>(i % kRanks), minus = static_cast<int>((i / kRanks) % kRanks);
    return r == big ? 1e8f : r == minus && minus != big ? -1e8f : 1.0f;
  };
  std::vector<float> want(kCount);
  int order_matters = 0;
  for (int64_t i = 0; i < kCount; ++i) {
    float acc = x(0, i), reverse = x(kRanks - 1, i);
    for (int r = 1; r < kRanks; ++r) acc += x(r, i);
    for (int r = kRanks - 2; r >= 0; --r) reverse += x(r, i);
    want[i] = acc;
    order_matters += acc != reverse;
  }
  ASSERT_GT(order_matters, kCount / 4);
  for (StorePolicy policy : {StorePolicy::Cached, StorePolicy::Streaming}) {
    Segment segment(kRanks, int64_t{1} << 20);
    std::vector<std::vector<float>> data(kRanks);
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back([&, r] {
        ShmAllReduce shm(r, kRanks, policy);
        shm.attach(segment.parts(kRanks), int64_t{1} << 20);
        for (int64_t i = 0; i < kCount; ++i) data[r].push_back(x(r, i));
        shm.wait(shm.start(data[r].data(), kCount, DType::F32, ir::ReduceKind::Sum, true));
        shm.quiesce();
      });
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < kRanks; ++r) EXPECT_EQ(data[r], want) << "rank " << r;
  }
}

}  // namespace
}  // namespace lt::rt::comm
