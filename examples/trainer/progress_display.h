// What a trainer shows while it runs: on a terminal, a progress bar per epoch redrawn in place
// (steps done/total, running mean loss, samples/s, ETA); otherwise (a log file, CI) one plain
// line per --log-interval steps; nothing with --quiet.
#pragma once
#include <chrono>
#include <cstdint>

namespace lt::examples {

struct ProgressInfo {
  int64_t epoch = 0;  ///< 1-based
  int64_t epochs = 0;
  int64_t step_in_epoch = 0;
  int64_t steps_in_epoch = 0;
  int64_t step = 0;  ///< global
  double mean_loss = 0;
  double samples_per_s = 0;
  double eta_s = 0;  ///< to the end of the epoch
  double ms_per_step = 0;
  double data_wait_ms = 0;  ///< per step, waiting on the data loader
  double peak_mb = -1;      ///< at log lines; negative on the bar
  // With a loss scaler (--amp fp16, --loss-scale): the scale after the last step, and how many
  // steps since the previous line it skipped for a non-finite gradient; negative without one.
  double loss_scale = -1;
  int64_t skipped = -1;
};

class ProgressDisplay {
 public:
  ProgressDisplay(bool quiet, bool terminal) : quiet_(quiet), terminal_(terminal) {}

  /// The bar wants a redraw now (at most about ten times a second).
  bool bar_due() const;
  /// Redraws the bar (terminal only).
  void bar(const ProgressInfo& p);
  /// A plain line (no terminal), for a logged step.
  void line(const ProgressInfo& p, double lr);
  /// Ends the bar's line so that other output starts on a fresh one.
  void finish_bar();
  bool terminal() const { return terminal_ && !quiet_; }
  bool plain() const { return !terminal_ && !quiet_; }

 private:
  bool quiet_, terminal_;
  bool bar_open_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace lt::examples
