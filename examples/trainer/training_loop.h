// The loop of train() (trainer.h): the steps, epoch after epoch, with the log rows, evaluations
// and checkpoints they call for. train() sets up what it runs on: the replicas, the run's length,
// the optimizer, schedule and loss scaler (in a TrainState), and where it starts.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "examples/trainer/csv_log.h"
#include "examples/trainer/progress_display.h"
#include "examples/trainer/trainer.h"
#include "examples/trainer/training_checkpoint.h"
#include "lt/data_loader.h"
#include "lt/dist.h"
#include "lt/lazy.h"

namespace lt::examples {

using Clock = std::chrono::steady_clock;

/// The autocast of --amp: off, or on to bf16 or f16.
struct AmpMode {
  bool on;
  DType dtype;
};
inline AmpMode amp_mode(const std::string& amp) {
  return {amp != "off", amp == "fp16" ? DType::F16 : DType::BF16};
}

/// This process's place among the replicas (started by mpirun or lt-launch): every rank walks
/// the same global batches and trains on its rows of each; rank 0 alone prints, logs and saves.
struct Replicas {
  int64_t world = 1, rank = 0, local_batch = 0;

  bool lead() const { return rank == 0; }
};

/// How long the run is: optimizer steps per epoch, in all (--max-steps, else --epochs), and the
/// epochs they reach into.
struct RunLength {
  int64_t steps_per_epoch = 0, total = 0, epochs = 0;
};

/// It holds the run's mode (lazy or eager) while it lives, and opens the CSV log.
class TrainingLoop {
 public:
  TrainingLoop(TrainTask& task, const TrainConfig& c, const TrainState& state,
               data::DataLoader& batches, const RunLength& length, const Replicas& replicas,
               const TrainProgress& start);

  /// Trains to the last step, then logs, evaluates and saves what is still due.
  void run();
  /// What the run did (a collective: every rank calls it).
  RunSummary summary(Clock::time_point start) const;
  /// The summary's lines (rank 0).
  void print_summary(const RunSummary& s) const;

 private:
  /// The steps since the last log row. Their summed losses stay on the device: with a loss
  /// scaler, of the finite ones only, the steps with a non-finite loss (which the scaler skips)
  /// counted in `nonfinite`. A step the scaler skips for a non-finite gradient under a finite
  /// loss still counts in the loss; every step it skips counts in `scaler_skips`.
  struct LogWindow {
    Tensor loss = zero(), nonfinite = zero(), scaler_skips = zero();
    int64_t steps = 0;
    int64_t first = 1;  ///< the window's first step
    double ms = 0;
    double data_wait_ms = 0;

    /// The window after step `last`: each sum is replaced in turn, so no more than one new
    /// zero is held beside the old sums.
    void restart(int64_t last);
    static Tensor zero();
  };

  void train_epoch();
  Tensor train_step();
  Tensor forward_backward();
  data::Batch next_batch();
  Tensor micro_batch_loss(const data::Batch& b);
  void add_to_window(const Tensor& step_loss);
  void update_parameters();
  ProgressInfo progress(bool reduced);
  void log_row();
  void run_eval();
  void save_checkpoint();
  double examples_per_step() const;

  TrainTask& task_;
  const TrainConfig& c_;
  const TrainState& state_;
  data::DataLoader& batches_;
  const RunLength length_;
  const Replicas replicas_;
  const AmpMode autocast_;
  TrainProgress p_;
  CsvLog csv_;
  ProgressDisplay display_;
  ModeGuard mode_guard_;
  const std::vector<Tensor> params_;
  const int64_t compile_ns0_;
  LogWindow window_;
  int64_t run_scaler_skips_ = 0, last_eval_ = -1, last_save_ = -1;
  double last_lr_;
  std::vector<double> step_ms_;
  EvalResult final_eval_;
  std::optional<dist::GradientReducer> reducer_;
};

}  // namespace lt::examples
