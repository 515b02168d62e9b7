#include "runtime/buffer.h"

#include <gtest/gtest.h>
#include <malloc.h>  // mallopt

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lt::rt {
namespace {

// Restores the process's limit (other tests of this binary allocate too).
struct CacheLimit {
  explicit CacheLimit(size_t bytes) : saved(Buffer::cache_limit()) {
    Buffer::set_cache_limit(bytes);
  }
  ~CacheLimit() { Buffer::set_cache_limit(saved); }
  size_t saved;
};

TEST(BufferCache, KeepsFreedBlocksUpToTheLimitAndReusesThem) {
  EXPECT_EQ(Buffer::kDefaultCacheLimit, size_t{1024} << 20);
  CacheLimit limit(0);
  Buffer::set_cache_limit(5 << 20);
  ASSERT_EQ(Buffer::cached_bytes(), 0u);
  void* kept = nullptr;
  {
    auto a = Buffer::allocate(3 << 20);
    auto b = Buffer::allocate(3 << 20);
    kept = b->data();
  }  // b is freed first and kept; a would take the cache over its limit, so it goes back
  EXPECT_EQ(Buffer::cached_bytes(), size_t{3} << 20);
  auto c = Buffer::allocate(3 << 20);
  EXPECT_EQ(c->data(), kept);
  EXPECT_EQ(Buffer::cached_bytes(), 0u);
  c.reset();
  EXPECT_EQ(Buffer::cached_bytes(), size_t{3} << 20);
  Buffer::set_cache_limit(1 << 20);  // lowering the limit frees what is over it
  EXPECT_EQ(Buffer::cached_bytes(), 0u);
}

TEST(BufferCache, ZeroKeepsNothing) {
  CacheLimit limit(0);
  { auto a = Buffer::allocate(1 << 20); }
  EXPECT_EQ(Buffer::cached_bytes(), 0u);
  EXPECT_EQ(Buffer::cache_limit(), 0u);
}

// The VmFlags line of the mapping of this process that holds `p` ("" when none does).
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-') inside = lo <= at && at < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

struct HugePages {
  explicit HugePages(bool on) : saved(Buffer::huge_pages()) { Buffer::set_huge_pages(on); }
  ~HugePages() { Buffer::set_huge_pages(saved); }
  bool saved;
};

TEST(BufferHugePages, LargeBlocksStartOnA2MiBPageAndAskForHugePages) {
  CacheLimit limit(0);  // fresh blocks, not ones another test freed
  // Each block a mapping of its own, so none lands where an earlier test's advice still holds
  // (glibc would otherwise serve blocks below its raised threshold from the heap).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  constexpr size_t kBytes = (size_t{5} << 20) + 4096;  // two whole 2 MiB pages and a tail
  {
    HugePages on(true);
    auto b = Buffer::allocate(kBytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % (size_t{2} << 20), 0u);
    std::memset(b->data(), 1, kBytes);
    // The advice covers the whole pages (flag "hg"), where the kernel has transparent huge
    // pages; the tail past them is never advised.
    if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) {
      EXPECT_NE(vm_flags_at(b->data()).find(" hg"), std::string::npos)
          << vm_flags_at(b->data());
      const auto* tail = static_cast<const char*>(b->data()) + (size_t{4} << 20);
      EXPECT_EQ(vm_flags_at(tail).find(" hg"), std::string::npos) << vm_flags_at(tail);
    }
  }
  {
    HugePages off(false);
    auto b = Buffer::allocate(kBytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 64, 0u);
    EXPECT_EQ(vm_flags_at(b->data()).find(" hg"), std::string::npos) << vm_flags_at(b->data());
  }
  {
    HugePages on(true);  // below one page: no alignment to a page, no advice
    auto b = Buffer::allocate((size_t{2} << 20) - 64);
    EXPECT_EQ(vm_flags_at(b->data()).find(" hg"), std::string::npos) << vm_flags_at(b->data());
  }
}

}  // namespace
}  // namespace lt::rt
