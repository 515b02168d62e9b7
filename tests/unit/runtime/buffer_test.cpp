#include "runtime/buffer.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lt::rt
