// The command line every example trainer shares: one set of flags with the same names, meanings
// and checks, so `fmnist_mlp --help` and `fmnist_cnn --help` read alike. A trainer sets its own
// defaults in a TrainConfig before add_train_flags registers the flags.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "examples/setting_flags.h"
#include "lt/serialize.h"

namespace lt::examples {

struct TrainConfig {
  bool compiler_opt = false;
  int64_t epochs = 1;
  int64_t max_steps = -1;  ///< the global step at which training stops; -1: epochs decide
  int64_t batch_size = 64;
  double lr = 0.05;
  double lrf = 0;                 ///< the cosine schedule ends at lr * lrf
  std::string schedule = "cosine";  ///< cosine or constant (after the warmup)
  int64_t warmup_steps = 0;
  double weight_decay = 0;  ///< on weights of rank >= 2 only (not biases or norms)
  double momentum = 0.9;    ///< SGD trainers
  double clip_grad = 0;     ///< max global gradient norm; 0: no clipping
  int64_t accum_steps = 1;
  int zero = 0;  ///< ZeRO stage of the optimizer state (0: every rank keeps all of it)
  uint64_t seed = 0;
  int64_t train_limit = -1;
  int64_t test_limit = -1;
  /// Data loader threads making the next batches while the step runs; 0 makes each batch when
  /// the step asks for it. Batches are the same whatever the number.
  int64_t num_workers = 0;
  int64_t eval_every = 0;  ///< steps; 0: at the end of each epoch
  int64_t log_interval = 50;
  std::string log_csv;
  std::string save_dir;
  int64_t save_every = 0;  ///< steps; 0: only at the end (with --save-dir)
  std::string resume;
  std::string weights;
  std::string data_dir;
  std::string plot;
  bool quiet = false;
  std::string amp = "off";  ///< off, bf16 or fp16: the forward pass under lt::AutocastGuard
  /// Loss scaling (lt::amp::GradScaler): "dynamic", "off", or a static scale; empty: dynamic
  /// with --amp fp16, else off.
  std::string loss_scale;
  SettingFlags settings;  ///< --threads, --opt-level, --dump-ir
};

/// Registers the shared flags on `app`, with `config`'s values as the defaults shown by --help.
/// `with_momentum` adds --momentum (SGD trainers).
void add_train_flags(CLI::App& app, TrainConfig& config, bool with_momentum);

/// --loss-scale with its default resolved: "dynamic", "off" or the static scale's text.
std::string loss_scale_mode(const TrainConfig& config);

/// --log-csv with its default resolved: next to --plot's image when only --plot is given.
std::string log_csv_path(const TrainConfig& config);

/// The configuration as checkpoint metadata, `config.<flag>` = value.
StringDict config_metadata(const TrainConfig& config);

}  // namespace lt::examples
