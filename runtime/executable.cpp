#include "runtime/executable.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "ir/clock.h"
#include "ir/error.h"
#include "runtime/kernels/kernel.h"
#include "runtime/thread_pool.h"

namespace lt::rt {

Executable::Executable(std::vector<Slot> slots, std::vector<Launch> launches,
                       std::vector<int> result_slots, MemoryPlan memory,
                       std::shared_ptr<void> keep_alive)
    : slots_(std::move(slots)),
      launches_(std::move(launches)),
      result_slots_(std::move(result_slots)),
      memory_(memory),
      keep_alive_(std::move(keep_alive)) {
  while (num_params_ < static_cast<int>(slots_.size()) &&
         slots_[num_params_].kind == Slot::Kind::Param)
    ++num_params_;
  std::vector<bool> is_result(slots_.size());
  for (int s : result_slots_) is_result.at(s) = true;
  for (size_t s = 0; s < slots_.size(); ++s) {
    const Slot& slot = slots_[s];
    LT_CHECK(slot.kind != Slot::Kind::Param || static_cast<int>(s) < num_params_,
             "slot {}: parameter slots come first", s);
    LT_CHECK(slot.kind != Slot::Kind::Arena ||
                 (!is_result[s] && slot.offset % 64 == 0 &&
                  slot.offset + static_cast<int64_t>(slot.type.bytes()) <= memory_.arena_bytes),
             "slot {}: arena range @{} of {} (result: {})", s, slot.offset, type_str(slot.type),
             bool(is_result[s]));
    LT_CHECK(slot.donor < num_params_ &&
                 (slot.donor < 0 || (slot.kind == Slot::Kind::Owned && is_result[s])),
             "slot {}: bad donor {}", s, slot.donor);
    LT_CHECK(slot.shares < 0 ||
                 (slot.kind == Slot::Kind::Owned && !is_result[s] &&
                  slot.shares > static_cast<int>(s) &&
                  slot.shares < static_cast<int>(slots_.size()) && is_result[slot.shares] &&
                  slots_[slot.shares].kind == Slot::Kind::Owned && slots_[slot.shares].donor < 0 &&
                  slots_[slot.shares].type.bytes() == slot.type.bytes()),
             "slot {}: cannot share slot {}'s buffer", s, slot.shares);
    if (slot.kind == Slot::Kind::Arena) arena_slots_.push_back(static_cast<int>(s));
    if (slot.donor >= 0) donated_slots_.push_back(static_cast<int>(s));
  }
  for (size_t i = 0; i < launches_.size(); ++i) {
    const Launch& l = launches_[i];
    const bool paired = l.kind == Launch::Kind::Done &&
                        l.start >= 0 && l.start < static_cast<int>(i) &&
                        launches_[l.start].kind == Launch::Kind::Start &&
                        l.in_slots == launches_[l.start].out_slots;
    LT_CHECK(l.kind != Launch::Kind::Done || paired, "launch {}: a done without its start", i);
    LT_CHECK(l.kind != Launch::Kind::Start || ir::as_collective(l.op),
             "launch {}: start of {}, which is not a collective", i, ir::mnemonic(l.op));
    has_collectives_ = has_collectives_ || l.kind == Launch::Kind::Start;
  }
  // A temporary dies after the last launch that reads it; results live to the end.
  const int n = static_cast<int>(launches_.size());
  std::vector<int> last(slots_.size(), -1);
  for (int i = 0; i < n; ++i) {
    const Launch& l = launches_[i];
    for (int s : l.in_slots) last[s] = i;
    if (l.epilogue)
      for (int s : l.epilogue->in_slots)
        if (s >= 0) last[s] = i;
  }
  for (int i = 0; i < n; ++i) {
    const Launch& l = launches_[i];
    for (const std::vector<int>* v : {&l.in_slots, &l.out_slots})
      for (int s : *v)
        if (slots_[s].kind == Slot::Kind::Arena) arena_done_after_ = i;
    check_written_over(i, l.written_over, l.in_slots, l.out_slots);
    if (!l.epilogue) continue;
    check_written_over(i, l.epilogue->written_over, l.epilogue->in_slots, l.epilogue->out_slots);
    LT_CHECK(l.kind == Launch::Kind::Library && l.epilogue->fn &&
                 l.epilogue->source < static_cast<int>(l.epilogue->in_slots.size()) &&
                 l.out_slots.size() == (l.epilogue->in_slots[l.epilogue->source] >= 0 ? 1u : 0u),
             "launch {}: malformed epilogue", i);
    for (const std::vector<int>* v : {&l.epilogue->in_slots, &l.epilogue->out_slots})
      for (int s : *v)
        if (s >= 0 && slots_[s].kind == Slot::Kind::Arena) arena_done_after_ = i;
  }
  free_after_.resize(n);
  for (size_t s = 0; s < slots_.size(); ++s)
    if (slots_[s].kind == Slot::Kind::Owned && !is_result[s] && last[s] >= 0)
      free_after_[last[s]].push_back(static_cast<int>(s));
}

// An output is written over an input only where the plan gave it that input (a parameter) as
// donor: then the two share a buffer, or run() makes the output a copy of it.
void Executable::check_written_over(size_t launch, std::span<const int> over,
                                    std::span<const int> in_slots,
                                    std::span<const int> out_slots) const {
  LT_CHECK(over.empty() || over.size() == out_slots.size(),
           "launch {}: {} written-over entries for {} outputs", launch, over.size(),
           out_slots.size());
  for (size_t k = 0; k < over.size(); ++k)
    LT_CHECK(over[k] < 0 || (over[k] < static_cast<int>(in_slots.size()) && out_slots[k] >= 0 &&
                             slots_[out_slots[k]].donor == in_slots[over[k]]),
             "launch {}: output {} written over input {}, which is not its donor", launch, k,
             over[k]);
}

namespace {

// A kernel stores an output it writes over an input through the input's pointer (`ptrs` holds
// the inputs' pointers, then the outputs'). Where the donation was refused the output has a
// buffer of its own: it gets the input's values, and the kernel reads and writes it there.
void redirect_refused(std::span<const int> over, std::span<const int> in_slots,
                      std::span<const int> out_slots, std::span<void* const> data,
                      const std::vector<Slot>& slots, std::vector<void*>& ptrs) {
  for (size_t k = 0; k < over.size(); ++k) {
    if (over[k] < 0) continue;
    void* out = data[out_slots[k]];
    const void* in = data[in_slots[over[k]]];
    if (out == in) continue;
    std::memcpy(out, in, slots[out_slots[k]].type.bytes());
    ptrs[over[k]] = out;
  }
}

}  // namespace

void Executable::take_donations(std::span<const BufferPtr> params, std::span<const long> owned_refs,
                                std::vector<BufferPtr>& owned) const {
  if (donated_slots_.empty()) return;
  // A buffer passed as two parameters is never written over (sorted once: a step has hundreds
  // of parameters and of donations).
  std::vector<const Buffer*> sorted(static_cast<size_t>(num_params_));
  for (int q = 0; q < num_params_; ++q) sorted[q] = params[q].get();
  std::sort(sorted.begin(), sorted.end());
  auto passed_once = [&](const Buffer* b) {
    auto [lo, hi] = std::equal_range(sorted.begin(), sorted.end(), b);
    return hi - lo == 1;
  };
  for (int s : donated_slots_) {
    const int p = slots_[s].donor;
    const bool ok = p < static_cast<int>(owned_refs.size()) && owned_refs[p] > 0 &&
                    params[p].use_count() <= owned_refs[p] && passed_once(params[p].get());
    if (ok) owned[s] = params[p];
    (ok ? donations_taken_ : donations_refused_).fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<BufferPtr> Executable::run(std::span<const BufferPtr> params,
                                       std::span<const long> owned_refs,
                                       std::span<int64_t> launch_ns) const {
  LT_CHECK(static_cast<int>(params.size()) == num_params_, "executable takes {} parameters, got {}",
           num_params_, params.size());
  LT_CHECK(launch_ns.empty() || launch_ns.size() == launches_.size(),
           "launch profile has {} entries for {} launches", launch_ns.size(), launches_.size());
  const bool timed = !launch_ns.empty();
  runs_.fetch_add(1, std::memory_order_relaxed);
  std::vector<void*> data(slots_.size(), nullptr);
  for (int i = 0; i < num_params_; ++i) {
    LT_CHECK(params[i] && params[i]->bytes() == slots_[i].type.bytes(),
             "parameter {}: buffer does not match {}", i, type_str(slots_[i].type));
    data[i] = params[i]->data();
  }
  // Owned slots' buffers; donations first, before this run copies any parameter's reference.
  std::vector<BufferPtr> owned(slots_.size());
  take_donations(params, owned_refs, owned);
  BufferPtr arena = memory_.arena_bytes > 0
                        ? Buffer::allocate(static_cast<size_t>(memory_.arena_bytes))
                        : nullptr;
  char* base = arena ? static_cast<char*>(arena->data()) : nullptr;  // null: only empty values
  for (int s : arena_slots_) data[s] = base + slots_[s].offset;

  std::vector<void*> ptrs;
  std::vector<TensorRef> ins, outs;
  // Collectives this run started and has not finished. If a launch throws meanwhile, they are
  // finished before the buffers they write into are freed (every rank runs the same launches,
  // so the peers start them too, or fail and end the job).
  std::vector<int> request(has_collectives_ ? launches_.size() : 0, -1);
  int in_flight = 0;
  struct FinishOnThrow {
    std::vector<int>& request;
    int& in_flight;
    ~FinishOnThrow() {
      if (in_flight == 0) return;
      for (int& r : request)
        if (r >= 0) finish_collective(std::exchange(r, -1));
    }
  } finish_on_throw{request, in_flight};
  for (size_t li = 0; li < launches_.size(); ++li) {
    const Launch& l = launches_[li];
    const int64_t t0 = timed ? ir::now_ns() : 0;
    auto make_owned = [&](std::span<const int> written) {
      for (int s : written) {
        if (slots_[s].kind != Slot::Kind::Owned) continue;
        if (const int t = slots_[s].shares; t >= 0) {  // the result's buffer, made now
          if (!owned[t]) owned[t] = Buffer::allocate(slots_[t].type.bytes());
          owned[s] = owned[t];
        }
        if (!owned[s]) owned[s] = Buffer::allocate(slots_[s].type.bytes());
        data[s] = owned[s]->data();
      }
    };
    make_owned(l.out_slots);
    if (l.epilogue) make_owned(l.epilogue->out_slots);
    if (l.kind == Launch::Kind::Loop) {
      ptrs.clear();
      for (int s : l.in_slots) ptrs.push_back(data[s]);
      for (int s : l.out_slots) ptrs.push_back(data[s]);
      redirect_refused(l.written_over, l.in_slots, l.out_slots, data, slots_, ptrs);
      void* const* p = ptrs.data();
      LoopKernelFn fn = l.fn;
      parallel_for(l.rows, l.row_grain, [&](int64_t b, int64_t e) { fn(p, b, e); });
    } else if (l.kind == Launch::Kind::Done) {
      finish_collective(std::exchange(request[l.start], -1));
      --in_flight;
    } else {
      ins.clear();
      outs.clear();
      for (int s : l.in_slots) ins.push_back({data[s], &slots_[s].type});
      for (int s : l.out_slots) outs.push_back({data[s], &slots_[s].type});
      if (l.kind == Launch::Kind::Start) {
        request[li] = start_collective(*ir::as_collective(l.op), l.attrs, ins, outs);
        ++in_flight;
      } else if (l.epilogue) {
        run_with_epilogue(l, data, ins);
      } else {
        run_kernel(l.op, l.attrs, ins, outs);
      }
    }
    if (in_flight > 0) progress_collectives();
    if (timed) launch_ns[li] += ir::now_ns() - t0;
    for (int s : free_after_[li]) owned[s].reset();
    if (static_cast<int>(li) == arena_done_after_) arena.reset();
  }
  std::vector<BufferPtr> results;
  results.reserve(result_slots_.size());
  for (int s : result_slots_) results.push_back(s < num_params_ ? params[s] : owned[s]);
  return results;
}

void Executable::run_with_epilogue(const Launch& l, std::span<void* const> data, Ins ins) const {
  const EpilogueLaunch& ep = *l.epilogue;
  std::vector<void*> buffers;
  for (int s : ep.in_slots) buffers.push_back(s >= 0 ? data[s] : nullptr);
  for (int s : ep.out_slots) buffers.push_back(data[s]);
  redirect_refused(ep.written_over, ep.in_slots, ep.out_slots, data, slots_, buffers);
  const int source_slot = ep.in_slots[ep.source];
  const TensorRef out{source_slot >= 0 ? data[source_slot] : nullptr, &ep.library_out};
  const auto esize = static_cast<int64_t>(dtype_size(ep.library_out.dtype));
  OutputBlocks blocks;
  blocks.block_elems = ep.block_elems;
  blocks.done = [&](int64_t begin, int64_t end, const void* block) {
    if (end <= begin) return;
    // The kernel indexes the source by element number: point it `begin` elements before the
    // block (64-byte aligned, as OutputBlocks promises).
    std::vector<void*> bufs = buffers;
    bufs[ep.source] = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(block) - begin * esize);
    const int64_t r0 = begin / ep.block_elems * ep.block_rows;
    const int64_t r1 = end / ep.block_elems * ep.block_rows;
    void* const* p = bufs.data();
    parallel_for(r1 - r0, ep.row_grain, [&](int64_t b, int64_t e) { ep.fn(p, r0 + b, r0 + e); });
  };
  const auto op = ir::as_library(l.op);
  LT_CHECK(op.has_value(), "an epilogue follows a library op, not {}", ir::mnemonic(l.op));
  run_library(*op, l.attrs, ins, std::span<const TensorRef>(&out, 1), &blocks);
}

std::string print_launches(const Executable& exe) {
  auto list = [](std::span<const int> slots) {
    std::string s;
    for (int x : slots) s += fmt::format("{}s{}", s.empty() ? "" : " ", x);
    return s.empty() ? std::string("-") : s;
  };
  std::string out;
  const std::vector<Launch>& launches = exe.launches();
  for (size_t i = 0; i < launches.size(); ++i) {
    const Launch& l = launches[i];
    std::string what;
    switch (l.kind) {
      case Launch::Kind::Loop: what = "loop " + l.name; break;
      case Launch::Kind::Library:
        what = l.epilogue ? fmt::format("library {}+loop", l.name) : "library " + l.name;
        break;
      case Launch::Kind::Start: what = fmt::format("start {}", ir::mnemonic(l.op)); break;
      case Launch::Kind::Done:
        what = fmt::format("done {} of #{}", ir::mnemonic(l.op), l.start);
        break;
    }
    std::string io = fmt::format("in: {}", list(l.in_slots));
    if (l.kind != Launch::Kind::Done) io += fmt::format("; out: {}", list(l.out_slots));
    if (l.epilogue)
      io += fmt::format("; loop in: {}; loop out: {}", list(l.epilogue->in_slots),
                        list(l.epilogue->out_slots));
    out += fmt::format("#{} {} ({})\n", i, what, io);
  }
  return out;
}

RunStats Executable::run_stats() const {
  return {runs_.load(), donations_taken_.load(), donations_refused_.load()};
}

}  // namespace lt::rt
