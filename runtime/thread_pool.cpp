#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace lt::rt {
namespace {

thread_local bool t_in_worker = false;

int default_threads() {
  if (const char* s = std::getenv("LT_NUM_THREADS")) {
    int n = std::atoi(s);
    if (n >= 1) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// One job at a time: workers wait for a new generation, take chunk indices from an atomic
// counter, and the caller waits until every chunk is done.
class ThreadPool {
 public:
  explicit ThreadPool(int n) { resize(n); }
  ~ThreadPool() { stop(); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int n) {
    stop();
    stopping_ = false;
    for (int i = 0; i + 1 < n; ++i) workers_.emplace_back([this] { work(); });
  }

  void run(int64_t chunks, int64_t chunk_len, int64_t n, RangeFn fn, void* ctx) {
    std::unique_lock<std::mutex> job_lock(job_mutex_);  // one job at a time
    {
      std::lock_guard<std::mutex> lk(m_);
      fn_ = fn;
      ctx_ = ctx;
      n_ = n;
      chunk_len_ = chunk_len;
      chunks_ = chunks;
      next_.store(0);
      done_ = 0;
      ++generation_;
    }
    cv_.notify_all();
    drain();
    // Wait for the chunks and for every worker to leave drain(), so no worker of this job can
    // touch the next job's state.
    std::unique_lock<std::mutex> lk(m_);
    done_cv_.wait(lk, [&] { return done_ == chunks_ && active_ == 0; });
  }

 private:
  void drain() {
    int64_t finished = 0;
    for (int64_t c; (c = next_.fetch_add(1)) < chunks_;) {
      const int64_t b = c * chunk_len_;
      fn_(ctx_, b, std::min(n_, b + chunk_len_));
      ++finished;
    }
    std::lock_guard<std::mutex> lk(m_);
    done_ += finished;
    if (done_ == chunks_) done_cv_.notify_all();
  }

  void work() {
    t_in_worker = true;
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        ++active_;
      }
      drain();
      std::lock_guard<std::mutex> lk(m_);
      if (--active_ == 0 && done_ == chunks_) done_cv_.notify_all();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  std::vector<std::thread> workers_;
  std::mutex job_mutex_, m_;
  std::condition_variable cv_, done_cv_;
  bool stopping_ = false;
  uint64_t generation_ = 0;
  RangeFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0, chunk_len_ = 1, chunks_ = 0, done_ = 0;
  int active_ = 0;
  std::atomic<int64_t> next_{0};
};

ThreadPool& pool() {
  static ThreadPool p(default_threads());
  return p;
}

}  // namespace

int num_threads() { return pool().size(); }

void set_num_threads(int n) { pool().resize(std::max(1, n)); }

void parallel_for_impl(int64_t n, int64_t grain, RangeFn fn, void* ctx) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int threads = t_in_worker ? 1 : num_threads();
  if (threads == 1 || n <= grain) {
    fn(ctx, 0, n);
    return;
  }
  // A few chunks per thread balance uneven work without much overhead.
  const int64_t max_chunks = std::min<int64_t>(n / grain, threads * 4);
  const int64_t chunk_len = (n + max_chunks - 1) / max_chunks;
  const int64_t chunks = (n + chunk_len - 1) / chunk_len;
  t_in_worker = true;  // a parallel_for inside fn, on this thread, runs inline
  struct Reset {
    ~Reset() { t_in_worker = false; }
  } reset;
  pool().run(chunks, chunk_len, n, fn, ctx);
}

}  // namespace lt::rt
