// lt::dist::GradientReducer: PyTorch DDP's bucketed, overlapped gradient all-reduce for eager
// replicas. Each parameter's post-accumulate-grad hook marks it ready; a bucket whose parameters
// are all ready is packed into one buffer and its all-reduce started (buckets strictly in order,
// so every rank starts the same collectives in the same order), and finish() waits and unpacks.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "frontend/options/store.h"
#include "frontend/tensor_impl.h"
#include "lt/autograd.h"
#include "lt/dist.h"
#include "lt/lazy.h"
#include "lt/nn.h"
#include "runtime/comm/communicator.h"

namespace lt::dist {

struct GradientReducer::State {
  struct Bucket {
    std::vector<int> params;
    std::vector<int64_t> offsets;  // of each parameter's gradient in `data`
    std::shared_ptr<TensorImpl> data;
    int ready = 0;
    int request = -1;  // the all-reduce in flight
  };
  std::vector<Tensor> params;
  std::vector<int> bucket_of;  // per parameter
  std::vector<Bucket> buckets;
  size_t next = 0;  // the first bucket not started
  bool sync = true;

  void start(Bucket& b) {
    auto* dst = static_cast<char*>(b.data->data());
    for (size_t i = 0; i < b.params.size(); ++i) {
      const Tensor& p = params[b.params[i]];
      const Tensor g = p.grad();
      const size_t bytes = p.type().bytes();
      char* at = dst + b.offsets[i] * static_cast<int64_t>(sizeof(float));
      if (g.defined()) std::memcpy(at, g.impl()->data(), bytes);
      else std::memset(at, 0, bytes);
    }
    b.request = rt::comm::world().start_all_reduce(b.data->data(), b.data->type.numel(), DType::F32,
                                                   ir::ReduceKind::Mean);
  }

  // Parameter p's gradient is complete for this backward pass.
  void ready(int p) {
    if (!sync || mode() == Mode::Lazy) return;
    Bucket& b = buckets[bucket_of[p]];
    if (++b.ready > static_cast<int>(b.params.size()))
      throw Error("GradientReducer: backward() ran again before finish() (call finish() after "
                  "every synced backward, or set_sync(false) while accumulating)");
    auto complete = [&](const Bucket& x) {
      return x.ready == static_cast<int>(x.params.size());
    };
    while (next < buckets.size() && complete(buckets[next])) start(buckets[next++]);
    rt::comm::world().progress();
  }
};

namespace {

std::vector<Tensor> module_parameters(const nn::Module& m) { return m.parameters(); }

}  // namespace

GradientReducer::GradientReducer(std::vector<Tensor> params, Loc loc)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.params = std::move(params);
  const int64_t first = options::number(options::Setting::BucketFirstKb) << 10;
  const int64_t rest = options::number(options::Setting::BucketKb) << 10;
  s.bucket_of.assign(s.params.size(), -1);
  // Reverse order: the backward pass completes the last layers first.
  int64_t bytes = 0;
  for (int i = static_cast<int>(s.params.size()) - 1; i >= 0; --i) {
    const Tensor& p = s.params[i];
    if (!p.defined() || p.dtype() != DType::F32 || !p.requires_grad())
      throw InputError(fmt::format("GradientReducer: parameter {} is not an f32 tensor that "
                                   "requires grad at {}", i, location_str(loc)));
    const auto b = static_cast<int64_t>(p.type().bytes());
    // LT_BUCKET_KB=0: a bucket per parameter; a parameter larger than a bucket is one alone.
    const bool full = !s.buckets.empty() &&
                      (rest == 0 || bytes + b > (s.buckets.size() == 1 ? first : rest));
    if (s.buckets.empty() || full) {
      s.buckets.emplace_back();
      bytes = 0;
    }
    State::Bucket& bk = s.buckets.back();
    const int64_t offset =
        bk.params.empty() ? 0 : bk.offsets.back() + s.params[bk.params.back()].numel();
    bk.offsets.push_back(offset);
    bk.params.push_back(i);
    bytes += b;
    s.bucket_of[i] = static_cast<int>(s.buckets.size()) - 1;
  }
  for (State::Bucket& bk : s.buckets) {
    const int64_t n = bk.offsets.back() + s.params[bk.params.back()].numel();
    bk.data = make_impl({DType::F32, {n}});
  }
  std::weak_ptr<State> weak = state_;
  for (int i = 0; i < static_cast<int>(s.params.size()); ++i)
    hook_ids_.push_back(register_post_accumulate_grad_hook(s.params[i], [weak, i](const Tensor&) {
      if (auto st = weak.lock()) st->ready(i);
    }));
}

GradientReducer::GradientReducer(const nn::Module& module, Loc loc)
    : GradientReducer(module_parameters(module), loc) {}

GradientReducer::~GradientReducer() {
  for (size_t i = 0; i < hook_ids_.size(); ++i)
    remove_post_accumulate_grad_hook(state_->params[i], hook_ids_[i]);
  // Collectives in flight write into the buckets: let them land before the buffers go.
  for (State::Bucket& b : state_->buckets)
    if (b.request >= 0) rt::comm::world().wait(b.request);
}

void GradientReducer::set_sync(bool on) { state_->sync = on; }

void GradientReducer::finish(Loc loc) {
  State& s = *state_;
  if (mode() == Mode::Lazy) {
    all_reduce_gradients(s.params, loc);
    return;
  }
  while (s.next < s.buckets.size()) s.start(s.buckets[s.next++]);
  NoGradGuard no_grad;
  for (State::Bucket& b : s.buckets) {
    rt::comm::world().wait(std::exchange(b.request, -1));
    b.ready = 0;
    const auto* src = static_cast<const char*>(b.data->data());
    for (size_t i = 0; i < b.params.size(); ++i) {
      Tensor& p = s.params[b.params[i]];
      if (!p.grad().defined()) continue;
      auto mean = make_impl(p.type());
      std::memcpy(mean->data(), src + b.offsets[i] * static_cast<int64_t>(sizeof(float)),
                  p.type().bytes());
      p.set_grad(Tensor(mean));
    }
  }
  s.next = 0;
}

std::vector<std::vector<int>> GradientReducer::buckets() const {
  std::vector<std::vector<int>> out;
  for (const State::Bucket& b : state_->buckets) out.push_back(b.params);
  return out;
}

}  // namespace lt::dist
