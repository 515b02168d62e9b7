// The allocator of the objects every traced op makes (lazy nodes, tensor handles, autograd
// nodes, and their short input, output and result-type arrays): std::allocate_shared and
// vectors use it. A lazy step makes ~1,500 of each and frees them together at the next
// mark_step(); glibc keeps only 7 freed blocks of a size per thread for reuse, so nearly every
// allocation would take malloc's slow path (_int_malloc), a large part of tracing a step.
// Here each thread keeps the blocks of a type (and array length) it freed, up to a
// cap, and hands them out again before asking malloc. Blocks come from ::operator new one at a
// time and go back there past the cap or at thread exit, so a block freed on another thread than
// the one that made it is only ever held by one list.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace lt {

template <class T>
class RecyclingAllocator {
 public:
  using value_type = T;

  RecyclingAllocator() = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U>&) {}  // NOLINT: rebinding is implicit

  T* allocate(std::size_t n) {
    if (std::vector<void*>* blocks = free_blocks(n); blocks && !blocks->empty()) {
      void* p = blocks->back();
      blocks->pop_back();
      return static_cast<T*>(p);
    }
    return std::allocator<T>().allocate(n);
  }

  void deallocate(T* p, std::size_t n) {
    if (std::vector<void*>* blocks = free_blocks(n); blocks && blocks->size() < kCap) {
      blocks->push_back(p);
      return;
    }
    std::allocator<T>().deallocate(p, n);
  }

  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const {
    return true;
  }

 private:
  // Arrays of up to kMaxN objects are recycled too (an op's inputs and outputs, in vectors with
  // this allocator), each length in its own list.
  static constexpr std::size_t kMaxN = 4;
  // Enough for the nodes of a few large steps; past it blocks go straight back to malloc.
  static constexpr std::size_t kCap = 1 << 16;

  struct FreeBlocks {
    std::array<std::vector<void*>, kMaxN> by_n;
    ~FreeBlocks() {
      gone() = true;  // objects freed later in the thread's exit go straight to malloc
      for (std::size_t i = 0; i < kMaxN; ++i)
        for (void* p : by_n[i]) std::allocator<T>().deallocate(static_cast<T*>(p), i + 1);
    }
  };

  // A bool stays readable through the thread's exit, after the lists' destructor has run.
  static bool& gone() {
    thread_local bool g = false;
    return g;
  }

  /// This thread's list of arrays of n, or null: n out of range, or the lists destroyed.
  static std::vector<void*>* free_blocks(std::size_t n) {
    if (n == 0 || n > kMaxN || gone()) return nullptr;
    thread_local FreeBlocks lists;
    return &lists.by_n[n - 1];
  }
};

/// A vector whose small buffers (up to 4 elements) are recycled per thread.
template <class T>
using RecycledVector = std::vector<T, RecyclingAllocator<T>>;

/// std::make_shared<T>(args...) with the blocks recycled per thread.
template <class T, class... Args>
std::shared_ptr<T> make_recycled(Args&&... args) {
  return std::allocate_shared<T>(RecyclingAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace lt
