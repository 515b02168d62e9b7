// One all-reduce of f32 sums across the ranks, timed alone: the blocking call against the
// nonblocking start + wait that a step's gradient buckets use, at the bucket sizes of the
// trainers (the MLP's two buckets, the 256 KiB first bucket, the 1 MiB ones); the started ones
// go through the host's shared segment unless LT_SHM_ALL_REDUCE=0, written there with the stores
// LT_SHM_STORES picks (docs/DISTRIBUTED.md). Every rank waits at a barrier before each call, so
// that a figure is the collective's own time.
// Run it as a job: lt-launch -n 2 -t 1 -- build/bench/lt_bench_allreduce [reps (400)]
// (lt-launch's --mca flags pick OpenMPI's algorithms: docs/BENCHMARKS.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <vector>

#include "lt/dist.h"
#include "runtime/comm/communicator.h"
#include "tools/cli.h"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double median_us(int reps, F f) {
  lt::rt::comm::Communicator& c = lt::rt::comm::world();
  f();  // warm: the transport's buffers, the schedule
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    c.barrier();
    const auto t = Clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

void bench(int reps) {
  lt::rt::comm::Communicator& c = lt::rt::comm::world();
  if (c.rank() == 0)
    fmt::print("f32 sum over {} ranks ({}), median of {} calls\n{:>10} {:>10} {:>14} {:>17}\n",
               c.size(), c.name(), reps, "floats", "KiB", "blocking us", "start+wait us");
  for (int64_t n : {1418, 65536, 100352, 262144}) {
    std::vector<float> data(static_cast<size_t>(n), 1.0f);
    const double blocking = median_us(
        reps, [&] { c.all_reduce(data.data(), n, lt::DType::F32, lt::ir::ReduceKind::Sum); });
    const double nonblocking = median_us(reps, [&] {
      c.wait(c.start_all_reduce(data.data(), n, lt::DType::F32, lt::ir::ReduceKind::Sum));
    });
    if (c.rank() == 0)
      fmt::print("{:>10} {:>10.1f} {:>14.1f} {:>17.1f}\n", n, n * 4 / 1024.0, blocking,
                 nonblocking);
  }
  const lt::rt::comm::AllReduceCounts counts = c.all_reduce_counts();
  if (c.rank() == 0)
    fmt::print("started all-reduces: {} through the shared segment ({} of them written with "
               "streaming stores), {} through MPI\n",
               counts.shared_memory, counts.streamed, counts.mpi);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times one f32 all-reduce across the ranks of a job, blocking and nonblocking."};
  int reps = 400;
  app.add_option("reps", reps, "calls per figure")
      ->check(lt::cli::integer_at_least(1))
      ->capture_default_str();
  return lt::cli::run(app, argc, argv, [&] {
    lt::dist::init();
    bench(reps);
  });
}
