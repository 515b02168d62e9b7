// A replica that trains until told to fail: the job's faults under test (tests/dist/faults.sh).
//   dist_fault_worker --fail kill|throw|exit --rank R --step N
// kill: rank R sends itself SIGKILL before step N; throw: it throws lt::Error from step N,
// which main() reports and returns 1 for; exit: it returns 3 from main at once. The other ranks
// keep training (their collectives wait for rank R) until the job is ended.
#include <fmt/format.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lt/lt.h"

namespace {

struct Fault {
  std::string kind = "none";
  int rank = 1;
  int step = 5;
};

// 0: trained to the end; 3: the injected early return.
int train(const Fault& f) {
  lt::manual_seed(1);
  lt::nn::Linear layer(64, 64);
  lt::dist::broadcast_parameters(layer);
  lt::optim::SGD opt(layer.parameters(), {.lr = 1e-3});
  const lt::Tensor x = lt::randn({8, 64});
  lt::ModeGuard lazy(lt::Mode::Lazy);
  for (int step = 0; step < 100000; ++step) {
    if (lt::dist::rank() == f.rank && step == f.step) {
      std::fprintf(stderr, "rank %d: injected %s at step %d\n", f.rank, f.kind.c_str(), step);
      if (f.kind == "kill") raise(SIGKILL);
      if (f.kind == "throw") throw lt::Error(fmt::format("injected failure on rank {}", f.rank));
      if (f.kind == "exit") return 3;
    }
    opt.zero_grad();
    lt::mean(layer.forward(x) * layer.forward(x)).backward();
    lt::dist::all_reduce_gradients(layer);
    opt.step();
    lt::mark_step();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Fault f;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--fail") == 0) f.kind = argv[i + 1];
    if (std::strcmp(argv[i], "--rank") == 0) f.rank = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--step") == 0) f.step = std::atoi(argv[i + 1]);
    // --tag X: ignored (faults.sh finds leftover processes by it)
  }
  lt::dist::init();
  try {
    return train(f);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: error: %s\n", lt::dist::rank(), e.what());
    return 1;
  }
}
