#include "runtime/buffer.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace lt::rt {
namespace {
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};
constexpr size_t kAlign = 64;
}  // namespace

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes) {
  const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = rounded ? std::aligned_alloc(kAlign, rounded) : nullptr;
  if (rounded && !p) throw std::bad_alloc();
  const int64_t now = g_live += static_cast<int64_t>(bytes);
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return std::shared_ptr<Buffer>(new Buffer(p, bytes));
}

Buffer::~Buffer() {
  g_live -= static_cast<int64_t>(bytes_);
  std::free(data_);
}

int64_t Buffer::live_bytes() { return g_live.load(); }
int64_t Buffer::peak_bytes() { return g_peak.load(); }
void Buffer::reset_peak() { g_peak.store(g_live.load()); }

}  // namespace lt::rt
