// The training loop every example trainer runs (docs/TRAINING.md, "The example trainers"): a
// trainer builds its model, data and optimizer, describes them in a TrainTask, and calls train().
// The loop does the rest the same way everywhere: the schedule, gradient accumulation and
// clipping, lazy-mode step cuts, evaluation, progress, the CSV log, checkpoints and resume.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "examples/trainer/train_config.h"
#include "lt/data.h"
#include "lt/nn.h"
#include "lt/optim.h"

namespace lt::examples {

struct TrainTask {
  std::string name;  ///< the program's name, e.g. "fmnist_mlp"
  nn::Module* model = nullptr;
  data::TensorDataset train;
  data::TensorDataset test;
  /// Logits [M, C] and integer targets [M] of a batch: M is the batch for a classifier and
  /// batch * context for a language model. Loss: their mean cross-entropy.
  std::function<std::pair<Tensor, Tensor>(const data::Batch&)> logits_and_targets;
  /// The optimizer over the model's parameters, made after the configuration is known.
  std::function<std::unique_ptr<optim::Optimizer>(const TrainConfig&)> make_optimizer;
  /// Optional: the training batch's augmentation, from (batch, epoch, index of the micro-batch in
  /// the epoch) alone, so that a resumed run augments exactly as the uninterrupted one did.
  std::function<data::Batch(data::Batch, int64_t epoch, int64_t batch)> augment;
  /// Examples per evaluation chunk.
  int64_t eval_batch = 500;
  /// One line describing the model and data, printed with the configuration.
  std::string description;
};

struct EvalResult {
  double loss = 0;      ///< mean cross-entropy
  double accuracy = 0;  ///< top-1
  double top5 = -1;     ///< top-5 where there are more than 5 classes, else -1
};

struct RunSummary {
  int64_t steps = 0;  ///< optimizer steps taken by this process
  double total_s = 0;
  double compile_s = 0;     ///< lazy mode: preparing (passes and codegen) graphs
  double steady_ms = 0;     ///< median step time
  double samples_per_s = 0;  ///< at the median step time
  double peak_mb = 0;
  EvalResult final_eval;
};

/// Trains `task` as `config` says and prints the configuration, progress and a summary.
RunSummary train(TrainTask& task, const TrainConfig& config);

/// Mean loss and accuracy of the model on `ds`, in eval mode, without gradients, under autocast
/// as --amp says (off, bf16 or fp16).
EvalResult evaluate(TrainTask& task, const data::TensorDataset& ds, const std::string& amp = "off");

/// Parameters for weight decay (rank >= 2: weights of linear, conv and embedding layers) and the
/// rest (biases, norm scales and shifts), as PyTorch recipes split them.
std::pair<std::vector<Tensor>, std::vector<Tensor>> split_for_weight_decay(const nn::Module& m);

/// SGD over `m` with the configuration's lr and momentum, and its weight decay on the weights of
/// split_for_weight_decay only: the optimizer of the SGD trainers.
std::unique_ptr<optim::Optimizer> sgd_for(const nn::Module& m, const TrainConfig& config);

}  // namespace lt::examples
