#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace lt::rt {
namespace {

thread_local bool t_in_worker = false;

int default_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// One job at a time. Each job is its own object (function, range, chunk counter): a worker that
// wakes late still holds the job it woke for, whose chunks are all taken, so it can never run or
// count a chunk of the next job (sharing one counter across jobs let a stale worker take a chunk
// twice and the caller wait forever).
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
    auto job = std::make_shared<Job>();
    job->fn = fn;
    job->ctx = ctx;
    job->n = n;
    job->chunk_len = chunk_len;
    job->chunks = chunks;
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = job;
      ++generation_;
    }
    cv_.notify_all();
    drain(*job);
    std::unique_lock<std::mutex> lk(m_);
    done_cv_.wait(lk, [&] { return job->done == job->chunks; });
    job_.reset();
  }

 private:
  struct Job {
    RangeFn fn = nullptr;
    void* ctx = nullptr;
    int64_t n = 0, chunk_len = 1, chunks = 0;
    std::atomic<int64_t> next{0};
    int64_t done = 0;  // guarded by the pool's mutex
  };

  void drain(Job& job) {
    int64_t finished = 0;
    for (int64_t c; (c = job.next.fetch_add(1)) < job.chunks;) {
      const int64_t b = c * job.chunk_len;
      job.fn(job.ctx, b, std::min(job.n, b + job.chunk_len));
      ++finished;
    }
    if (finished == 0) return;
    std::lock_guard<std::mutex> lk(m_);
    job.done += finished;
    if (job.done == job.chunks) done_cv_.notify_all();
  }

  void work() {
    t_in_worker = true;
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return stopping_ || (generation_ != seen && job_); });
        if (stopping_) return;
        seen = generation_;
        job = job_;
      }
      drain(*job);
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
  std::shared_ptr<Job> job_;
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
