#include "examples/trainer/training_checkpoint.h"

#include <fmt/format.h>

#include <charconv>

namespace lt::examples {
namespace {

constexpr const char* kModelPrefix = "model.";

std::string need(const Checkpoint& ckpt, const std::string& key, const std::string& path) {
  auto it = ckpt.metadata.find(key);
  if (it == ckpt.metadata.end())
    throw InputError(fmt::format("{}: not a training checkpoint: no metadata '{}'", path, key));
  return it->second;
}

template <class Int>
Int need_int(const Checkpoint& ckpt, const std::string& key, const std::string& path) {
  const std::string text = need(ckpt, key, path);
  Int v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw InputError(fmt::format("{}: metadata '{}' is '{}', not an integer", path, key, text));
  return v;
}

}  // namespace

Checkpoint training_checkpoint(const TrainState& state, const TrainProgress& progress,
                               const TrainConfig& config) {
  Checkpoint ckpt = state.optimizer.state_dict("optim");
  for (const auto& [name, t] : state.model.state_dict()) ckpt.tensors[kModelPrefix + name] = t;
  for (const auto& [k, v] : state.scheduler.state_dict("sched")) ckpt.metadata[k] = v;
  for (const auto& [k, v] : config_metadata(config)) ckpt.metadata[k] = v;
  if (state.scaler) {
    const Checkpoint scaler = state.scaler->state_dict("scaler");
    ckpt.tensors.insert(scaler.tensors.begin(), scaler.tensors.end());
    ckpt.metadata.insert(scaler.metadata.begin(), scaler.metadata.end());
  }
  const RngState rng = rng_state();
  StringDict& m = ckpt.metadata;
  m["train.trainer"] = state.trainer;
  m["train.step"] = std::to_string(progress.step);
  m["train.epoch"] = std::to_string(progress.epoch);
  m["train.batch"] = std::to_string(progress.batch);
  m["train.rng_seed"] = std::to_string(rng.seed);
  m["train.rng_counter"] = std::to_string(rng.counter);
  m["train.best_eval_acc"] = fmt::format("{}", progress.best_eval_acc);
  return ckpt;
}

TrainProgress resume_training(const std::string& path, const TrainState& state,
                              const TrainConfig& config) {
  Checkpoint ckpt;
  try {
    ckpt = load(path);
  } catch (const Error& e) {
    throw InputError(fmt::format("--resume: {}", e.what()));
  }
  const std::string trainer = need(ckpt, "train.trainer", path);
  if (trainer != state.trainer)
    throw InputError(
        fmt::format("{}: a checkpoint of {}, not of {}", path, trainer, state.trainer));
  for (const auto& [flag, key] : {std::pair{"--batch-size", "config.batch_size"},
                                  std::pair{"--accum-steps", "config.accum_steps"}}) {
    const std::string want = config_metadata(config).at(key), had = need(ckpt, key, path);
    if (want != had)
      throw InputError(fmt::format(
          "{}: written with {} {}, resumed with {} {} (the data position depends on it)", path,
          flag, had, flag, want));
  }
  // The loss scaler's state is part of the run: a checkpoint without one (written before
  // --loss-scale existed, or with it off) resumes only a run without one, and likewise.
  const auto scale_it = ckpt.metadata.find("config.loss_scale");
  const std::string had_scale = scale_it == ckpt.metadata.end() ? "off" : scale_it->second;
  if (had_scale != loss_scale_mode(config))
    throw InputError(fmt::format("{}: written with --loss-scale {}, resumed with --loss-scale {} "
                                 "(the loss scaler's state is part of the run)",
                                 path, had_scale, loss_scale_mode(config)));
  TrainProgress p;
  p.step = need_int<int64_t>(ckpt, "train.step", path);
  p.epoch = need_int<int64_t>(ckpt, "train.epoch", path);
  p.batch = need_int<int64_t>(ckpt, "train.batch", path);
  const RngState rng{need_int<uint64_t>(ckpt, "train.rng_seed", path),
                     need_int<uint64_t>(ckpt, "train.rng_counter", path)};
  p.best_eval_acc = std::stod(need(ckpt, "train.best_eval_acc", path));

  TensorDict model;
  for (const auto& [name, t] : ckpt.tensors)
    if (name.starts_with(kModelPrefix)) model[name.substr(std::string(kModelPrefix).size())] = t;
  try {
    copy_state(state.model.state_dict(), model, /*strict=*/true, path + " (model)");
    state.optimizer.load_state_dict(ckpt, "optim");
    state.scheduler.load_state_dict(ckpt.metadata, "sched");
    if (state.scaler) state.scaler->load_state_dict(ckpt, "scaler");
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    throw InputError(fmt::format("--resume {}: {}", path, e.what()));
  }
  set_rng_state(rng);
  return p;
}

LoadReport load_model_weights(const std::string& path, nn::Module& model) {
  Checkpoint ckpt;
  try {
    ckpt = load(path);
  } catch (const Error& e) {
    throw InputError(fmt::format("--weights: {}", e.what()));
  }
  TensorDict source;
  for (const auto& [name, t] : ckpt.tensors) {
    if (name.starts_with("optim.")) continue;  // a training checkpoint's optimizer state
    source[name.starts_with(kModelPrefix) ? name.substr(std::string(kModelPrefix).size()) : name] =
        t;
  }
  return model.load_state_dict(source, /*strict=*/false);
}

}  // namespace lt::examples
