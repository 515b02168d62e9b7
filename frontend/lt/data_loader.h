// lt::data::DataLoader, as torch.utils.data.DataLoader: batches of a Dataset in the order a
// sampler gives, collated by stacking each field, made by worker threads ahead of the step that
// takes them. A batch's contents depend on its indices alone, never on the number of workers or
// their timing, so runs repeat bit for bit whatever num_workers is.
//   auto train = std::make_shared<data::TensorDataset>(data::load_fashion_mnist(Split::Train));
//   data::DataLoader loader(train, {.batch_size = 64, .shuffle = true, .seed = 1,
//                                   .num_workers = 2});
//   for (int64_t e = 0; e < epochs; ++e) {
//     loader.set_epoch(e);
//     while (std::optional<data::Example> b = loader.next()) step((*b)[0], (*b)[1]);
//   }
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "lt/data.h"

namespace lt::data {

/// Which examples an epoch reads, in order (DistributedSampler::indices after set_epoch is
/// one: `[&](int64_t e) { s.set_epoch(e); return s.indices(); }`).
using Sampler = std::function<std::vector<int64_t>(int64_t epoch)>;
/// Makes one batch of examples: epoch and batch number given, so that random augmentation can
/// be drawn from them (random_crop_flip) and repeat whatever thread runs it.
using Collate =
    std::function<Example(std::span<const Example> examples, int64_t epoch, int64_t batch)>;

struct DataLoaderOptions {
  int64_t batch_size = 1;
  /// Without a sampler: a permutation fixed by (seed, epoch) (shuffled_indices), or 0..n-1.
  bool shuffle = false;
  uint64_t seed = 0;
  Sampler sampler = {};     ///< replaces shuffle and seed
  bool drop_last = false;   ///< drop a final batch smaller than batch_size
  Collate collate = {};     ///< default: default_collate
  /// Threads that make batches while the caller steps; 0 makes each batch in next().
  int64_t num_workers = 0;
  /// Batches each worker may have ready ahead of the one next() waits for (PyTorch's 2).
  int64_t prefetch_factor = 2;
};

/// The default Collate: field j of the batch is field j of every example stacked along a new
/// dim 0 (PyTorch's default_collate for tensors); examples must agree in their fields' types.
Example default_collate(std::span<const Example> examples, Loc loc = Loc::current());

class DataLoader {
 public:
  /// Throws lt::InputError for a batch_size < 1, num_workers < 0 or prefetch_factor < 1.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {},
             Loc loc = Loc::current());
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// Starts epoch `epoch` at its first batch (workers begin on it at once); the order depends on
  /// (seed, epoch), or on what the sampler returns for it. The constructor starts epoch 0.
  void set_epoch(int64_t epoch);
  /// The epoch's next batch, in order, once made; nullopt at its end. An example whose get (or
  /// a batch whose collate) throws fails this call with an lt::Error naming the example's index
  /// and the batch: the batches before it arrive first. The time this call waits is counted as
  /// "data_wait" and the batch in "data_batches" (lt::metrics, LT_METRICS; LT_PROFILE's report
  /// ends with their totals).
  std::optional<Example> next(Loc loc = Loc::current());
  /// Batches in the current epoch (PyTorch's len(loader)).
  int64_t num_batches() const;
  /// Batches of the current epoch taken so far.
  int64_t batch_index() const;
  /// Continues the current epoch at batch `batch` (0 <= batch <= num_batches()), as if that many
  /// had been taken: a resumed run reads what the uninterrupted one would have.
  void seek(int64_t batch, Loc loc = Loc::current());

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace lt::data
