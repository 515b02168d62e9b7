#include "examples/trainer/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "examples/trainer/training_loop.h"
#include "lt/amp.h"
#include "lt/data_loader.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/threads.h"

namespace lt::examples {
namespace {

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

/// Joins the job, if there is one: checks that the batch splits over its ranks and gives every
/// rank rank 0's parameters.
Replicas join_replicas(nn::Module& model, const TrainConfig& c) {
  dist::init();
  Replicas r{.world = dist::world_size(), .rank = dist::rank()};
  if (c.batch_size % r.world != 0)
    throw InputError(
        fmt::format("--batch-size {} does not split evenly over {} ranks", c.batch_size, r.world));
  r.local_batch = c.batch_size / r.world;
  if (r.world > 1) dist::broadcast_parameters(model);
  return r;
}

/// The rank's rows of each global micro-batch of an epoch, in order: the epoch's permutation
/// fixed by (seed, epoch), cut into global batches of `global_batch` (a last, smaller one is
/// dropped), rows [rank * local_batch, (rank + 1) * local_batch) of each.
data::Sampler replica_rows(int64_t n, uint64_t seed, int64_t global_batch, const Replicas& r) {
  return [=](int64_t epoch) {
    const std::vector<int64_t> order = data::shuffled_indices(n, seed, epoch);
    std::vector<int64_t> mine;
    for (int64_t start = 0; start + global_batch <= n; start += global_batch) {
      const auto first = order.begin() + start + r.rank * r.local_batch;
      mine.insert(mine.end(), first, first + r.local_batch);
    }
    return mine;
  };
}

std::unique_ptr<data::DataLoader> train_loader(const TrainTask& task, const TrainConfig& c,
                                               const Replicas& r) {
  data::Collate collate;  // default: stacked (a TensorDataset gathers its rows at once)
  if (task.train_batch)
    collate = [make = task.train_batch, first_row = r.rank * r.local_batch](
                  std::span<const data::Example> examples, int64_t epoch, int64_t batch) {
      data::Batch b = make(examples, epoch, batch, first_row);
      return data::Example{std::move(b.images), std::move(b.labels)};
    };
  return std::make_unique<data::DataLoader>(
      task.train, data::DataLoaderOptions{
                      .batch_size = r.local_batch,
                      .sampler = replica_rows(task.train->size(), c.seed, c.batch_size, r),
                      .collate = std::move(collate),
                      .num_workers = c.num_workers});
}

RunLength run_length(const TrainTask& task, const TrainConfig& c,
                     const data::DataLoader& batches) {
  RunLength n;
  n.steps_per_epoch = batches.num_batches() / c.accum_steps;
  if (n.steps_per_epoch == 0)
    throw InputError(
        fmt::format("{} training examples make no step of --batch-size {} x --accum-steps {}",
                    task.train->size(), c.batch_size, c.accum_steps));
  n.total = c.max_steps >= 0 ? c.max_steps : c.epochs * n.steps_per_epoch;
  n.epochs = (n.total + n.steps_per_epoch - 1) / n.steps_per_epoch;
  return n;
}

/// Loads --resume (where the run starts) and --weights, each announced by rank 0.
TrainProgress load_start(const TrainTask& task, const TrainConfig& c, const TrainState& state,
                         bool lead) {
  TrainProgress p;
  if (!c.resume.empty()) {
    p = resume_training(c.resume, state, c);
    if (lead)
      fmt::print("{}: resumed from {} at step {} (epoch {}, batch {})\n", task.name, c.resume,
                 p.step, p.epoch + 1, p.batch);
  }
  if (!c.weights.empty()) {
    const LoadReport r = load_model_weights(c.weights, state.model);
    std::string report = r.str();
    while (!report.empty() && report.back() == '\n') report.pop_back();
    if (lead)
      fmt::print("{}: weights from {}{}\n", task.name, c.weights,
                 r.clean() ? ": every tensor matched" : ", not matched:\n" + report);
  }
  return p;
}

void print_configuration(const TrainTask& task, const TrainConfig& c, const RunLength& n,
                         const Replicas& replicas, int64_t state_bytes, int64_t unsharded_bytes) {
  fmt::print(
      "{}: {}, {} train / {} test examples, batch {} x {}, lr {} ({}{}), {} steps "
      "({} epochs), {} threads{}, {} mode{}{}\n",
      task.name, task.description, task.train->size(), task.test->size(), c.batch_size,
      c.accum_steps, c.lr, c.schedule,
      c.warmup_steps > 0 ? fmt::format(", {} warmup", c.warmup_steps) : "", n.total, n.epochs,
      num_threads(),
      c.num_workers > 0 ? fmt::format(" + {} loader workers", c.num_workers) : "",
      c.compiler_opt ? "lazy" : "eager", amp_text(c),
      replicas.world > 1
          ? fmt::format(", {} ranks of {} examples", replicas.world, replicas.local_batch)
          : "");
  if (c.zero > 0)
    fmt::print("{}: ZeRO stage {}: this rank keeps {:.3f} MB of the optimizer state's {:.3f} MB\n",
               task.name, c.zero, static_cast<double>(state_bytes) / 1e6,
               static_cast<double>(unsharded_bytes) / 1e6);
}

/// --plot: the CSV log drawn by scripts/plot_log.sh, when gnuplot is there.
void plot_log(const TrainConfig& c) {
  if (c.plot.empty()) return;
  const std::string csv = log_csv_path(c);
  const std::string cmd =
      fmt::format("bash '{}' '{}' '{}' >/dev/null", LT_PLOT_SCRIPT, csv, c.plot);
  std::fflush(stdout);
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    fmt::print("--plot: gnuplot is not installed; the log is in {}\n", csv);
  else if (std::system(cmd.c_str()) != 0) throw Error(fmt::format("--plot: '{}' failed", cmd));
  else fmt::print("plot: {}\n", c.plot);
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

data::Batch stack_batch(std::span<const data::Example> examples) {
  data::Example b = data::default_collate(examples);
  if (b.size() != 2)
    throw Error(fmt::format("a trainer's examples are {{input, target}}; these have {} fields",
                            b.size()));
  return {std::move(b[0]), std::move(b[1])};
}

std::unique_ptr<optim::Optimizer> adamw_for(const nn::Module& m, const TrainConfig& c) {
  auto [decay, no_decay] = split_for_weight_decay(m);
  const optim::AdamWOptions wd{.lr = c.lr, .weight_decay = c.weight_decay};
  optim::AdamWOptions no_wd = wd;
  no_wd.weight_decay = 0;
  return std::make_unique<optim::AdamW>(std::vector<optim::ParamGroup<optim::AdamWOptions>>{
      {std::move(decay), wd}, {std::move(no_decay), no_wd}});
}

EvalResult evaluate(TrainTask& task, const std::string& amp, int64_t num_workers) {
  const AmpMode autocast_mode = amp_mode(amp);
  nn::Module& model = *task.model;
  const bool was_training = model.is_training();
  model.eval();
  NoGradGuard no_grad;
  double loss = 0, top1 = 0, top5 = 0, count = 0;
  bool has_top5 = false;
  // Replicas: rank r evaluates chunks r, r + world, ...; the sums are added up at the end. Only
  // the last chunk of all may be short, so the loader's batches are the rank's chunks.
  const int64_t world = dist::world_size(), n = task.test->size(), chunk = task.eval_batch;
  std::vector<int64_t> mine;
  for (int64_t start = dist::rank() * chunk; start < n; start += chunk * world)
    for (int64_t i = start; i < std::min(start + chunk, n); ++i) mine.push_back(i);
  data::Collate collate;  // default: stacked
  if (task.test_batch)
    collate = [make = task.test_batch](std::span<const data::Example> examples, int64_t,
                                       int64_t) {
      data::Batch b = make(examples);
      return data::Example{std::move(b.images), std::move(b.labels)};
    };
  data::DataLoader loader(task.test, {.batch_size = chunk,
                                      .sampler = [&mine](int64_t) { return mine; },
                                      .collate = std::move(collate),
                                      .num_workers = num_workers});
  while (std::optional<data::Example> chunk_data = loader.next()) {
    const data::Batch b{(*chunk_data)[0], (*chunk_data)[1]};
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
  const Replicas replicas = join_replicas(*task.model, c);
  if (c.zero == 2 && c.clip_grad > 0)
    throw InputError("--clip-grad needs every gradient averaged over the ranks, which --zero 2 "
                     "does not keep (each rank holds its chunk): use --zero 1");
  std::unique_ptr<optim::Optimizer> opt = task.make_optimizer(c);
  const int64_t unsharded_bytes = opt->state_bytes();
  if (c.zero > 0) opt->shard_state(c.zero);
  const std::unique_ptr<data::DataLoader> batches = train_loader(task, c, replicas);
  const RunLength length = run_length(task, c, *batches);
  optim::sched::Scheduler sched(*opt, make_schedule(c, std::max<int64_t>(length.total, 1)));
  const std::unique_ptr<amp::GradScaler> scaler = make_scaler(c);
  const TrainState state{task.name, *task.model, *opt, sched, scaler.get()};
  const TrainProgress start = load_start(task, c, state, replicas.lead());
  if (replicas.lead())
    print_configuration(task, c, length, replicas, opt->state_bytes(), unsharded_bytes);
  TrainingLoop loop(task, c, state, *batches, length, replicas, start);
  loop.run();
  const RunSummary summary = loop.summary(t_start);
  if (!replicas.lead()) return summary;
  loop.print_summary(summary);
  plot_log(c);
  return summary;
}

}  // namespace lt::examples
