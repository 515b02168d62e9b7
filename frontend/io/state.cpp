// Matching loaded tensors to the tensors they are meant for, and finding a run's checkpoints.
#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <filesystem>

#include "frontend/io/safetensors_header.h"
#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"
#include "lt/serialize.h"

namespace lt {
namespace {

/// The source's values in new device data of the target's dtype, owned by nobody else: a lazy
/// step may later take over the target's buffer for an in-place update.
Tensor private_copy(const Tensor& src, DType dtype, const Loc& loc) {
  lazy::sync(src, "copy_state", loc);
  ModeGuard eager(Mode::Eager);
  if (src.dtype() != dtype) return cast(src, dtype, loc);
  auto impl = make_impl(src.type());
  if (src.numel() > 0) std::memcpy(impl->data(), src.impl()->data(), src.type().bytes());
  return Tensor(std::move(impl));
}

}  // namespace

std::string LoadReport::str() const {
  std::string out;
  for (const auto& name : missing) out += fmt::format("missing: {}\n", name);
  for (const auto& name : unexpected) out += fmt::format("unexpected: {}\n", name);
  for (const auto& m : shape_mismatch)
    out += fmt::format("shape mismatch: {}: expected {}, found {}\n", m.name, shape_str(m.expected),
                       shape_str(m.found));
  return out;
}

LoadReport copy_state(const TensorDict& targets, const TensorDict& source, bool strict,
                      const std::string& what, Loc loc) {
  LoadReport report;
  for (const auto& [name, target] : targets) {
    const auto it = source.find(name);
    if (it == source.end())
      report.missing.push_back(name);
    else if (it->second.shape() != target.shape())
      report.shape_mismatch.push_back({name, target.shape(), it->second.shape()});
  }
  for (const auto& [name, _] : source)
    if (!targets.contains(name)) report.unexpected.push_back(name);
  if (strict && !report.clean()) {
    std::string problems = report.str();  // one line per problem: joined into one line here
    problems.pop_back();
    for (size_t at = 0; (at = problems.find('\n', at)) != std::string::npos; at += 2)
      problems.replace(at, 1, "; ");
    throw Error(
        fmt::format("{}: tensors do not match ({}) at {}", what, problems, location_str(loc)));
  }
  NoGradGuard no_grad;  // parameters are leaves that require grad
  std::vector<Tensor> values;
  for (const auto& [name, target] : targets)
    if (const auto it = source.find(name);
        it != source.end() && it->second.shape() == target.shape())
      values.push_back(it->second);
  lazy::sync(values, "copy_state", loc);  // every pending source copied, in one graph
  for (const auto& [name, target] : targets) {
    const auto it = source.find(name);
    if (it == source.end() || it->second.shape() != target.shape()) continue;
    Tensor handle = target;  // shares the target's impl: the caller's tensor sees the new value
    handle.copy_(private_copy(it->second, target.dtype(), loc), loc);
  }
  return report;
}

LoadReport load_into(const std::string& path, const TensorDict& targets, bool strict, Loc loc) {
  return copy_state(targets, load(path, loc).tensors, strict, "load_into: " + path, loc);
}

std::string checkpoint_path(const std::string& dir, int64_t step) {
  if (step < 0) throw Error(fmt::format("checkpoint_path: negative step {}", step));
  return (std::filesystem::path(dir) / fmt::format("step-{}.safetensors", step)).string();
}

std::optional<std::string> latest_checkpoint(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::nullopt;
  std::optional<std::string> best;
  int64_t best_step = -1;
  constexpr std::string_view kPrefix = "step-", kSuffix = ".safetensors";
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(fmt::format("latest_checkpoint: cannot list {}: {}", dir, ec.message()));
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
        !name.ends_with(kSuffix))
      continue;
    const char* first = name.data() + kPrefix.size();
    const char* last = name.data() + name.size() - kSuffix.size();
    int64_t step = 0;
    const auto [end, err] = std::from_chars(first, last, step);
    if (err != std::errc() || end != last || *first == '-') continue;
    if (step > best_step && entry.is_regular_file(ec)) {
      best_step = step;
      best = entry.path().string();
    }
  }
  return best;
}

}  // namespace lt
