// Batching: a deterministic shuffle and a host-side row gather.
#include <fmt/format.h>

#include <cstring>
#include <numeric>

#include "frontend/data/splitmix.h"
#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "lt/data.h"

namespace lt::data {

std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(order.begin(), order.end(), int64_t{0});
  uint64_t state = seed;
  state = splitmix64(state) ^ static_cast<uint64_t>(epoch);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(below(state, static_cast<uint64_t>(i + 1)));
    std::swap(order[i], order[j]);
  }
  return order;
}

Tensor gather_rows(const Tensor& x, std::span<const int64_t> rows, Loc loc) {
  if (x.rank() < 1)
    throw Error(fmt::format("gather_rows: needs a tensor of rank >= 1, got {} at {}",
                            type_str(x.type()), location_str(loc)));
  // The rows are copied on the host, so a pending lazy value runs first (a counted sync); the
  // result is device data, which lazy graphs read as a parameter like any input batch.
  if (x.impl()->pending()) lazy::sync(x, "gather_rows", loc);
  LT_CHECK(x.impl()->buffer, "gather_rows: {} holds no data", type_str(x.type()));
  const int64_t n = x.size(0);
  Shape shape = x.shape();
  shape[0] = static_cast<int64_t>(rows.size());
  auto out = make_impl({x.dtype(), shape});
  const size_t row_bytes = n == 0 ? 0 : x.type().bytes() / static_cast<size_t>(n);
  const auto* src = static_cast<const uint8_t*>(x.impl()->data());
  auto* dst = static_cast<uint8_t*>(out->data());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= n)
      throw Error(fmt::format("gather_rows: row {} out of range for {} at {}", rows[i],
                              type_str(x.type()), location_str(loc)));
    std::memcpy(dst + i * row_bytes, src + rows[i] * row_bytes, row_bytes);
  }
  return Tensor(std::move(out));
}

BatchIterator::BatchIterator(TensorDataset dataset, BatchOptions options)
    : dataset_(std::move(dataset)), options_(options) {
  if (options_.batch_size < 1)
    throw Error(fmt::format("BatchIterator: batch_size must be >= 1, got {}", options_.batch_size));
  if (dataset_.images.defined() && dataset_.images.size(0) != dataset_.size())
    throw Error(fmt::format("BatchIterator: {} inputs but {} labels",
                            type_str(dataset_.images.type()), type_str(dataset_.labels.type())));
  start_epoch(0);
}

void BatchIterator::start_epoch(int64_t epoch) {
  const int64_t n = dataset_.size();
  if (options_.shuffle) {
    order_ = shuffled_indices(n, options_.seed, epoch);
  } else {
    order_.resize(static_cast<size_t>(n));
    std::iota(order_.begin(), order_.end(), int64_t{0});
  }
  pos_ = 0;
}

int64_t BatchIterator::num_batches() const {
  const int64_t n = dataset_.size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

int64_t BatchIterator::batch_index() const {
  return (pos_ + options_.batch_size - 1) / options_.batch_size;
}

void BatchIterator::seek(int64_t batch, Loc loc) {
  if (batch < 0 || batch > num_batches())
    throw Error(fmt::format("BatchIterator::seek: batch {} is not in [0, {}] at {}", batch,
                            num_batches(), location_str(loc)));
  pos_ = std::min(batch * options_.batch_size, static_cast<int64_t>(order_.size()));
}

std::optional<Batch> BatchIterator::next() { return next_rows(0, options_.batch_size); }

std::optional<Batch> BatchIterator::next_rows(int64_t first, int64_t count, Loc loc) {
  if (first < 0 || count < 0)
    throw Error(fmt::format("BatchIterator::next_rows: rows [{}, {} + {}) of a batch at {}",
                            first, first, count, location_str(loc)));
  const int64_t n = static_cast<int64_t>(order_.size());
  const int64_t len = std::min(options_.batch_size, n - pos_);
  if (len <= 0 || (options_.drop_last && len < options_.batch_size)) return std::nullopt;
  const int64_t begin = std::min(first, len), end = begin + std::min(count, len - begin);
  const std::span<const int64_t> rows(order_.data() + pos_ + begin,
                                      static_cast<size_t>(end - begin));
  pos_ += len;
  return Batch{gather_rows(dataset_.images, rows), gather_rows(dataset_.labels, rows)};
}

}  // namespace lt::data
