// lt::data::DataLoader against the batches an explicit loop over the same indices makes: the
// same batches in the same order whatever the number of workers, PyTorch's batching rules
// (drop_last, the last short batch, a sampler), errors that name the example, the prefetch
// bound, workers that run beside the caller, and the wait counted as data_wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/error_of.h"

namespace lt::data {
namespace {

using testing::error_of;

std::shared_ptr<TensorDataset> numbered(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n * 3));
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<int64_t> y(static_cast<size_t>(n));
  std::iota(y.begin(), y.end(), int64_t{100});
  return std::make_shared<TensorDataset>(from_vector(x, {n, 3}), from_vector(y, {n}));
}

/// What the loader should give: rows `indices` of each tensor, in that order.
Example expected(const TensorDataset& d, const std::vector<int64_t>& indices) {
  return {gather_rows(d.images, indices), gather_rows(d.labels, indices)};
}

void expect_same(const Example& got, const Example& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j) {
    EXPECT_EQ(got[j].type(), want[j].type());
    EXPECT_EQ(got[j].to_vector<double>(), want[j].to_vector<double>());
  }
}

TEST(DataLoader, BatchesAreTheSameWhateverTheWorkers) {
  const auto d = numbered(23);
  for (int64_t workers : {0, 1, 3}) {
    SCOPED_TRACE(workers);
    DataLoader loader(d, {.batch_size = 5, .shuffle = true, .seed = 7, .num_workers = workers});
    for (int64_t epoch : {0, 1}) {
      loader.set_epoch(epoch);
      const std::vector<int64_t> order = shuffled_indices(23, 7, epoch);
      EXPECT_EQ(loader.num_batches(), 5);
      for (int64_t b = 0; b < 5; ++b) {
        std::optional<Example> got = loader.next();
        ASSERT_TRUE(got);
        const auto first = order.begin() + b * 5;
        expect_same(*got, expected(*d, {first, first + std::min<int64_t>(5, 23 - b * 5)}));
      }
      EXPECT_FALSE(loader.next());
      EXPECT_FALSE(loader.next());
    }
  }
}

TEST(DataLoader, GivesTheBatchesOfBatchIterator) {
  const auto d = numbered(11);
  BatchIterator it(*d, {.batch_size = 4, .seed = 5});
  DataLoader loader(d, {.batch_size = 4, .shuffle = true, .seed = 5, .num_workers = 2});
  it.start_epoch(3);
  loader.set_epoch(3);
  while (std::optional<Batch> b = it.next()) expect_same(*loader.next(), {b->images, b->labels});
  EXPECT_FALSE(loader.next());
}

TEST(DataLoader, SequentialDropLastAndSeek) {
  const auto d = numbered(7);
  DataLoader loader(d, {.batch_size = 3, .drop_last = true, .num_workers = 2});
  EXPECT_EQ(loader.num_batches(), 2);
  expect_same(*loader.next(), expected(*d, {0, 1, 2}));
  loader.seek(0);
  expect_same(*loader.next(), expected(*d, {0, 1, 2}));
  expect_same(*loader.next(), expected(*d, {3, 4, 5}));
  EXPECT_EQ(loader.batch_index(), 2);
  EXPECT_FALSE(loader.next());
  const std::string e = error_of([&] { loader.seek(3); });
  EXPECT_EQ(e.substr(0, e.rfind(" at ")), "DataLoader: seek to batch 3 of an epoch of 2");
}

TEST(DataLoader, ASamplerGivesTheOrder) {
  // A rank's share, as DistributedSampler deals it.
  const auto d = numbered(10);
  DistributedSampler sampler(10, {.num_replicas = 3, .rank = 1, .shuffle = true, .seed = 3});
  DataLoader loader(d, {.batch_size = 2,
                        .sampler = [&](int64_t e) {
                          sampler.set_epoch(e);
                          return sampler.indices();
                        },
                        .num_workers = 2});
  loader.set_epoch(4);
  sampler.set_epoch(4);
  const std::vector<int64_t> mine = sampler.indices();
  ASSERT_EQ(mine.size(), 4u);
  expect_same(*loader.next(), expected(*d, {mine[0], mine[1]}));
  expect_same(*loader.next(), expected(*d, {mine[2], mine[3]}));
  EXPECT_FALSE(loader.next());
}

/// A dataset whose examples fail at one index, and that records how many gets run at once.
class Probe final : public Dataset {
 public:
  explicit Probe(int64_t n, int64_t bad = -1, int sleep_ms = 0)
      : n_(n), bad_(bad), sleep_ms_(sleep_ms) {}
  int64_t size() const override { return n_; }
  Example get(int64_t i) const override {
    const int now = ++running_;
    for (int m = max_running_.load(); now > m && !max_running_.compare_exchange_weak(m, now);) {
    }
    ++gets_;
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    --running_;
    if (i == bad_) throw Error("no such image");
    // Ops run eagerly on a worker even while the caller traces lazily.
    return {full({2}, static_cast<double>(i), DType::F32) * 2.0};
  }
  int max_running() const { return max_running_; }
  int64_t gets() const { return gets_; }

 private:
  int64_t n_, bad_;
  int sleep_ms_;
  mutable std::atomic<int> running_{0}, max_running_{0};
  mutable std::atomic<int64_t> gets_{0};
};

TEST(DataLoader, AFailingExampleFailsItsBatchInOrder) {
  for (int64_t workers : {0, 2}) {
    SCOPED_TRACE(workers);
    DataLoader loader(std::make_shared<Probe>(12, 7), {.batch_size = 3, .num_workers = workers});
    EXPECT_EQ(loader.next()->at(0).to_vector<float>(), (std::vector<float>{0, 0, 2, 2, 4, 4}));
    EXPECT_TRUE(loader.next());
    const std::string e = error_of([&] { loader.next(); });
    EXPECT_EQ(e.substr(0, e.rfind(" at ")),
              "DataLoader: example 7 (batch 2 of epoch 0): no such image");
    EXPECT_TRUE(loader.next());  // the next batch is fine
  }
}

TEST(DataLoader, WorkersRunBesideTheCallerWithinThePrefetchBound) {
  auto probe = std::make_shared<Probe>(64, -1, 5);
  DataLoader loader(probe, {.batch_size = 2, .num_workers = 3, .prefetch_factor = 2});
  ASSERT_TRUE(loader.next());
  // The caller takes nothing more: the workers stop after 3 * 2 batches past the one taken.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LE(probe->gets(), (1 + 3 * 2) * 2);
  EXPECT_GE(probe->max_running(), 2);  // more than one get at a time
  for (int b = 1; b < 32; ++b) ASSERT_TRUE(loader.next());
  EXPECT_FALSE(loader.next());
  EXPECT_EQ(probe->gets(), 64);
}

TEST(DataLoader, LazyCallerGetsDataAndTheWaitIsCounted) {
  ModeGuard lazy(Mode::Lazy);
  metrics::reset();
  DataLoader loader(std::make_shared<Probe>(4), {.batch_size = 4, .num_workers = 1});
  std::optional<Example> b = loader.next();
  ASSERT_TRUE(b);
  EXPECT_FALSE(is_pending((*b)[0]));
  EXPECT_EQ((*b)[0].to_vector<float>(), (std::vector<float>{0, 0, 2, 2, 4, 4, 6, 6}));
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_NE(metrics::report().find("data_wait"), std::string::npos);
}

/// A dataset whose get switches modes, as user code may.
class ModeSwitching final : public Dataset {
 public:
  int64_t size() const override { return 8; }
  Example get(int64_t i) const override {
    ModeGuard eager(Mode::Eager);
    if (i == 5) ModeGuard lazy(Mode::Lazy);
    return {full({1}, static_cast<double>(i))};
  }
};

TEST(DataLoader, AWorkersModeSwitchesStayItsOwn) {
  ModeGuard lazy(Mode::Lazy);
  DataLoader loader(std::make_shared<ModeSwitching>(), {.batch_size = 2, .num_workers = 2});
  EXPECT_TRUE(loader.next());
  EXPECT_TRUE(loader.next());
  EXPECT_EQ(mode(), Mode::Lazy);
  const std::string e = error_of([&] { loader.next(); });
  EXPECT_EQ(e.substr(0, e.rfind(" at ")),
            "DataLoader: example 5 (batch 2 of epoch 0): set_mode: a data loader worker runs "
            "eagerly; lazy mode is the stepping thread's");
  EXPECT_EQ(mode(), Mode::Lazy);
}

TEST(DataLoader, TensorDatasetGathersABatchAsGetAndCollateWould) {
  const auto d = numbered(6);
  const std::vector<int64_t> rows{4, 0, 5, 4};
  std::vector<Example> one_by_one;
  for (int64_t i : rows) one_by_one.push_back(d->get(i));
  const std::optional<Example> gathered = d->get_batch(rows);
  ASSERT_TRUE(gathered);
  expect_same(*gathered, default_collate(one_by_one));
  // Through a loader: a bad index names itself and the batch.
  DataLoader loader(d, {.batch_size = 2, .sampler = [](int64_t) {
                          return std::vector<int64_t>{1, 2, 9, 0};
                        }});
  expect_same(*loader.next(), expected(*d, {1, 2}));
  const std::string e = error_of([&] { loader.next(); });
  EXPECT_EQ(e.substr(0, e.rfind(" at ")),
            "DataLoader: batch 1 of epoch 0: TensorDataset: index 9 is out of range for 6 "
            "examples");
}

TEST(DataLoader, BadOptionsAndMismatchedExamples) {
  const auto d = numbered(3);
  const auto reason = [](const std::string& e) { return e.substr(0, e.rfind(" at ")); };
  EXPECT_EQ(reason(error_of([&] { DataLoader(d, {.batch_size = 0}); })),
            "DataLoader: batch_size should be a positive integer value, but got batch_size=0");
  EXPECT_EQ(reason(error_of([&] { DataLoader(d, {.num_workers = -1}); })),
            "DataLoader: num_workers option should be non-negative; use num_workers=0 to disable "
            "multiprocessing. (got -1)");
  const Example a{zeros({2})}, b{zeros({3})};
  const std::vector<Example> both{a, b};
  EXPECT_EQ(reason(error_of([&] { default_collate(both); })),
            "default_collate: stack expects each tensor to be equal size, but got f32[2] at "
            "entry 0 and f32[3] at entry 1 (field 0)");
  EXPECT_EQ(reason(error_of([&] { d->get(3); })),
            "TensorDataset: index 3 is out of range for 3 examples");
}

}  // namespace
}  // namespace lt::data
