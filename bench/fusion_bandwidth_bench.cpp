// Bandwidth of a fused elementwise chain: 8 ops over a 64 MiB f32 tensor, traced lazily and run
// as one compiled loop kernel (one read and one write of 64 MiB), against a plain copy of the
// same bytes (memcpy, split over the same thread pool) and the chain run eagerly (8 passes).
// Usage: lt_bench_fusion_bandwidth [reps (20)] [MiB (64)]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "lt/threads.h"
#include "runtime/thread_pool.h"
#include "tools/cli.h"

namespace {

using namespace lt;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double median_ms(int reps, F f) {
  f();  // warm: page faults, compilation, buffer cache
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  return median(ms);
}

/// Eight elementwise ops, none of which the canonicalizer removes.
Tensor chain(const Tensor& x) {
  Tensor t = x * 1.5;
  t = t + 0.25;
  t = relu(t);
  t = t * t;
  t = t - 0.5;
  t = abs(t);
  t = maximum(t, full({}, 0.125, DType::F32));
  return neg(t);
}

void bench(int reps, int64_t mib) {
  const int64_t n = mib * (1 << 20) / 4;
  manual_seed(0);
  const Tensor x = rand({n});
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  fmt::print("fused 8-op elementwise chain over {} MiB f32 ({} elements), median of {} runs\n",
             mib, n, reps);
  fmt::print("{:>8} {:>10} {:>10} {:>10} {:>12} {:>12} {:>14}\n", "threads", "copy ms",
             "lazy ms", "eager ms", "copy GB/s", "lazy GB/s", "lazy/copy BW");
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const double copy_ms = median_ms(reps, [&] {
      rt::parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
        std::memcpy(dst.data() + b, src.data() + b, (e - b) * sizeof(float));
      });
    });
    double lazy_ms = 0;
    {
      ModeGuard lazy(Mode::Lazy);
      lazy_ms = median_ms(reps, [&] {
        Tensor y = chain(x);
        mark_step();
      });
    }
    const double eager_ms = median_ms(reps, [&] { Tensor y = chain(x); });
    const double bytes = 2.0 * static_cast<double>(n) * 4;  // one read, one write
    fmt::print("{:>8} {:>10.2f} {:>10.2f} {:>10.2f} {:>12.1f} {:>12.1f} {:>13.0f}%\n", threads,
               copy_ms, lazy_ms, eager_ms, bytes / copy_ms / 1e6, bytes / lazy_ms / 1e6,
               100.0 * copy_ms / lazy_ms);
  }
  fmt::print("loop kernels compiled: {}\n", metrics::counter("loop_kernels"));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Bandwidth of a fused 8-op elementwise chain against a plain copy and eager mode"};
  int reps = 20;
  int64_t mib = 64;
  app.add_option("reps", reps, "Timed runs (the median is printed)")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(1));
  app.add_option("mib", mib, "Tensor size in MiB")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(1));
  return lt::cli::run(app, argc, argv, [&] { bench(reps, mib); });
}
