#include "runtime/buffer.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "ir/recycling_allocator.h"

namespace lt::rt {
namespace {
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};
constexpr size_t kAlign = 64;

// Freed blocks are kept by exact size for reuse: a training step allocates the same sizes every
// step, and large blocks would otherwise go back to the kernel (munmap) and page-fault again.
// Bounded by Buffer::set_cache_limit (the frontend passes LT_BUFFER_CACHE_MB down).
class BlockCache {
 public:
  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lk(m_);
    auto it = free_.find(rounded);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= rounded;
    return p;
  }
  void set_cap(size_t bytes) {
    std::lock_guard<std::mutex> lk(m_);
    cap_ = bytes;
    for (auto& [size, blocks] : free_)
      while (cached_ > cap_ && !blocks.empty()) {
        std::free(blocks.back());
        blocks.pop_back();
        cached_ -= size;
      }
  }
  size_t cap() {
    std::lock_guard<std::mutex> lk(m_);
    return cap_;
  }
  size_t cached() {
    std::lock_guard<std::mutex> lk(m_);
    return cached_;
  }
  bool give(void* p, size_t rounded) {
    std::lock_guard<std::mutex> lk(m_);
    if (cached_ + rounded > cap_) return false;
    free_[rounded].push_back(p);
    cached_ += rounded;
    return true;
  }

 private:
  std::mutex m_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
  size_t cap_ = Buffer::kDefaultCacheLimit;
};

BlockCache& block_cache() {
  static BlockCache* c = new BlockCache;  // never destroyed: buffers may die during static exit
  return *c;
}

size_t rounded_size(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Blocks that can hold a 2 MiB page start on one and ask the kernel for transparent huge pages
// (where /sys/kernel/mm/transparent_hugepage/enabled says "madvise", nothing else does): a kernel
// reading rows at random from a large block, the data loader's gather from the dataset above all,
// then misses the TLB once per 2 MiB instead of once per 4 KiB, and on a virtual machine each
// miss is a two-level page walk. Only whole 2 MiB ranges of the block are advised, so no page
// reaches past its end; the unused head of the alignment is address space, never touched.
constexpr size_t kHugePage = size_t{2} << 20;
std::atomic<bool> g_huge_pages{true};

void* allocate_block(size_t rounded) {
  void* p = nullptr;
  if (rounded < kHugePage || !g_huge_pages.load(std::memory_order_relaxed))
    return std::aligned_alloc(kAlign, rounded);
  if (posix_memalign(&p, kHugePage, rounded) != 0) return nullptr;
  // Advice only: a kernel without huge pages refuses it, and the block works as it is.
  (void)madvise(p, rounded / kHugePage * kHugePage, MADV_HUGEPAGE);
  return p;
}
}  // namespace

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes) {
  const size_t rounded = bytes > kInlineBytes ? rounded_size(bytes) : 0;
  void* p = rounded ? block_cache().take(rounded) : nullptr;
  if (rounded && !p) p = allocate_block(rounded);
  if (rounded && !p) throw std::bad_alloc();
  const int64_t now = g_live += static_cast<int64_t>(bytes);
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return std::allocate_shared<Buffer>(RecyclingAllocator<Buffer>(), Made{}, p, bytes);
}

std::shared_ptr<Buffer> Buffer::wrap(void* data, size_t bytes, std::shared_ptr<void> owner) {
  auto b = std::allocate_shared<Buffer>(RecyclingAllocator<Buffer>(), Made{}, data, bytes);
  b->external_ = true;
  b->owner_ = std::move(owner);
  return b;
}

Buffer::~Buffer() {
  if (external_) return;  // owner_ lets go of the memory
  g_live -= static_cast<int64_t>(bytes_);
  if (data_ == inline_) return;
  if (!block_cache().give(data_, rounded_size(bytes_))) std::free(data_);
}

void Buffer::set_cache_limit(size_t bytes) { block_cache().set_cap(bytes); }
void Buffer::set_huge_pages(bool on) { g_huge_pages.store(on, std::memory_order_relaxed); }
bool Buffer::huge_pages() { return g_huge_pages.load(std::memory_order_relaxed); }
size_t Buffer::cache_limit() { return block_cache().cap(); }
size_t Buffer::cached_bytes() { return block_cache().cached(); }

int64_t Buffer::live_bytes() { return g_live.load(); }
int64_t Buffer::peak_bytes() { return g_peak.load(); }
void Buffer::reset_peak() { g_peak.store(g_live.load()); }

}  // namespace lt::rt
