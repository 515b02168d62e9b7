#include "examples/trainer/progress_display.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace lt::examples {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

bool ProgressDisplay::bar_due() const {
  return terminal() &&
         std::chrono::steady_clock::now() - last_draw_ > std::chrono::milliseconds(100);
}

void ProgressDisplay::bar(const ProgressInfo& p) {
  if (!terminal()) return;
  constexpr int kWidth = 24;
  const int filled = p.steps_in_epoch > 0
                         ? static_cast<int>(kWidth * p.step_in_epoch / p.steps_in_epoch)
                         : kWidth;
  const std::string bar = std::string(static_cast<size_t>(filled), '=') +
                          std::string(static_cast<size_t>(kWidth - filled), ' ');
  fmt::print("\r\033[Kepoch {}/{} [{}] {}/{}  loss {:.4f}  {:.0f} samples/s  ETA {}", p.epoch,
             p.epochs, bar, p.step_in_epoch, p.steps_in_epoch, p.mean_loss, p.samples_per_s,
             clock_text(p.eta_s));
  std::fflush(stdout);
  bar_open_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void ProgressDisplay::line(const ProgressInfo& p, double lr) {
  if (!plain()) return;
  fmt::print("step {:>6}  epoch {}/{}  loss {:.4f}  lr {:.4g}  {:.0f} samples/s  {:.3g} ms/step  "
             "data wait {:.3g} ms{}{}\n",
             p.step, p.epoch, p.epochs, p.mean_loss, lr, p.samples_per_s, p.ms_per_step,
             p.data_wait_ms, p.peak_mb < 0 ? "" : fmt::format("  peak {:.0f} MB", p.peak_mb),
             p.loss_scale < 0 ? ""
                              : fmt::format("  scale {:g}  skipped {}", p.loss_scale, p.skipped));
  std::fflush(stdout);
}

void ProgressDisplay::finish_bar() {
  if (!bar_open_) return;
  fmt::print("\n");
  bar_open_ = false;
}

}  // namespace lt::examples
