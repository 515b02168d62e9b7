#include "runtime/comm/communicator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ir/error.h"

namespace lt::rt::comm {
namespace {

class SingleCommunicator final : public Communicator {
 public:
  std::string name() const override { return "single"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  void barrier() override {}
  void all_reduce(void*, int64_t, DType, ir::ReduceKind) override {}
  int start_all_reduce(void*, int64_t, DType, ir::ReduceKind) override { return 0; }
  int start_reduce_scatter(const void* in, void* out, int64_t count, DType dtype,
                           ir::ReduceKind) override {
    if (count > 0) std::memcpy(out, in, static_cast<size_t>(count) * dtype_size(dtype));
    return 0;
  }
  int start_all_gather(const void* in, void* out, int64_t bytes) override {
    all_gather(in, out, bytes);
    return 0;
  }
  void progress() override {}
  void wait(int) override {}
  int in_flight() const override { return 0; }
  void broadcast(void*, int64_t, int root) override {
    LT_CHECK(root == 0, "broadcast from rank {} in a job of one rank", root);
  }
  void all_gather(const void* in, void* out, int64_t bytes) override {
    if (bytes > 0) std::memcpy(out, in, static_cast<size_t>(bytes));
  }
  bool control_all_gather(const void* in, void* out, int64_t bytes, double) override {
    all_gather(in, out, bytes);
    return true;
  }
  bool control_broadcast(void*, int64_t, int root, double) override {
    LT_CHECK(root == 0, "broadcast from rank {} in a job of one rank", root);
    return true;
  }
  [[noreturn]] void abort(int code) override {
    std::fflush(nullptr);
    std::_Exit(code);
  }
};

std::unique_ptr<Communicator>& world_slot() {
  static std::unique_ptr<Communicator> w = make_single();
  return w;
}

}  // namespace

Communicator& world() { return *world_slot(); }

void set_world(std::unique_ptr<Communicator> c) {
  LT_CHECK(c != nullptr, "set_world: no communicator");
  world_slot() = std::move(c);
}

std::unique_ptr<Communicator> make_single() { return std::make_unique<SingleCommunicator>(); }

}  // namespace lt::rt::comm
