// The training loop every example trainer runs (docs/TRAINING.md, "The example trainers"): a
// trainer builds its model, data and optimizer, describes them in a TrainTask, and calls train().
// The loop does the rest the same way everywhere: the schedule, gradient accumulation and
// clipping, lazy-mode step cuts, evaluation, progress, the CSV log, checkpoints and resume.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
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
  /// Examples {input, integer target}, read through a data::DataLoader (--num-workers threads).
  std::shared_ptr<const data::Dataset> train;
  std::shared_ptr<const data::Dataset> test;
  /// Logits [M, C] and integer targets [M] of a batch: M is the batch for a classifier and
  /// batch * context for a language model. Loss: their mean cross-entropy.
  std::function<std::pair<Tensor, Tensor>(const data::Batch&)> logits_and_targets;
  /// The optimizer over the model's parameters, made after the configuration is known.
  std::function<std::unique_ptr<optim::Optimizer>(const TrainConfig&)> make_optimizer;
  /// Optional: this rank's rows of a training micro-batch made from their examples (on a loader
  /// thread), where augmentation draws from (epoch, index of the micro-batch in the epoch, the
  /// first row's place in the global micro-batch) alone, so that a resumed run and any number of
  /// ranks augment each example as one uninterrupted process does. Default: stack_batch.
  std::function<data::Batch(std::span<const data::Example>, int64_t epoch, int64_t batch,
                            int64_t first_row)>
      train_batch;
  /// Optional: an evaluation chunk made from its examples. Default: stack_batch.
  std::function<data::Batch(std::span<const data::Example>)> test_batch;
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

/// Examples {input, target} stacked into a Batch (data::default_collate of the two fields).
data::Batch stack_batch(std::span<const data::Example> examples);

/// Mean loss and accuracy of the model on task.test, in eval mode, without gradients, under
/// autocast as --amp says (off, bf16 or fp16); chunks of eval_batch made by `num_workers` loader
/// threads.
EvalResult evaluate(TrainTask& task, const std::string& amp = "off", int64_t num_workers = 0);

/// Parameters for weight decay (rank >= 2: weights of linear, conv and embedding layers) and the
/// rest (biases, norm scales and shifts), as PyTorch recipes split them.
std::pair<std::vector<Tensor>, std::vector<Tensor>> split_for_weight_decay(const nn::Module& m);

/// SGD over `m` with the configuration's lr and momentum, and its weight decay on the weights of
/// split_for_weight_decay only: the optimizer of the SGD trainers.
std::unique_ptr<optim::Optimizer> sgd_for(const nn::Module& m, const TrainConfig& config);

/// AdamW over `m` with the configuration's lr, and its weight decay on the weights of
/// split_for_weight_decay only: the optimizer of char_gpt and of imagenet_resnet50's
/// --optimizer adamw.
std::unique_ptr<optim::Optimizer> adamw_for(const nn::Module& m, const TrainConfig& config);

}  // namespace lt::examples
