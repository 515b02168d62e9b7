#include "examples/trainer/train_config.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "tools/cli.h"

namespace lt::examples {

void add_train_flags(CLI::App& app, TrainConfig& c, bool with_momentum) {
  using lt::cli::integer_at_least;
  using lt::cli::number_at_least;
  // The last value of a flag given twice wins, so scripts (scripts/run_main.sh) can set defaults
  // that their arguments override.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("--compiler-opt", c.compiler_opt,
               "Lazy mode: trace each step, cut it at mark_step, compile, cache and run the graph");
  app.add_option("--epochs", c.epochs, "Passes over the training set")
      ->capture_default_str()
      ->check(integer_at_least(0));
  app.add_option("--max-steps", c.max_steps,
                 "Stop at this global step, also when resumed (-1: run --epochs); the schedule "
                 "then spans this many steps")
      ->capture_default_str()
      ->check(integer_at_least(-1));
  app.add_option("--batch-size", c.batch_size, "Examples per micro-batch")
      ->capture_default_str()
      ->check(integer_at_least(1));
  app.add_option("--lr", c.lr, "Peak learning rate")->capture_default_str()->check(
      number_at_least(0));
  app.add_option("--lrf", c.lrf, "The cosine schedule's final lr is lr * lrf")
      ->capture_default_str()
      ->check(number_at_least(0));
  app.add_option("--schedule", c.schedule, "Learning rate after the warmup")
      ->capture_default_str()
      ->check(CLI::IsMember({"constant", "cosine"}));
  app.add_option("--warmup-steps", c.warmup_steps, "Linear warmup from 0 to --lr over N steps")
      ->capture_default_str()
      ->check(integer_at_least(0));
  app.add_option("--weight-decay", c.weight_decay,
                 "Weight decay on weights of rank >= 2 (biases and norms get none)")
      ->capture_default_str()
      ->check(number_at_least(0));
  if (with_momentum)
    app.add_option("--momentum", c.momentum, "SGD momentum (0 disables it)")
        ->capture_default_str()
        ->check(number_at_least(0));
  app.add_option("--clip-grad", c.clip_grad, "Clip the global gradient norm to N (0: off)")
      ->capture_default_str()
      ->check(number_at_least(0));
  app.add_option("--zero", c.zero,
                 "ZeRO: shard the optimizer state across the ranks (1), and the gradients too "
                 "(2: reduce-scattered instead of all-reduced); 0 keeps it all on every rank")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 1, 2}));
  app.add_option("--accum-steps", c.accum_steps, "Micro-batches accumulated per optimizer step")
      ->capture_default_str()
      ->check(integer_at_least(1));
  app.add_option("--seed", c.seed, "Seeds initialization, dropout and the data order")
      ->capture_default_str();
  app.add_option("--train-limit", c.train_limit, "Use the first N training examples (-1: all)")
      ->capture_default_str()
      ->check(integer_at_least(-1));
  app.add_option("--test-limit", c.test_limit, "Use the first N test examples (-1: all)")
      ->capture_default_str()
      ->check(integer_at_least(-1));
  app.add_option("--num-workers", c.num_workers,
                 "Data loader threads preparing batches ahead of the step (0: in the step)")
      ->capture_default_str()
      ->check(integer_at_least(0));
  app.add_option("--eval-every", c.eval_every, "Evaluate every N steps (0: each epoch's end)")
      ->capture_default_str()
      ->check(integer_at_least(0));
  app.add_option("--log-interval", c.log_interval, "Steps between progress lines and CSV rows")
      ->capture_default_str()
      ->check(integer_at_least(1));
  app.add_option("--log-csv", c.log_csv, "Write a CSV row per logged step and per evaluation");
  app.add_option("--save-dir", c.save_dir,
                 "Write checkpoints DIR/step-<N>.safetensors (every --save-every steps and at "
                 "the end)");
  app.add_option("--save-every", c.save_every, "Steps between checkpoints (0: only at the end)")
      ->capture_default_str()
      ->check(integer_at_least(0));
  app.add_option("--resume", c.resume,
                 "Continue a run from its checkpoint: model, optimizer, schedule, RNG and data "
                 "position");
  app.add_option("--weights", c.weights,
                 "Start from these model weights (non-strict: keys with or without the 'model.' "
                 "prefix; prints what did not match)");
  app.add_option("--data-dir", c.data_dir,
                 "Directory of the dataset files (default: the trainer's dataset setting)");
  app.add_option("--plot", c.plot,
                 "At the end, draw loss and accuracy against step into this PNG (needs gnuplot)");
  app.add_option("--amp", c.amp,
                 "Mixed precision: bf16 or fp16 runs the forward pass (and so its backward) "
                 "under autocast, off keeps f32")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            if (s == "off" || s == "bf16" || s == "fp16") return "";
            return fmt::format("expected off, bf16 or fp16, got {}", s);
          },
          "off|bf16|fp16"));
  app.add_option("--loss-scale", c.loss_scale,
                 "Loss scaling with the in-graph inf check and skip: dynamic, off, or a static "
                 "scale N > 0 (default: dynamic with --amp fp16, else off)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            if (s == "dynamic" || s == "off") return "";
            double v = 0;
            const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            // The scale is an f32 tensor: it must stay finite and non-zero there.
            const float f = static_cast<float>(v);
            if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(f) && f > 0)
              return "";
            return fmt::format("expected dynamic, off or a number > 0 that is finite in f32, "
                               "got {}",
                               s);
          },
          "dynamic|off|N"));
  app.add_flag("--quiet", c.quiet,
               "No progress bar or progress lines (the configuration, summary, errors and CSV "
               "stay)");
  c.settings.add_to(app);
}

std::string loss_scale_mode(const TrainConfig& c) {
  if (!c.loss_scale.empty()) return c.loss_scale;
  return c.amp == "fp16" ? "dynamic" : "off";
}

std::string log_csv_path(const TrainConfig& c) {
  return c.log_csv.empty() && !c.plot.empty() ? c.plot + ".csv" : c.log_csv;
}

StringDict config_metadata(const TrainConfig& c) {
  StringDict m;
  auto put = [&](const char* key, const auto& value) {
    m[fmt::format("config.{}", key)] = fmt::format("{}", value);
  };
  put("compiler_opt", c.compiler_opt);
  put("epochs", c.epochs);
  put("max_steps", c.max_steps);
  put("batch_size", c.batch_size);
  put("lr", c.lr);
  put("lrf", c.lrf);
  put("schedule", c.schedule);
  put("warmup_steps", c.warmup_steps);
  put("weight_decay", c.weight_decay);
  put("momentum", c.momentum);
  put("clip_grad", c.clip_grad);
  put("amp", c.amp);
  put("loss_scale", loss_scale_mode(c));
  put("accum_steps", c.accum_steps);
  put("seed", c.seed);
  put("train_limit", c.train_limit);
  return m;
}

}  // namespace lt::examples
