#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
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

// How long an idle worker, and a caller waiting for the others, polls before it sleeps on a
// condition variable (set_spin_us). A step's launches come back to back, and waking a sleeping
// thread (a futex wake and a reschedule, an inter-processor interrupt in a VM) cost tens of
// microseconds per launch on the 2-CPU KVM guest of docs/BENCHMARKS.md, "Threads that poll".
std::atomic<int64_t> g_spin_us{100};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `ready` until it holds or the spin time has passed; returns whether it holds.
template <class F>
bool spin_until(F&& ready) {
  const int64_t us = g_spin_us.load(std::memory_order_relaxed);
  if (us == 0) return ready();
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  for (int i = 0;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return ready();
  }
}

// One job at a time. Each job is its own object (function, range, chunk counter): a worker that
// wakes late still holds the job it woke for, whose chunks are all taken, so it can never run or
// count a chunk of the next job (sharing one counter across jobs let a stale worker take a chunk
// twice and the caller wait forever). Idle threads poll for a while before they sleep;
// a sleeping one is woken through the condition variable, which only then is signalled.
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
    bool wake = false;
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = job;
      generation_.fetch_add(1, std::memory_order_release);
      wake = sleepers_ > 0;
    }
    if (wake) cv_.notify_all();
    drain(*job);
    auto done = [&] { return job->done.load(std::memory_order_acquire) == job->chunks; };
    if (!spin_until(done)) {
      std::unique_lock<std::mutex> lk(m_);
      done_cv_.wait(lk, done);
    }
    std::lock_guard<std::mutex> lk(m_);
    job_.reset();
  }

 private:
  struct Job {
    RangeFn fn = nullptr;
    void* ctx = nullptr;
    int64_t n = 0, chunk_len = 1, chunks = 0;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
  };

  void drain(Job& job) {
    int64_t finished = 0;
    for (int64_t c; (c = job.next.fetch_add(1)) < job.chunks;) {
      const int64_t b = c * job.chunk_len;
      job.fn(job.ctx, b, std::min(job.n, b + job.chunk_len));
      ++finished;
    }
    if (finished == 0) return;
    if (job.done.fetch_add(finished, std::memory_order_acq_rel) + finished < job.chunks) return;
    // The caller may be asleep: notify under the mutex, so it cannot miss this between its
    // check and its wait.
    std::lock_guard<std::mutex> lk(m_);
    done_cv_.notify_all();
  }

  void work() {
    t_in_worker = true;
    uint64_t seen = 0;
    for (;;) {
      spin_until([&] {
        return generation_.load(std::memory_order_acquire) != seen ||
               stopping_.load(std::memory_order_relaxed);
      });
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lk(m_);
        ++sleepers_;
        cv_.wait(lk, [&] { return stopping_ || (generation_ != seen && job_); });
        --sleepers_;
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
  std::atomic<bool> stopping_ = false;
  std::atomic<uint64_t> generation_ = 0;  // written under m_; polled without it
  int sleepers_ = 0;                      // guarded by m_: workers inside cv_.wait
  std::shared_ptr<Job> job_;
};

ThreadPool& pool() {
  static ThreadPool p(default_threads());
  return p;
}

}  // namespace

int num_threads() { return pool().size(); }

void set_num_threads(int n) { pool().resize(std::max(1, n)); }

void set_spin_us(int64_t us) { g_spin_us.store(std::max<int64_t>(0, us)); }
int64_t spin_us() { return g_spin_us.load(); }

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
