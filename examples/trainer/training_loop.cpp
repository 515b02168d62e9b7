#include "examples/trainer/training_loop.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "lt/amp.h"
#include "lt/lt.h"
#include "lt/metrics.h"

namespace lt::examples {
namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double peak_mb() { return static_cast<double>(memory_stats().peak_bytes) / (1 << 20); }

// The ranks' values of one number, reduced (a collective: every rank calls it at the same
// point of the run). Eager, so it adds no graph.
double over_ranks(double v, dist::ReduceOp op) {
  if (dist::world_size() == 1) return v;
  ModeGuard eager(Mode::Eager);
  return dist::all_reduce(from_vector(std::vector<double>{v}, {}), op).item<double>();
}

}  // namespace

void TrainingLoop::LogWindow::restart(int64_t last) {
  loss = zero();
  nonfinite = zero();
  scaler_skips = zero();
  steps = 0;
  first = last + 1;
  ms = 0;
  data_wait_ms = 0;
}

Tensor TrainingLoop::LogWindow::zero() {
  ModeGuard eager(Mode::Eager);  // device data: every step's graph reads it as a parameter
  return zeros({});
}

TrainingLoop::TrainingLoop(TrainTask& task, const TrainConfig& c, const TrainState& state,
                           data::DataLoader& batches, const RunLength& length,
                           const Replicas& replicas, const TrainProgress& start)
    : task_(task),
      c_(c),
      state_(state),
      batches_(batches),
      length_(length),
      replicas_(replicas),
      autocast_(amp_mode(c.amp)),
      p_(start),
      csv_(replicas.lead() ? log_csv_path(c) : std::string(), !c.resume.empty()),
      display_(c.quiet || !replicas.lead(), isatty(STDOUT_FILENO) != 0),
      mode_guard_(c.compiler_opt ? Mode::Lazy : Mode::Eager),
      params_(state.model.parameters()),
      compile_ns0_(metrics::total_ns("compile")),
      window_{.first = start.step + 1},
      last_lr_(state.optimizer.lr(0)) {
  state.model.train();
  // Eager replicas all-reduce gradient buckets while backward() runs, as PyTorch's DDP; lazy
  // ones in the step graph (finish() traces the all-reduces). ZeRO stage 2's step
  // reduce-scatters them instead.
  if (replicas.world > 1 && c.zero != 2) reducer_.emplace(params_);
}

void TrainingLoop::run() {
  while (p_.step < length_.total) {
    train_epoch();
    if (p_.step >= length_.total) break;
    if (c_.eval_every == 0) run_eval();
    ++p_.epoch;
    p_.batch = 0;
  }
  if (window_.steps > 0) log_row();
  display_.finish_bar();
  if (last_eval_ != p_.step) run_eval();
  if (!c_.save_dir.empty() && last_save_ != p_.step) save_checkpoint();
}

/// The rest of epoch p_.epoch from micro-batch p_.batch, or of the run where it ends first.
void TrainingLoop::train_epoch() {
  batches_.set_epoch(p_.epoch);
  batches_.seek(p_.batch);
  while (p_.step < length_.total && p_.batch + c_.accum_steps <= batches_.num_batches()) {
    // The step's loss lives until its evaluation and checkpoint are done; in lazy mode it is an
    // output of the step's graph.
    const Tensor loss = train_step();
    // The last step's evaluation and checkpoint come after the loop, in that order, so the
    // final checkpoint holds the final evaluation however the run got there.
    if (p_.step == length_.total) return;
    if (c_.eval_every > 0 && p_.step % c_.eval_every == 0) run_eval();
    if (!c_.save_dir.empty() && c_.save_every > 0 && p_.step % c_.save_every == 0)
      save_checkpoint();
  }
}

/// One optimizer step, timed, and its log row or progress bar when due; returns its loss.
Tensor TrainingLoop::train_step() {
  const auto t0 = Clock::now();
  const int64_t wait0 = metrics::total_ns("data_wait");
  state_.optimizer.zero_grad();
  Tensor loss = forward_backward();
  add_to_window(loss);
  update_parameters();
  ++p_.step;
  p_.batch = batches_.batch_index();
  const double ms = ms_since(t0);
  step_ms_.push_back(ms);
  window_.ms += ms;
  window_.data_wait_ms += static_cast<double>(metrics::total_ns("data_wait") - wait0) / 1e6;
  ++window_.steps;
  if (p_.step % c_.log_interval == 0 || p_.step == length_.total) log_row();
  else if (display_.bar_due()) display_.bar(progress(/*reduced=*/false));
  return loss;
}

/// Forward and backward passes over the step's micro-batches, their gradients adding up; the
/// step's loss: their losses, each divided by their number, summed.
Tensor TrainingLoop::forward_backward() {
  Tensor step_loss;
  for (int64_t a = 0; a < c_.accum_steps; ++a) {
    const data::Batch b = next_batch();  // held through its backward pass
    Tensor loss = micro_batch_loss(b);
    if (c_.accum_steps > 1) loss = loss * (1.0 / static_cast<double>(c_.accum_steps));
    if (reducer_) reducer_->set_sync(a + 1 == c_.accum_steps);
    (state_.scaler ? state_.scaler->scale(loss) : loss).backward();
    step_loss = a == 0 ? loss.detach() : step_loss + loss.detach();
    if (c_.compiler_opt && a + 1 < c_.accum_steps) mark_step();
  }
  return step_loss;
}

/// This rank's rows of the next micro-batch, as the task makes them (augmented, if it augments).
data::Batch TrainingLoop::next_batch() {
  data::Example b = *batches_.next();
  return {std::move(b[0]), std::move(b[1])};
}

Tensor TrainingLoop::micro_batch_loss(const data::Batch& b) {
  AutocastGuard autocast(autocast_.dtype, autocast_.on);
  auto [logits, targets] = task_.logits_and_targets(b);
  return cross_entropy(logits, targets);
}

void TrainingLoop::add_to_window(const Tensor& step_loss) {
  if (state_.scaler) {
    const Tensor finite = isfinite(step_loss);
    window_.loss = window_.loss + where(finite, step_loss, 0.0);
    window_.nonfinite = window_.nonfinite + where(finite, scalar_like(0, step_loss), 1.0);
  } else {
    window_.loss = window_.loss + step_loss;
  }
}

/// The replicas' gradients averaged, clipped, applied (by the loss scaler, if any: it skips a
/// step whose gradients are not finite), and the schedule advanced; in lazy mode, the cut.
void TrainingLoop::update_parameters() {
  optim::Optimizer& opt = state_.optimizer;
  amp::GradScaler* scaler = state_.scaler;
  if (reducer_) reducer_->finish();
  if (c_.clip_grad > 0) {
    if (scaler) scaler->unscale_(opt);  // clip the true gradients
    optim::clip_grad_norm_(params_, c_.clip_grad);
  }
  last_lr_ = opt.lr(0);
  if (scaler) {
    scaler->step(opt);  // skipped in the graph where a gradient is not finite
    window_.scaler_skips = window_.scaler_skips + scaler->found_inf(opt);
    scaler->update();
  } else {
    opt.step();
  }
  state_.scheduler.step();
  if (c_.compiler_opt) mark_step();
}

/// The window's numbers. reduced: the loss averaged over the ranks (a collective: at log rows
/// only, which every rank reaches at the same step; the progress bar, drawn when its time is due,
/// shows rank 0's).
ProgressInfo TrainingLoop::progress(bool reduced) {
  ProgressInfo i;
  i.epoch = p_.epoch + 1;
  i.epochs = length_.epochs;
  i.step_in_epoch = p_.batch / c_.accum_steps;
  i.steps_in_epoch = length_.steps_per_epoch;
  i.step = p_.step;
  auto read = [&](const Tensor& t) {
    return reduced ? dist::reduce_value(t).item<double>() : t.item<double>();
  };
  const double loss = read(window_.loss);
  const double counted = double(window_.steps) - (state_.scaler ? read(window_.nonfinite) : 0.0);
  i.mean_loss = window_.steps == 0 ? 0 : counted > 0 ? loss / counted : NAN;
  const double ms = window_.steps > 0 ? window_.ms / double(window_.steps) : 0;
  i.ms_per_step = ms;
  i.data_wait_ms = window_.steps > 0 ? window_.data_wait_ms / double(window_.steps) : 0;
  i.samples_per_s = ms > 0 ? examples_per_step() * 1e3 / ms : 0;
  i.eta_s = ms * double(length_.steps_per_epoch - i.step_in_epoch) / 1e3;
  if (state_.scaler) {
    // Every rank skips the same steps (found_inf is all-reduced), and holds the same scale.
    i.loss_scale = state_.scaler->get_scale().item<double>();
    i.skipped = std::llround(window_.scaler_skips.item<double>());
  }
  return i;
}

/// The window's row in the log and on the display (a collective), then a new window. A window
/// whose mean loss is not finite ends the run.
void TrainingLoop::log_row() {
  ProgressInfo i = progress(/*reduced=*/true);
  const double peak = over_ranks(peak_mb(), dist::ReduceOp::Max);
  i.peak_mb = peak;
  // A loss scaler skips a step whose loss or gradients are not finite (a forward overflow in
  // f16, now and then); a window in which it skipped every step has diverged all the same.
  if (!std::isfinite(i.mean_loss))
    throw Error(state_.scaler
                    ? fmt::format("training diverged: the loss was not finite at any of "
                                  "steps {} to {} (epoch {}), all skipped by the loss scaler",
                                  window_.first, p_.step, p_.epoch + 1)
                    : fmt::format("training diverged: mean loss {} over steps {} to {} "
                                  "(epoch {})",
                                  i.mean_loss, window_.first, p_.step, p_.epoch + 1));
  csv_.write({.kind = "train",
              .step = p_.step,
              .epoch = p_.epoch + 1,
              .loss = i.mean_loss,
              .lr = last_lr_,
              .samples_per_s = i.samples_per_s,
              .ms_per_step = i.ms_per_step,
              .data_wait_ms = i.data_wait_ms,
              .peak_mb = peak});
  display_.bar(i);
  display_.line(i, last_lr_);
  if (state_.scaler) run_scaler_skips_ += i.skipped;
  window_.restart(p_.step);
}

void TrainingLoop::run_eval() {
  display_.finish_bar();
  const EvalResult r = evaluate(task_, c_.amp, c_.num_workers);
  p_.best_eval_acc = std::max(p_.best_eval_acc, r.accuracy);
  if (replicas_.lead())
    fmt::print("eval  step {:>6}  epoch {}  loss {:.4f}  accuracy {:.2f}%{}\n", p_.step,
               p_.epoch + 1, r.loss, 100 * r.accuracy,
               r.top5 >= 0 ? fmt::format("  top-5 {:.2f}%", 100 * r.top5) : "");
  csv_.write({.kind = "eval",
              .step = p_.step,
              .epoch = p_.epoch + 1,
              .peak_mb = over_ranks(peak_mb(), dist::ReduceOp::Max),
              .eval_loss = r.loss,
              .eval_acc = r.accuracy,
              .eval_top5 = r.top5 >= 0 ? std::optional<double>(r.top5) : std::nullopt});
  last_eval_ = p_.step;
  final_eval_ = r;
}

void TrainingLoop::save_checkpoint() {
  // Every rank holds the same state, but for a sharded optimizer's, which every rank gathers;
  // rank 0's file resumes any world size.
  if (!replicas_.lead() && state_.optimizer.zero_stage() == 0) return;
  Checkpoint ckpt = training_checkpoint(state_, p_, c_);
  if (!replicas_.lead()) return;
  std::filesystem::create_directories(c_.save_dir);
  const std::string path = checkpoint_path(c_.save_dir, p_.step);
  save(path, ckpt.tensors, ckpt.metadata);
  display_.finish_bar();
  fmt::print("saved {}\n", path);
  last_save_ = p_.step;
}

RunSummary TrainingLoop::summary(Clock::time_point start) const {
  RunSummary s;
  s.final_eval = final_eval_;
  s.steps = static_cast<int64_t>(step_ms_.size());
  s.total_s = ms_since(start) / 1e3;
  s.compile_s = static_cast<double>(metrics::total_ns("compile") - compile_ns0_) / 1e9;
  if (!step_ms_.empty()) {
    std::vector<double> v = step_ms_;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    s.steady_ms = v[v.size() / 2];
    s.samples_per_s = examples_per_step() * 1e3 / s.steady_ms;
  }
  s.peak_mb = over_ranks(peak_mb(), dist::ReduceOp::Max);
  return s;
}

void TrainingLoop::print_summary(const RunSummary& s) const {
  fmt::print(
      "done: {} steps in {:.1f} s (compile {:.1f} s), median {:.3f} ms/step = {:.0f} samples/s, "
      "peak memory {:.1f} MB, test accuracy {:.2f}%\n",
      s.steps, s.total_s, s.compile_s, s.steady_ms, s.samples_per_s, s.peak_mb,
      100 * s.final_eval.accuracy);
  if (state_.scaler)
    fmt::print("loss scaler: scale {:g} at the end, {} of {} steps skipped\n",
               state_.scaler->get_scale().item<double>(), run_scaler_skips_, s.steps);
  if (c_.compiler_opt)
    fmt::print(
        "lazy: {} graphs prepared, {} cache hits, {} syncs, planned peak {:.1f} MB (the largest "
        "graph's; LT_METRICS=1 for the full report)\n",
        metrics::counter("cache_miss"), metrics::counter("cache_hit"), metrics::counter("sync"),
        static_cast<double>(debug::planned_peak_bytes()) / (1 << 20));
}

double TrainingLoop::examples_per_step() const {
  return static_cast<double>(c_.batch_size * c_.accum_steps);
}

}  // namespace lt::examples
