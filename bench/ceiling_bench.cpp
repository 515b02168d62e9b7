// What this host gives two ranks before any training code runs: each rank does a fixed amount
// of work per step and the ranks meet at a barrier after it, as synchronous data-parallel steps
// do, with no data exchanged. `fma` is a loop of vector multiply-adds in registers (no memory
// traffic: the core's own speed, which a second busy core changes only through the host, e.g.
// a hypervisor or the clock); `stream` adds two 32 MiB arrays into a third, in vectors (DRAM
// bandwidth, which the cores share). 2 x (1-rank ms) / (2-rank ms) is how far that kind of work
// alone scales in the window; bench/replicas_scaling.sh prints both beside the trainers.
// Run it as a job: lt-launch -n 1|2 -t 1 -- build/bench/lt_bench_ceiling fma|stream [steps (60)]
// It prints a trainer's summary line ("done: ... median X ms/step ...") from rank 0.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "lt/dist.h"
#include "tools/cli.h"

namespace {

using Clock = std::chrono::steady_clock;
using Vec = float __attribute__((vector_size(64)));

// About 20 ms of multiply-adds per step at 3-4 GHz (a CNN step's length here): 8 independent
// chains, so the loop is bound by the FMA units' throughput rather than by one chain's latency.
float fma_step() {
  constexpr long kIters = 9'000'000;
  static volatile float scale = 0.9999999f, shift = 1e-7f;  // not constants to fold
  const Vec b = Vec{} + scale, c = Vec{} + shift;
  Vec a0 = Vec{} + 1.0f, a1 = a0 + 1e-7f, a2 = a1 + 1e-7f, a3 = a2 + 1e-7f, a4 = a3 + 1e-7f,
      a5 = a4 + 1e-7f, a6 = a5 + 1e-7f, a7 = a6 + 1e-7f;
  for (long it = 0; it < kIters; ++it) {
    a0 = a0 * b + c, a1 = a1 * b + c, a2 = a2 * b + c, a3 = a3 * b + c;
    a4 = a4 * b + c, a5 = a5 * b + c, a6 = a6 * b + c, a7 = a7 * b + c;
  }
  const Vec sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  float s = 0;
  for (int j = 0; j < 16; ++j) s += sum[j];
  return s;
}

// a = b + c over three 32 MiB arrays, three times this host's L3: every step goes to DRAM. In
// whole vectors, as the memory-bound kernels run, so that the loop is bound by the bandwidth.
float stream_step(std::vector<Vec>& a, const std::vector<Vec>& b, const std::vector<Vec>& c) {
  const size_t n = a.size();
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + c[i];
  return a[n / 2][0];
}

void bench(const std::string& kind, int steps) {
  constexpr size_t kStreamVecs = (size_t{32} << 20) / sizeof(Vec);
  std::vector<Vec> a, b, c;
  if (kind == "stream") {
    a.assign(kStreamVecs, Vec{});
    b.assign(kStreamVecs, Vec{} + 1.0f);
    c.assign(kStreamVecs, Vec{} + 2.0f);
  }
  auto step = [&] { return kind == "fma" ? fma_step() : stream_step(a, b, c); };
  volatile float sink = step();  // warm: page faults, the clock
  lt::dist::barrier();
  std::vector<double> ms;
  const auto begin = Clock::now();
  auto t = begin;
  for (int i = 0; i < steps; ++i) {
    sink = step();
    lt::dist::barrier();
    const auto now = Clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  }
  (void)sink;
  std::sort(ms.begin(), ms.end());
  if (lt::dist::rank() == 0)
    fmt::print("done: {} steps of {} on {} rank(s) in {:.1f} s, median {:.3f} ms/step = {:.1f} "
               "steps/s\n",
               steps, kind, lt::dist::world_size(),
               std::chrono::duration<double>(t - begin).count(), ms[ms.size() / 2],
               1e3 / ms[ms.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Times a fixed amount of work per rank between barriers: the host's own 2-rank ceiling."};
  std::string kind;
  int steps = 60;
  app.add_option("kind", kind, "fma (the cores' speed) or stream (DRAM bandwidth)")
      ->required()
      ->check(CLI::IsMember({"fma", "stream"}));
  app.add_option("steps", steps, "steps to time")
      ->check(lt::cli::integer_at_least(1))
      ->capture_default_str();
  return lt::cli::run(app, argc, argv, [&] {
    lt::dist::init();
    bench(kind, steps);
  });
}
