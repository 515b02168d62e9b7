// A trainer's checkpoint: everything a resumed run needs to continue bit-exactly where the
// saved run was (docs/TRAINING.md, "Checkpoints and resume"):
//   model.<name>            the model's parameters and buffers
//   optim.<group>.<param>.<slot> and optim.* metadata   the optimizer (lt::optim::Optimizer)
//   sched.*                 the learning-rate schedule's position and base rates
//   train.trainer, train.step, train.epoch, train.batch   whose run, and where in it
//   train.rng_seed, train.rng_counter   the global generator (dropout, augmentation)
//   train.best_eval_acc     the best test accuracy seen so far
//   scaler.scale, scaler.growth_tracker and scaler.* metadata   the loss scaler, when there is one
//   config.<flag>           the configuration the run was started with
#pragma once
#include <cstdint>
#include <string>

#include "examples/trainer/train_config.h"
#include "lt/amp.h"
#include "lt/nn.h"
#include "lt/optim.h"

namespace lt::examples {

/// Where a run is: `step` optimizer steps done, the last of them in epoch `epoch` after `batch`
/// of its micro-batches.
struct TrainProgress {
  int64_t step = 0;
  int64_t epoch = 0;
  int64_t batch = 0;
  double best_eval_acc = -1;  ///< -1: not evaluated yet
};

/// What a checkpoint belongs to.
struct TrainState {
  std::string trainer;  ///< e.g. "fmnist_mlp": a checkpoint resumes only its own trainer
  nn::Module& model;
  optim::Optimizer& optimizer;
  optim::sched::Scheduler& scheduler;
  amp::GradScaler* scaler = nullptr;  ///< the loss scaler of --loss-scale, if any
};

/// The checkpoint of `progress`, for lt::save (atomic) by rank 0; collective when the optimizer's
/// state is sharded: every rank calls it, and each gets the gathered state.
Checkpoint training_checkpoint(const TrainState& state, const TrainProgress& progress,
                               const TrainConfig& config);

/// Loads a checkpoint made by training_checkpoint into `state` and the global generator,
/// and returns its progress. The checkpoint must be of the same trainer, model and optimizer
/// and have the same batch size and accumulation (the data position depends on them), and hold a
/// loss scaler's state when the run has a loss scaler; otherwise,
/// or when the file is unreadable, it throws lt::InputError naming the file and the problem (the
/// model and optimizer may then be partly loaded: a trainer stops there).
TrainProgress resume_training(const std::string& path, const TrainState& state,
                              const TrainConfig& config);

/// Non-strict load of model weights from any safetensors file whose keys are the model's names,
/// with or without a `model.` prefix (so a training checkpoint works too). Returns the report
/// (missing keys, unexpected keys, shape mismatches, which are skipped).
LoadReport load_model_weights(const std::string& path, nn::Module& model);

}  // namespace lt::examples
