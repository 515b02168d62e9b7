// What every oneDNN primitive call of the kernels shares: the CPU engine, a stream and scratch
// memory per thread, and the one-OpenMP-thread policy. Kernel-internal (includes oneDNN).
//
// Threading: Debian's oneDNN parallelizes with OpenMP. A primitive fixes its thread count when it
// is created (omp_get_max_threads of the creating thread), and its helpers read the calling
// thread's count. Our pool splits the work into one block per thread, and each thread that
// creates or calls a primitive is set to one OpenMP thread, so no OpenMP team ever runs beside
// the pool. A 2-thread OpenMP primitive alone is about as fast as the pool's split, faster on
// small products, but its idle thread spins after each call and takes a core from the pool's
// next parallel work, which then runs at 1-thread speed.
#pragma once
#include <cstddef>
#include <dnnl.hpp>
#include <map>
#include <memory>
#include <mutex>

namespace lt::rt::onednn {

const dnnl::engine& cpu_engine();

/// This thread's stream (in-order, on cpu_engine).
dnnl::stream& thread_stream();

/// Sets the calling thread to one OpenMP thread, once per thread (see the top of this file). Call
/// it before creating or running a primitive.
void use_one_omp_thread();

/// Scratch memory for this thread's primitive runs, grown as needed, 64-byte aligned. Valid until
/// the thread's next call.
void* scratchpad(size_t bytes);

/// Primitives made so far, by key, shared between threads; `make(key)` runs outside the lock, so
/// other keys need not wait (oneDNN JIT-compiles a new primitive), and its null result is kept
/// too (a key oneDNN has no kernel for). A training run uses a few dozen keys; a program that
/// goes through more than kCapacity starts over.
template <class Key, class Value>
class PrimitiveCache {
 public:
  template <class Make>
  std::shared_ptr<const Value> get(const Key& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = map_.find(key); it != map_.end()) return it->second;
    }
    std::shared_ptr<const Value> made = make(key);
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kCapacity) map_.clear();
    return map_.emplace(key, std::move(made)).first->second;
  }

 private:
  static constexpr size_t kCapacity = 1024;
  std::mutex mu_;
  std::map<Key, std::shared_ptr<const Value>> map_;
};

}  // namespace lt::rt::onednn
