// PyTorch's DistributedSampler: an epoch order shared by every rank, padded or cut to a multiple
// of the number of ranks, dealt out round-robin.
#include <fmt/format.h>

#include <numeric>

#include "lt/data.h"
#include "lt/dist.h"

namespace lt::data {

DistributedSampler::DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options)
    : size_(dataset_size), options_(options) {
  if (options_.num_replicas < 0) options_.num_replicas = dist::world_size();
  if (options_.rank < 0) options_.rank = dist::rank();
  if (dataset_size < 0)
    throw InputError(fmt::format("DistributedSampler: dataset size {} is negative", dataset_size));
  if (options_.num_replicas < 1 || options_.rank >= options_.num_replicas)
    throw InputError(fmt::format("DistributedSampler: rank {} is not in [0, {})", options_.rank,
                                 options_.num_replicas));
  const int64_t w = options_.num_replicas;
  num_samples_ = options_.drop_last ? size_ / w : (size_ + w - 1) / w;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> order;
  if (options_.shuffle) {
    order = shuffled_indices(size_, options_.seed, epoch_);
  } else {
    order.resize(static_cast<size_t>(size_));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  const int64_t w = options_.num_replicas, total = num_samples_ * w;
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(num_samples_));
  // Position p of the padded order is order[p mod n]: the first indices repeat, as often as
  // needed (PyTorch's padding when the dataset is smaller than the number of ranks).
  for (int64_t p = options_.rank; p < total; p += w)
    mine.push_back(order[static_cast<size_t>(p % size_)]);
  return mine;
}

std::vector<std::vector<int64_t>> DistributedSampler::batches(int64_t batch_size,
                                                              bool drop_last) const {
  if (batch_size < 1)
    throw InputError(fmt::format("DistributedSampler: batch size {} must be >= 1", batch_size));
  const std::vector<int64_t> all = indices();
  std::vector<std::vector<int64_t>> out;
  for (size_t b = 0; b < all.size(); b += static_cast<size_t>(batch_size)) {
    const size_t e = std::min(all.size(), b + static_cast<size_t>(batch_size));
    if (drop_last && e - b < static_cast<size_t>(batch_size)) break;
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(b),
                     all.begin() + static_cast<std::ptrdiff_t>(e));
  }
  return out;
}

}  // namespace lt::data
