#include "runtime/executable.h"

#include "ir/error.h"
#include "runtime/kernels/kernel.h"
#include "runtime/thread_pool.h"

namespace lt::rt {

Executable::Executable(int num_params, std::vector<TensorType> slot_types,
                       std::vector<Launch> launches, std::vector<int> result_slots,
                       std::shared_ptr<void> keep_alive)
    : num_params_(num_params),
      slot_types_(std::move(slot_types)),
      launches_(std::move(launches)),
      result_slots_(std::move(result_slots)),
      keep_alive_(std::move(keep_alive)) {
  // A slot dies after the last launch that reads it; results live to the end.
  const int n = static_cast<int>(launches_.size());
  std::vector<int> last(slot_types_.size(), -1);
  for (int i = 0; i < n; ++i)
    for (int s : launches_[i].in_slots) last[s] = i;
  for (int s : result_slots_) last[s] = n;
  free_after_.resize(n);
  for (size_t s = num_params_; s < last.size(); ++s)
    if (last[s] >= 0 && last[s] < n) free_after_[last[s]].push_back(static_cast<int>(s));
}

std::vector<BufferPtr> Executable::run(std::span<const BufferPtr> params) const {
  LT_CHECK(static_cast<int>(params.size()) == num_params_, "executable takes {} parameters, got {}",
           num_params_, params.size());
  std::vector<BufferPtr> slots(slot_types_.size());
  for (int i = 0; i < num_params_; ++i) {
    LT_CHECK(params[i] && params[i]->bytes() == slot_types_[i].bytes(),
             "parameter {}: buffer does not match {}", i, type_str(slot_types_[i]));
    slots[i] = params[i];
  }
  std::vector<void*> ptrs;
  std::vector<TensorRef> ins, outs;
  for (size_t li = 0; li < launches_.size(); ++li) {
    const Launch& l = launches_[li];
    for (int s : l.out_slots)
      if (!slots[s]) slots[s] = Buffer::allocate(slot_types_[s].bytes());
    if (l.kind == Launch::Kind::Loop) {
      ptrs.clear();
      for (int s : l.in_slots) ptrs.push_back(slots[s]->data());
      for (int s : l.out_slots) ptrs.push_back(slots[s]->data());
      void* const* p = ptrs.data();
      LoopKernelFn fn = l.fn;
      parallel_for(l.rows, l.row_grain, [&](int64_t b, int64_t e) { fn(p, b, e); });
    } else {
      ins.clear();
      outs.clear();
      for (int s : l.in_slots) ins.push_back({slots[s]->data(), &slot_types_[s]});
      for (int s : l.out_slots) outs.push_back({slots[s]->data(), &slot_types_[s]});
      run_kernel(l.op, l.attrs, ins, outs);
    }
    for (int s : free_after_[li]) slots[s].reset();
  }
  std::vector<BufferPtr> results;
  results.reserve(result_slots_.size());
  for (int s : result_slots_) results.push_back(slots[s]);
  return results;
}

}  // namespace lt::rt
