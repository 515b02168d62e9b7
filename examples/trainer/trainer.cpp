#include "examples/trainer/trainer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "examples/trainer/csv_log.h"
#include "examples/trainer/progress_display.h"
#include "examples/trainer/training_checkpoint.h"
#include "lt/amp.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "lt/threads.h"

namespace lt::examples {
namespace {

using Clock = std::chrono::steady_clock;

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

/// The autocast of --amp: off, or on to bf16 or f16.
struct AmpMode {
  bool on;
  DType dtype;
};

AmpMode amp_mode(const std::string& amp) {
  return {amp != "off", amp == "fp16" ? DType::F16 : DType::BF16};
}

/// The loss scaler of --loss-scale (and --amp: fp16 scales dynamically unless told otherwise);
/// none when off.
std::unique_ptr<amp::GradScaler> make_scaler(const TrainConfig& c) {
  const std::string mode = loss_scale_mode(c);
  if (mode == "off") return nullptr;
  if (mode == "dynamic") return std::make_unique<amp::GradScaler>();
  double scale = 0;  // checked by --loss-scale's validator
  std::from_chars(mode.data(), mode.data() + mode.size(), scale);
  return std::make_unique<amp::GradScaler>(amp::GradScaler::constant(scale));
}

/// The configuration line's words for --amp and --loss-scale.
std::string amp_text(const TrainConfig& c) {
  const std::string scale = loss_scale_mode(c);
  std::string text = c.amp == "off" ? "" : fmt::format(", {} autocast", c.amp);
  if (scale != "off") text += fmt::format(", {} loss scale", scale);
  return text;
}

Tensor eager_zero() {
  ModeGuard eager(Mode::Eager);  // device data: every step's graph reads it as a parameter
  return zeros({});
}

optim::sched::Schedule make_schedule(const TrainConfig& c, int64_t total) {
  using namespace optim::sched;
  const int64_t after = std::max<int64_t>(total - c.warmup_steps, 1);
  Schedule then = c.schedule == "cosine" ? Schedule(CosineAnnealingLR(after, c.lrf))
                                         : Schedule(LambdaLR([](int64_t) { return 1.0; },
                                                             "constant"));
  return c.warmup_steps > 0 ? Schedule(LinearWarmup(c.warmup_steps, then)) : then;
}

/// Mean loss, and top-1 and top-5 hits, of one chunk; top-5 counts the target when fewer than 5
/// logits are strictly greater than its own (ties go the target's way).
struct ChunkSums {
  Tensor loss_sum, top1, top5;
};

ChunkSums chunk_sums(const Tensor& logits, const Tensor& targets) {
  const int64_t m = targets.numel(), classes = logits.size(1);
  ChunkSums s;
  s.loss_sum = cross_entropy(logits, targets) * static_cast<double>(m);
  s.top1 = sum(cast(eq(argmax(logits, 1), targets), DType::I64));
  if (classes > 5) {
    const Tensor own = sum(logits * one_hot(targets, classes), {1}, /*keepdim=*/true);
    const Tensor above = sum(cast(gt(logits, own), DType::I64), {1});
    s.top5 = sum(cast(lt(above, full({}, 5, DType::I64)), DType::I64));
  }
  return s;
}

}  // namespace

std::pair<std::vector<Tensor>, std::vector<Tensor>> split_for_weight_decay(const nn::Module& m) {
  std::pair<std::vector<Tensor>, std::vector<Tensor>> out;
  for (const Tensor& p : m.parameters()) (p.rank() >= 2 ? out.first : out.second).push_back(p);
  return out;
}

std::unique_ptr<optim::Optimizer> sgd_for(const nn::Module& m, const TrainConfig& c) {
  auto [decay, no_decay] = split_for_weight_decay(m);
  const optim::SGDOptions no_wd{.lr = c.lr, .momentum = c.momentum};
  optim::SGDOptions wd = no_wd;
  wd.weight_decay = c.weight_decay;
  return std::make_unique<optim::SGD>(std::vector<optim::ParamGroup<optim::SGDOptions>>{
      {std::move(decay), wd}, {std::move(no_decay), no_wd}});
}

EvalResult evaluate(TrainTask& task, const data::Dataset& ds, const std::string& amp) {
  const AmpMode autocast_mode = amp_mode(amp);
  nn::Module& model = *task.model;
  const bool was_training = model.is_training();
  model.eval();
  NoGradGuard no_grad;
  double loss = 0, top1 = 0, top5 = 0, count = 0;
  bool has_top5 = false;
  // Replicas: rank r evaluates chunks r, r + world, ...; the sums are added up at the end.
  const int64_t world = dist::world_size(), first = dist::rank() * task.eval_batch;
  for (int64_t start = first; start < ds.size(); start += task.eval_batch * world) {
    data::Batch b;
    {
      // Chunks cut eagerly enter a lazy graph as input data: slicing in the graph would bake
      // `start` in and compile once per chunk.
      ModeGuard eager(Mode::Eager);
      b.images = slice(ds.images, 0, start, std::min(start + task.eval_batch, ds.size()));
      b.labels = slice(ds.labels, 0, start, std::min(start + task.eval_batch, ds.size()));
    }
    AutocastGuard autocast(autocast_mode.dtype, autocast_mode.on);
    auto [logits, targets] = task.logits_and_targets(b);
    const ChunkSums s = chunk_sums(logits, targets);
    if (mode() == Mode::Lazy) mark_step();
    loss += s.loss_sum.item<double>();
    top1 += static_cast<double>(s.top1.item<int64_t>());
    if (s.top5.defined()) {
      top5 += static_cast<double>(s.top5.item<int64_t>());
      has_top5 = true;
    }
    count += static_cast<double>(targets.numel());
  }
  model.train(was_training);
  if (world > 1) {
    ModeGuard eager(Mode::Eager);
    const std::vector<double> sums = dist::reduce_value(
        from_vector(std::vector<double>{loss, top1, top5, count, has_top5 ? 1.0 : 0.0}, {5}),
        /*average=*/false).to_vector<double>();
    loss = sums[0], top1 = sums[1], top5 = sums[2], count = sums[3], has_top5 = sums[4] > 0;
  }
  if (count == 0) return {};
  return {loss / count, top1 / count, has_top5 ? top5 / count : -1};
}

RunSummary train(TrainTask& task, const TrainConfig& c) {
  const auto t_start = Clock::now();
  nn::Module& model = *task.model;
  // Replicas (started by mpirun or lt-launch): every rank walks the same global batches and
  // trains on its rows of each; rank 0 alone prints, logs and saves.
  dist::init();
  const int64_t world = dist::world_size(), rank = dist::rank();
  const bool lead = rank == 0;
  if (c.batch_size % world != 0)
    throw InputError(fmt::format("--batch-size {} does not split evenly over {} ranks",
                                 c.batch_size, world));
  const int64_t local_batch = c.batch_size / world;
  auto rows_of_rank = [&](data::Batch b) {
    if (world == 1) return b;
    ModeGuard eager(Mode::Eager);  // device data: a slice in the step would differ per rank
    b.images = slice(b.images, 0, rank * local_batch, (rank + 1) * local_batch);
    b.labels = slice(b.labels, 0, rank * local_batch, (rank + 1) * local_batch);
    return b;
  };
  if (world > 1) dist::broadcast_parameters(model);
  std::unique_ptr<optim::Optimizer> opt = task.make_optimizer(c);
  data::BatchIterator batches(task.train,
                              {.batch_size = c.batch_size, .seed = c.seed, .drop_last = true});
  const int64_t steps_per_epoch = batches.num_batches() / c.accum_steps;
  if (steps_per_epoch == 0)
    throw InputError(fmt::format(
        "{} training examples make no step of --batch-size {} x --accum-steps {}",
        task.train.size(), c.batch_size, c.accum_steps));
  const int64_t total = c.max_steps >= 0 ? c.max_steps : c.epochs * steps_per_epoch;
  const int64_t epochs = (total + steps_per_epoch - 1) / steps_per_epoch;
  optim::sched::Scheduler sched(*opt, make_schedule(c, std::max<int64_t>(total, 1)));
  const std::unique_ptr<amp::GradScaler> scaler = make_scaler(c);
  const AmpMode autocast_mode = amp_mode(c.amp);
  const TrainState state{task.name, model, *opt, sched, scaler.get()};

  TrainProgress p;
  if (!c.resume.empty()) {
    p = resume_training(c.resume, state, c);
    if (lead)
      fmt::print("{}: resumed from {} at step {} (epoch {}, batch {})\n", task.name, c.resume,
               p.step, p.epoch + 1, p.batch);
  }
  if (!c.weights.empty()) {
    const LoadReport r = load_model_weights(c.weights, model);
    std::string report = r.str();
    while (!report.empty() && report.back() == '\n') report.pop_back();
    if (lead)
      fmt::print("{}: weights from {}{}\n", task.name, c.weights,
               r.clean() ? ": every tensor matched" : ", not matched:\n" + report);
  }
  if (lead)
    fmt::print(
        "{}: {}, {} train / {} test examples, batch {} x {}, lr {} ({}{}), {} steps "
        "({} epochs), {} threads, {} mode{}{}\n",
        task.name, task.description, task.train.size(), task.test.size(), c.batch_size,
        c.accum_steps, c.lr, c.schedule,
        c.warmup_steps > 0 ? fmt::format(", {} warmup", c.warmup_steps) : "", total, epochs,
        num_threads(), c.compiler_opt ? "lazy" : "eager",
        amp_text(c),
        world > 1 ? fmt::format(", {} ranks of {} examples", world, local_batch) : "");

  const std::string csv_path = c.log_csv.empty() && !c.plot.empty() ? c.plot + ".csv" : c.log_csv;
  CsvLog csv(lead ? csv_path : std::string(), !c.resume.empty());
  ProgressDisplay display(c.quiet || !lead, isatty(STDOUT_FILENO) != 0);
  ModeGuard mode_guard(c.compiler_opt ? Mode::Lazy : Mode::Eager);
  const bool lazy = c.compiler_opt;
  const std::vector<Tensor> params = model.parameters();
  const int64_t compile_ns0 = metrics::total_ns("compile");
  model.train();

  // The window's summed step losses; with a loss scaler, of the finite ones only, the steps with
  // a non-finite loss (which the scaler skips) counted in window_nonfinite. A step the scaler
  // skips for a non-finite gradient under a finite loss still counts in the loss; every step it
  // skips counts in window_scaler_skips. All stay on the device.
  Tensor window_loss = eager_zero(), window_nonfinite = eager_zero();
  Tensor window_scaler_skips = eager_zero();
  int64_t run_scaler_skips = 0;
  int64_t window_steps = 0, window_first = p.step + 1, last_eval = -1, last_save = -1;
  double window_ms = 0, last_lr = opt->lr(0);
  std::vector<double> step_ms;
  RunSummary summary;
  const double examples_per_step = static_cast<double>(c.batch_size * c.accum_steps);

  // reduced: the loss averaged over the ranks (a collective: at log rows only, which every rank
  // reaches at the same step; the progress bar, drawn when its time is due, shows rank 0's).
  auto info = [&](bool reduced) {
    ProgressInfo i;
    i.epoch = p.epoch + 1;
    i.epochs = epochs;
    i.step_in_epoch = p.batch / c.accum_steps;
    i.steps_in_epoch = steps_per_epoch;
    i.step = p.step;
    auto read = [&](const Tensor& t) {
      return reduced ? dist::reduce_value(t).item<double>() : t.item<double>();
    };
    const double loss = read(window_loss);
    const double counted = double(window_steps) - (scaler ? read(window_nonfinite) : 0.0);
    i.mean_loss = window_steps == 0 ? 0 : counted > 0 ? loss / counted : NAN;
    const double ms = window_steps > 0 ? window_ms / double(window_steps) : 0;
    i.samples_per_s = ms > 0 ? examples_per_step * 1e3 / ms : 0;
    i.eta_s = ms * double(steps_per_epoch - i.step_in_epoch) / 1e3;
    if (scaler) {
      // Every rank skips the same steps (found_inf is all-reduced), and holds the same scale.
      i.loss_scale = scaler->get_scale().item<double>();
      i.skipped = std::llround(window_scaler_skips.item<double>());
    }
    return i;
  };
  auto log_row = [&] {
    const ProgressInfo i = info(/*reduced=*/true);
    const double peak = over_ranks(peak_mb(), dist::ReduceOp::Max);
    // A loss scaler skips a step whose loss or gradients are not finite (a forward overflow in
    // f16, now and then); a window in which it skipped every step has diverged all the same.
    if (!std::isfinite(i.mean_loss))
      throw Error(scaler ? fmt::format("training diverged: the loss was not finite at any of "
                                       "steps {} to {} (epoch {}), all skipped by the loss scaler",
                                       window_first, p.step, p.epoch + 1)
                         : fmt::format("training diverged: mean loss {} over steps {} to {} "
                                       "(epoch {})",
                                       i.mean_loss, window_first, p.step, p.epoch + 1));
    csv.write({.kind = "train", .step = p.step, .epoch = p.epoch + 1, .loss = i.mean_loss,
               .lr = last_lr, .samples_per_s = i.samples_per_s,
               .ms_per_step = window_ms / double(window_steps), .peak_mb = peak});
    display.bar(i);
    display.line(i, last_lr);
    window_loss = eager_zero();
    window_nonfinite = eager_zero();
    if (scaler) run_scaler_skips += i.skipped;
    window_scaler_skips = eager_zero();
    window_steps = 0;
    window_ms = 0;
    window_first = p.step + 1;
  };
  auto run_eval = [&] {
    display.finish_bar();
    const EvalResult r = evaluate(task, task.test, c.amp);
    p.best_eval_acc = std::max(p.best_eval_acc, r.accuracy);
    if (lead)
      fmt::print("eval  step {:>6}  epoch {}  loss {:.4f}  accuracy {:.2f}%{}\n", p.step,
               p.epoch + 1, r.loss, 100 * r.accuracy,
               r.top5 >= 0 ? fmt::format("  top-5 {:.2f}%", 100 * r.top5) : "");
    csv.write({.kind = "eval", .step = p.step, .epoch = p.epoch + 1,
               .peak_mb = over_ranks(peak_mb(), dist::ReduceOp::Max),
               .eval_loss = r.loss, .eval_acc = r.accuracy});
    last_eval = p.step;
    summary.final_eval = r;
  };
  auto save_checkpoint = [&] {
    if (!lead) return;  // every rank holds the same state; rank 0's file resumes any of them
    std::filesystem::create_directories(c.save_dir);
    const std::string path = checkpoint_path(c.save_dir, p.step);
    save_training_checkpoint(path, state, p, c);
    display.finish_bar();
    fmt::print("saved {}\n", path);
    last_save = p.step;
  };

  // Eager replicas all-reduce gradient buckets while backward() runs, as PyTorch's DDP; lazy
  // ones in the step graph (finish() traces the all-reduces).
  std::optional<dist::GradientReducer> reducer;
  if (world > 1) reducer.emplace(params);
  while (p.step < total) {
    batches.start_epoch(p.epoch);
    batches.seek(p.batch);
    while (p.step < total && p.batch + c.accum_steps <= batches.num_batches()) {
      const auto t0 = Clock::now();
      opt->zero_grad();
      Tensor step_loss;
      for (int64_t a = 0; a < c.accum_steps; ++a) {
        const int64_t index = batches.batch_index();
        std::optional<data::Batch> b;
        if (task.augment) {  // its draws go by row of the global batch: augment it all, then cut
          b = task.augment(std::move(*batches.next()), p.epoch, index);
          b = rows_of_rank(std::move(*b));
        } else {
          b = batches.next_rows(rank * local_batch, local_batch);
        }
        Tensor loss;
        {
          AutocastGuard autocast(autocast_mode.dtype, autocast_mode.on);
          auto [logits, targets] = task.logits_and_targets(*b);
          loss = cross_entropy(logits, targets);
        }
        if (c.accum_steps > 1) loss = loss * (1.0 / static_cast<double>(c.accum_steps));
        if (reducer) reducer->set_sync(a + 1 == c.accum_steps);
        (scaler ? scaler->scale(loss) : loss).backward();
        step_loss = a == 0 ? loss.detach() : step_loss + loss.detach();
        if (lazy && a + 1 < c.accum_steps) mark_step();
      }
      if (scaler) {
        const Tensor finite = isfinite(step_loss);
        window_loss = window_loss + where(finite, step_loss, 0.0);
        window_nonfinite = window_nonfinite + where(finite, scalar_like(0, step_loss), 1.0);
      } else {
        window_loss = window_loss + step_loss;
      }
      if (reducer) reducer->finish();
      if (c.clip_grad > 0) {
        if (scaler) scaler->unscale_(*opt);  // clip the true gradients
        optim::clip_grad_norm_(params, c.clip_grad);
      }
      last_lr = opt->lr(0);
      if (scaler) {
        scaler->step(*opt);  // skipped in the graph where a gradient is not finite
        window_scaler_skips = window_scaler_skips + scaler->found_inf(*opt);
        scaler->update();
      } else {
        opt->step();
      }
      sched.step();
      if (lazy) mark_step();
      ++p.step;
      p.batch = batches.batch_index();
      const double ms = ms_since(t0);
      step_ms.push_back(ms);
      window_ms += ms;
      ++window_steps;
      if (p.step % c.log_interval == 0 || p.step == total) log_row();
      else if (display.bar_due()) display.bar(info(/*reduced=*/false));
      // The last step's evaluation and checkpoint come after the loop, in that order, so the
      // final checkpoint holds the final evaluation however the run got there.
      if (p.step == total) break;
      if (c.eval_every > 0 && p.step % c.eval_every == 0) run_eval();
      if (!c.save_dir.empty() && c.save_every > 0 && p.step % c.save_every == 0)
        save_checkpoint();
    }
    if (p.step >= total) break;
    if (c.eval_every == 0) run_eval();
    ++p.epoch;
    p.batch = 0;
  }
  if (window_steps > 0) log_row();
  display.finish_bar();
  if (last_eval != p.step) run_eval();
  if (!c.save_dir.empty() && last_save != p.step) save_checkpoint();

  summary.steps = static_cast<int64_t>(step_ms.size());
  summary.total_s = ms_since(t_start) / 1e3;
  summary.compile_s = static_cast<double>(metrics::total_ns("compile") - compile_ns0) / 1e9;
  if (!step_ms.empty()) {
    std::vector<double> v = step_ms;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    summary.steady_ms = v[v.size() / 2];
    summary.samples_per_s = examples_per_step * 1e3 / summary.steady_ms;
  }
  summary.peak_mb = over_ranks(peak_mb(), dist::ReduceOp::Max);
  if (!lead) return summary;
  fmt::print(
      "done: {} steps in {:.1f} s (compile {:.1f} s), median {:.3f} ms/step = {:.0f} samples/s, "
      "peak memory {:.1f} MB, test accuracy {:.2f}%\n",
      summary.steps, summary.total_s, summary.compile_s, summary.steady_ms, summary.samples_per_s,
      summary.peak_mb, 100 * summary.final_eval.accuracy);
  if (scaler)
    fmt::print("loss scaler: scale {:g} at the end, {} of {} steps skipped\n",
               scaler->get_scale().item<double>(), run_scaler_skips, summary.steps);
  if (lazy)
    fmt::print(
        "lazy: {} graphs prepared, {} cache hits, {} syncs (LT_METRICS=1 for the full report)\n",
        metrics::counter("cache_miss"), metrics::counter("cache_hit"), metrics::counter("sync"));
  if (!c.plot.empty()) {
    const std::string cmd =
        fmt::format("bash '{}' '{}' '{}' >/dev/null", LT_PLOT_SCRIPT, csv_path, c.plot);
    std::fflush(stdout);
    if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
      fmt::print("--plot: gnuplot is not installed; the log is in {}\n", csv_path);
    else if (std::system(cmd.c_str()) != 0)
      throw Error(fmt::format("--plot: '{}' failed", cmd));
    else
      fmt::print("plot: {}\n", c.plot);
  }
  return summary;
}

}  // namespace lt::examples
