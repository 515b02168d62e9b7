// The data loader's workers: each takes the next batch number not yet being made (no further
// than num_workers * prefetch_factor ahead of the caller), makes it eagerly with autograd off,
// and files the result, or the error, under that number; next() hands them out in order. A new
// epoch or a seek starts a new generation, and results of an older one are dropped.
#include "lt/data_loader.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "lt/autograd.h"
#include "lt/data_worker.h"
#include "lt/metrics.h"

namespace lt::data {

namespace {

/// Row i of x (dim 0 dropped), copied on the host.
Tensor row(const Tensor& x, int64_t i) {
  refresh(x);
  LT_CHECK(x.impl()->buffer, "TensorDataset: {} holds no data", type_str(x.type()));
  Shape shape(x.shape().begin() + 1, x.shape().end());
  auto out = make_impl({x.dtype(), shape});
  const size_t bytes = out->type.bytes();
  std::memcpy(out->data(), static_cast<const uint8_t*>(x.impl()->data()) + i * bytes, bytes);
  return Tensor(std::move(out));
}

struct Made {
  std::optional<Example> batch;
  std::exception_ptr error;
};

Made failed(const std::string& what) {
  return {std::nullopt, std::make_exception_ptr(InputError("DataLoader: " + what))};
}

}  // namespace

WorkerScope::WorkerScope() { lazy::set_eager_thread(true); }
WorkerScope::~WorkerScope() { lazy::set_eager_thread(false); }

Example TensorDataset::get(int64_t index) const {
  if (index < 0 || index >= size())
    throw InputError(fmt::format("TensorDataset: index {} is out of range for {} examples", index,
                                 size()));
  if (images.impl()->pending() || labels.impl()->pending())
    throw Error("TensorDataset: its tensors have pending lazy work; call lt::mark_step() first");
  return {row(images, index), row(labels, index)};
}

std::optional<Example> TensorDataset::get_batch(std::span<const int64_t> indices) const {
  for (int64_t i : indices)
    if (i < 0 || i >= size())
      throw InputError(fmt::format("TensorDataset: index {} is out of range for {} examples", i,
                                   size()));
  if (images.impl()->pending() || labels.impl()->pending())
    throw Error("TensorDataset: its tensors have pending lazy work; call lt::mark_step() first");
  refresh(images);
  refresh(labels);
  return Example{gather_rows(images, indices), gather_rows(labels, indices)};
}

Example default_collate(std::span<const Example> examples, Loc loc) {
  if (examples.empty()) return {};
  const size_t fields = examples[0].size();
  Example out;
  for (size_t j = 0; j < fields; ++j) {
    const Tensor& first = examples[0][j];
    for (size_t k = 0; k < examples.size(); ++k) {
      if (examples[k].size() != fields)
        throw Error(fmt::format("default_collate: example {} has {} fields, example 0 has {} at {}",
                                k, examples[k].size(), fields, location_str(loc)));
      const Tensor& t = examples[k][j];
      if (!t.defined() || t.type() != first.type())
        throw Error(fmt::format("default_collate: stack expects each tensor to be equal size, "
                                "but got {} at entry 0 and {} at entry {} (field {}) at {}",
                                type_str(first.type()),
                                t.defined() ? type_str(t.type()) : "undefined", k, j,
                                location_str(loc)));
    }
    Shape shape{static_cast<int64_t>(examples.size())};
    shape.insert(shape.end(), first.shape().begin(), first.shape().end());
    auto batch = make_impl({first.dtype(), shape});
    const size_t bytes = first.type().bytes();
    for (size_t k = 0; k < examples.size(); ++k) {
      const Tensor& t = examples[k][j];
      refresh(t);
      if (t.impl()->pending() || !t.impl()->buffer)
        throw Error(fmt::format("default_collate: field {} of example {} holds no data (lazy work "
                                "pending?) at {}",
                                j, k, location_str(loc)));
      std::memcpy(static_cast<uint8_t*>(batch->data()) + k * bytes, t.impl()->data(), bytes);
    }
    out.push_back(Tensor(std::move(batch)));
  }
  return out;
}

struct DataLoader::State {
  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions o;

  std::mutex m;
  std::condition_variable made_cv, room_cv;
  int64_t epoch = 0;
  std::vector<std::vector<int64_t>> batches;
  int64_t taken = 0;         // batches next() has handed out
  int64_t next_to_make = 0;  // the first batch no worker has taken up
  uint64_t generation = 0;
  std::map<int64_t, Made> ready;
  bool stop = false;
  std::vector<std::thread> workers;

  std::vector<std::vector<int64_t>> plan(int64_t e) const {
    std::vector<int64_t> order;
    if (o.sampler) {
      order = o.sampler(e);
    } else if (o.shuffle) {
      order = shuffled_indices(dataset->size(), o.seed, e);
    } else {
      order.resize(static_cast<size_t>(dataset->size()));
      std::iota(order.begin(), order.end(), int64_t{0});
    }
    std::vector<std::vector<int64_t>> out;
    const auto n = static_cast<int64_t>(order.size());
    for (int64_t start = 0; start < n; start += o.batch_size) {
      const int64_t stop_at = std::min(n, start + o.batch_size);
      if (o.drop_last && stop_at - start < o.batch_size) break;
      out.emplace_back(order.begin() + start, order.begin() + stop_at);
    }
    return out;
  }

  Made make(int64_t b, const std::vector<int64_t>& indices, int64_t e) const {
    WorkerScope scope;
    if (!o.collate) {
      try {
        if (std::optional<Example> batch = dataset->get_batch(indices))
          return {std::move(batch), nullptr};
      } catch (const std::exception& err) {
        return failed(fmt::format("batch {} of epoch {}: {}", b, e, err.what()));
      }
    }
    std::vector<Example> examples;
    examples.reserve(indices.size());
    for (int64_t i : indices) {
      try {
        examples.push_back(dataset->get(i));
      } catch (const std::exception& err) {
        return failed(fmt::format("example {} (batch {} of epoch {}): {}", i, b, e, err.what()));
      } catch (...) {
        return failed(fmt::format("example {} (batch {} of epoch {}): an exception that is not "
                                  "a std::exception",
                                  i, b, e));
      }
    }
    try {
      return {o.collate ? o.collate(examples, e, b) : default_collate(examples), nullptr};
    } catch (const std::exception& err) {
      return failed(fmt::format("batch {} of epoch {}: {}", b, e, err.what()));
    } catch (...) {
      return failed(fmt::format("batch {} of epoch {}: an exception that is not a "
                                "std::exception",
                                b, e));
    }
  }

  void work() {
    std::unique_lock<std::mutex> lk(m);
    while (!stop) {
      const int64_t ahead = o.num_workers * o.prefetch_factor;
      if (next_to_make < static_cast<int64_t>(batches.size()) && next_to_make < taken + ahead) {
        const int64_t b = next_to_make++;
        const uint64_t gen = generation;
        const int64_t e = epoch;
        const std::vector<int64_t> indices = batches[b];
        lk.unlock();
        Made made = make(b, indices, e);
        lk.lock();
        if (gen == generation) {
          ready[b] = std::move(made);
          made_cv.notify_all();
        }
      } else {
        room_cv.wait(lk);
      }
    }
  }

  /// Drops what the workers made and points them at batch `at` of the current plan.
  void restart_at(int64_t at) {
    ++generation;
    taken = next_to_make = at;
    ready.clear();
    room_cv.notify_all();
  }
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options,
                       Loc loc)
    : s_(std::make_unique<State>()) {
  if (!dataset)
    throw InputError(fmt::format("DataLoader: no dataset at {}", location_str(loc)));
  if (options.batch_size < 1)
    throw InputError(fmt::format("DataLoader: batch_size should be a positive integer value, "
                                 "but got batch_size={} at {}",
                                 options.batch_size, location_str(loc)));
  if (options.num_workers < 0)
    throw InputError(fmt::format("DataLoader: num_workers option should be non-negative; use "
                                 "num_workers=0 to disable multiprocessing. (got {}) at {}",
                                 options.num_workers, location_str(loc)));
  if (options.prefetch_factor < 1)
    throw InputError(fmt::format("DataLoader: prefetch_factor should be positive, got {} at {}",
                                 options.prefetch_factor, location_str(loc)));
  s_->dataset = std::move(dataset);
  s_->o = std::move(options);
  s_->batches = s_->plan(0);
  for (int64_t w = 0; w < s_->o.num_workers; ++w) s_->workers.emplace_back([s = s_.get()] {
    s->work();
  });
}

DataLoader::~DataLoader() {
  {
    std::lock_guard<std::mutex> lk(s_->m);
    s_->stop = true;
    s_->room_cv.notify_all();
  }
  for (std::thread& t : s_->workers) t.join();
}

void DataLoader::set_epoch(int64_t epoch) {
  std::vector<std::vector<int64_t>> batches = s_->plan(epoch);
  std::lock_guard<std::mutex> lk(s_->m);
  s_->epoch = epoch;
  s_->batches = std::move(batches);
  s_->restart_at(0);
}

std::optional<Example> DataLoader::next(Loc loc) {
  State& s = *s_;
  const auto start = std::chrono::steady_clock::now();
  Made made;
  {
    std::unique_lock<std::mutex> lk(s.m);
    if (s.taken >= static_cast<int64_t>(s.batches.size())) return std::nullopt;
    const int64_t b = s.taken;
    if (s.workers.empty()) {
      const std::vector<int64_t> indices = s.batches[b];
      lk.unlock();
      made = s.make(b, indices, s.epoch);
      lk.lock();
    } else {
      s.made_cv.wait(lk, [&] { return s.ready.count(b) > 0; });
      made = std::move(s.ready.at(b));
      s.ready.erase(b);
    }
    ++s.taken;
    s.room_cv.notify_all();
  }
  metrics::count("data_batches");
  metrics::time_ns("data_wait", std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - start)
                                    .count());
  if (made.error) {
    try {
      std::rethrow_exception(made.error);
    } catch (const Error& e) {
      throw InputError(fmt::format("{} at {}", e.what(), location_str(loc)));
    }
  }
  return std::move(made.batch);
}

int64_t DataLoader::num_batches() const {
  std::lock_guard<std::mutex> lk(s_->m);
  return static_cast<int64_t>(s_->batches.size());
}

int64_t DataLoader::batch_index() const {
  std::lock_guard<std::mutex> lk(s_->m);
  return s_->taken;
}

void DataLoader::seek(int64_t batch, Loc loc) {
  const int64_t n = num_batches();
  if (batch < 0 || batch > n)
    throw InputError(fmt::format("DataLoader: seek to batch {} of an epoch of {} at {}", batch, n,
                                 location_str(loc)));
  std::lock_guard<std::mutex> lk(s_->m);
  s_->restart_at(batch);
}

}  // namespace lt::data
