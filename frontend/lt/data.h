// Data for the trainers: Fashion-MNIST loaded from its IDX files, and a seeded, deterministic
// batch order. Batches are gathered on the host into fresh tensors, so every step sees ordinary
// contiguous inputs in eager and lazy mode alike.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lt/tensor.h"

namespace lt::data {

/// An in-memory labelled dataset: inputs [N, ...] and integer labels i64[N].
struct Dataset {
  Tensor images;
  Tensor labels;
  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
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
Dataset load_fashion_mnist(Split split, const FashionMnistOptions& options = {});

/// Rows `rows` of x along axis 0, in that order, as a new tensor [rows.size(), ...].
Tensor gather_rows(const Tensor& x, std::span<const int64_t> rows, Loc loc = Loc::current());

/// A permutation of [0, n) fixed by (seed, epoch) alone: the same on every platform and rank.
std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, int64_t epoch);

struct Batch {
  Tensor images;
  Tensor labels;
};

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
  BatchIterator(Dataset dataset, BatchOptions options);

  /// Resets to the first batch of epoch `epoch`, whose order depends on (seed, epoch) only.
  void start_epoch(int64_t epoch);
  /// The next batch of the epoch; nullopt at its end.
  std::optional<Batch> next();
  int64_t num_batches() const;
  const std::vector<int64_t>& order() const { return order_; }

 private:
  Dataset dataset_;
  BatchOptions options_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0;
};

}  // namespace lt::data
