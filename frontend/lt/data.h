// Data for the trainers: the Dataset interface, Fashion-MNIST loaded from its IDX files, and a
// seeded, deterministic batch order (lt/data_loader.h makes batches on worker threads). Batches
// are gathered on the host into fresh tensors, so every step sees ordinary contiguous inputs in
// eager and lazy mode alike.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lt/tensor.h"

namespace lt::data {

/// One example, or one batch of them: tensors by position, as the tuple a PyTorch dataset's
/// __getitem__ returns.
using Example = std::vector<Tensor>;

/// A map-style dataset, as torch.utils.data.Dataset: examples 0 .. size() - 1. A DataLoader with
/// workers calls get from several threads at once (in eager mode), so get must only read what
/// it shares.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index) const = 0;
  /// Optional, as a PyTorch dataset's __getitems__: examples `indices` stacked as
  /// default_collate stacks them, for a dataset that does that faster than a get per index. A
  /// DataLoader without its own collate uses it; nullopt (the default) has it call get for each.
  virtual std::optional<Example> get_batch(std::span<const int64_t> indices) const {
    (void)indices;
    return std::nullopt;
  }
};

/// An in-memory labelled dataset: inputs [N, ...] and integer labels i64[N]; example i is
/// {images[i], labels[i]} (torch.utils.data.TensorDataset of the two).
struct TensorDataset final : Dataset {
  Tensor images;
  Tensor labels;
  TensorDataset() = default;
  TensorDataset(Tensor images, Tensor labels)
      : images(std::move(images)), labels(std::move(labels)) {}
  int64_t size() const override { return labels.defined() ? labels.size(0) : 0; }
  Example get(int64_t index) const override;
  /// The rows gathered at once (gather_rows), as get and default_collate would give them.
  std::optional<Example> get_batch(std::span<const int64_t> indices) const override;
};

enum class Split { Train, Test };

/// Mean and standard deviation of the Fashion-MNIST training pixels (scaled to [0,1]).
inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;

struct FashionMnistOptions {
  std::string dir = {};    ///< empty: fashion_mnist_dir()
  int64_t limit = -1;      ///< keep the first `limit` examples; -1 keeps all
  bool normalize = false;  ///< (x - mean) / std with the constants above; else x in [0,1]
};

/// The setting LT_FASHION_MNIST_DIR: default /usr/share/datasets/fashion-mnist (Debian's
/// dataset-fashion-mnist package).
std::string fashion_mnist_dir();

/// Images f32[N,784] and labels i64[N] of one split, read from
/// {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]. Throws lt::InputError naming the file at
/// fault.
TensorDataset load_fashion_mnist(Split split, const FashionMnistOptions& options = {});

/// Rows `rows` of x along axis 0, in that order, as a new tensor [rows.size(), ...].
Tensor gather_rows(const Tensor& x, std::span<const int64_t> rows, Loc loc = Loc::current());

/// A permutation of [0, n) fixed by (seed, epoch) alone: the same on every platform and rank.
std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, int64_t epoch);

struct Batch {
  Tensor images;
  Tensor labels;
};

/// Images [N, C, H, W] zero-padded by `pad` on every side of H and W with `fill` (a normalized
/// dataset's black is (0 - mean) / std): Fashion-MNIST's 28x28 to ResNet's 32x32 with pad 2.
Tensor pad_images(const Tensor& images, int64_t pad, double fill = 0, Loc loc = Loc::current());

/// The CIFAR-style augmentation, on the host: each image of [N, C, H, W] f32 is shifted by a
/// random offset in [-pad, pad] on each axis (a crop of the image padded by `pad` with `fill`)
/// and, with `flip`, mirrored left-right with probability 1/2. Image i's draws depend on (seed,
/// epoch, batch, first_row + i) alone: a resumed run augments its batches exactly as the
/// uninterrupted run did, and rows [k, k + m) of a batch given alone with first_row = k are
/// augmented as they are within the whole batch (a replica's share of it).
Tensor random_crop_flip(const Tensor& images, int64_t pad, bool flip, double fill, uint64_t seed,
                        int64_t epoch, int64_t batch, int64_t first_row = 0,
                        Loc loc = Loc::current());

struct BatchOptions {
  int64_t batch_size = 64;
  bool shuffle = true;     ///< else the dataset order
  uint64_t seed = 0;       ///< with the epoch number, fixes the shuffled order
  bool drop_last = false;  ///< drop a final batch smaller than batch_size
};

/// Walks a dataset one epoch at a time:
///   BatchIterator it(train, {.batch_size = 64, .seed = 1});
///   for (int e = 0; e < epochs; ++e) {
///     it.start_epoch(e);
///     while (auto b = it.next()) step(b->images, b->labels);
///   }
class BatchIterator {
 public:
  BatchIterator(TensorDataset dataset, BatchOptions options);

  /// Resets to the first batch of epoch `epoch`, whose order depends on (seed, epoch) only.
  void start_epoch(int64_t epoch);
  /// The next batch of the epoch; nullopt at its end.
  std::optional<Batch> next();
  /// Rows [first, first + count) of the next batch (clipped to it), and only those are gathered:
  /// a replica's share of a global batch, the rows next() and a slice would give at a fraction of
  /// the copying. Advances past the whole batch; nullopt at the epoch's end. A negative first or
  /// count is an lt::Error.
  std::optional<Batch> next_rows(int64_t first, int64_t count, Loc loc = Loc::current());
  /// Batches of the current epoch taken so far.
  int64_t batch_index() const;
  /// Continues the current epoch at batch `batch` (0 <= batch <= num_batches()), as if that many
  /// had been taken: a resumed run picks up the data order where its checkpoint left it.
  void seek(int64_t batch, Loc loc = Loc::current());
  int64_t num_batches() const;
  const std::vector<int64_t>& order() const { return order_; }

 private:
  TensorDataset dataset_;
  BatchOptions options_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0;
};

/// torch.utils.data.DistributedSampler's options. -1: from the job (lt::dist::world_size(),
/// lt::dist::rank()).
struct DistributedSamplerOptions {
  int64_t num_replicas = -1;
  int64_t rank = -1;
  bool shuffle = true;     ///< a permutation fixed by (seed, epoch), the same on every rank
  uint64_t seed = 0;
  bool drop_last = false;  ///< drop the tail that does not split evenly, instead of padding
};

/// Which examples each rank of a data-parallel job reads, as PyTorch's DistributedSampler: the
/// epoch's order (shuffled_indices(n, seed, epoch), or 0..n-1) is padded by repeating its first
/// indices until every rank has the same number (or its tail is dropped with drop_last), and
/// rank r takes positions r, r + W, r + 2W, ... of it. The ranks' shares are disjoint (but for
/// the padding) and together cover the epoch.
///   DistributedSampler sampler(train.size(), {.seed = 1});
///   for (int e = 0; e < epochs; ++e) {
///     sampler.set_epoch(e);
///     for (const std::vector<int64_t>& rows : sampler.batches(32))
///       step(gather_rows(train.images, rows), gather_rows(train.labels, rows));
///   }
class DistributedSampler {
 public:
  /// Throws lt::InputError for a rank outside [0, num_replicas) or a negative size.
  explicit DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options = {});
  /// Sets the epoch, which (with the seed) fixes the order: call it before each epoch, on every
  /// rank, with the same number.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  /// This rank's examples of the current epoch, in order: num_samples() of them.
  std::vector<int64_t> indices() const;
  /// indices() cut into batches of `batch_size` (the last one shorter unless drop_last).
  std::vector<std::vector<int64_t>> batches(int64_t batch_size, bool drop_last = false) const;
  int64_t num_samples() const { return num_samples_; }
  int64_t num_replicas() const { return options_.num_replicas; }
  int64_t rank() const { return options_.rank; }

 private:
  int64_t size_;
  DistributedSamplerOptions options_;
  int64_t num_samples_ = 0;
  int64_t epoch_ = 0;
};

}  // namespace lt::data
