// Trains a byte-level GPT (examples/gpt_model.h: 2 layers, d_model 128, 4 heads, context 64)
// on the fortune-cookie texts of Debian's `fortunes` package, split 90/10 by whole fortunes,
// with AdamW (weight decay on matrices only), warmup + cosine and gradient clipping, through the
// shared trainer loop; eager or (--compiler-opt) lazy. Reports the validation loss in nats per
// byte against the unigram entropy of the validation text, then samples from a prompt.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "examples/fortunes_text.h"
#include "examples/gpt_model.h"
#include "examples/trainer/trainer.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "tools/cli.h"

namespace {

struct GptFlags {
  lt::examples::GptConfig model;
  bool checkpoint_blocks = false;
  double dropout = 0.1;
  std::string prompt = "The ";
  int64_t sample_bytes = 200;
  double temperature = 0.8;
};

/// `n` bytes continuing `prompt`: greedy (temperature 0) or drawn from softmax(logits / T) with a
/// generator seeded by `seed`. The model always sees a full context (the text so far, its last
/// `context` bytes, padded with spaces after it), so lazy mode compiles one graph for all of them;
/// causal attention keeps the padding from reaching the position read.
std::string sample(lt::examples::CharGpt& model, const std::string& prompt, int64_t n,
                   double temperature, uint64_t seed) {
  using namespace lt;
  const int64_t ctx = model.config.context, vocab = model.config.vocab;
  const bool was_training = model.is_training();
  model.eval();
  NoGradGuard no_grad;
  std::mt19937_64 gen(seed);
  std::string text = prompt.empty() ? std::string("\n") : prompt;
  const size_t start = text.size();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = std::min<int64_t>(static_cast<int64_t>(text.size()), ctx);
    std::vector<int64_t> ids(static_cast<size_t>(ctx), ' ');
    for (int64_t j = 0; j < len; ++j)
      ids[static_cast<size_t>(j)] =
          static_cast<unsigned char>(text[text.size() - static_cast<size_t>(len - j)]);
    Tensor input;
    {
      ModeGuard eager(Mode::Eager);  // data for the graph, not a constant baked into it
      input = from_vector(ids, {1, ctx});
    }
    const Tensor logits = model.forward(input);
    if (mode() == Mode::Lazy) mark_step();
    const std::vector<float> all = logits.to_vector<float>();
    const float* row = all.data() + (len - 1) * vocab;
    int64_t next = 0;
    if (temperature <= 0) {
      next = std::max_element(row, row + vocab) - row;
    } else {
      const double top = *std::max_element(row, row + vocab);
      std::vector<double> p(static_cast<size_t>(vocab));
      double total = 0;
      for (int64_t c = 0; c < vocab; ++c)
        total += p[static_cast<size_t>(c)] = std::exp((row[c] - top) / temperature);
      // 53 random bits as a double in [0, 1): the same on every platform, unlike
      // std::uniform_real_distribution.
      double u = static_cast<double>(gen() >> 11) * 0x1p-53 * total;
      while (next < vocab - 1 && u >= p[static_cast<size_t>(next)])
        u -= p[static_cast<size_t>(next++)];
    }
    text += static_cast<char>(next);
  }
  model.train(was_training);
  return text.substr(start);
}

/// The sample as printable text: bytes outside printable ASCII, tab and newline as \xNN.
std::string printable(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    if (b == '\n' || b == '\t' || (b >= 32 && b < 127)) out += ch;
    else out += fmt::format("\\x{:02x}", b);
  }
  return out;
}

void run(const lt::examples::TrainConfig& c, const GptFlags& f) {
  using namespace lt;
  manual_seed(c.seed);
  examples::GptConfig gc = f.model;
  gc.dropout = f.dropout;
  examples::CharGpt model(gc);
  model.checkpoint_blocks = f.checkpoint_blocks;
  const std::string dir = c.data_dir.empty() ? "/usr/share/games/fortunes" : c.data_dir;
  const examples::FortuneSplit text = examples::load_fortunes(dir, c.seed);
  examples::TrainTask task;
  task.name = "char_gpt";
  task.model = &model;
  auto limited = [](data::TensorDataset d, int64_t limit) {
    if (limit >= 0 && limit < d.size()) {
      d.images = slice(d.images, 0, 0, limit);
      d.labels = slice(d.labels, 0, 0, limit);
    }
    return d;
  };
  task.train = std::make_shared<data::TensorDataset>(
      limited(examples::byte_windows(text.train, gc.context), c.train_limit));
  task.test = std::make_shared<data::TensorDataset>(
      limited(examples::byte_windows(text.validation, gc.context), c.test_limit));
  task.eval_batch = 64;
  const double entropy = examples::unigram_entropy(text.validation);
  task.description = fmt::format(
      "byte-level GPT ({} parameters: {} layers, d_model {}, {} heads, context {}, dropout {}), "
      "{} fortunes from {} files in {} ({} train / {} validation, {} / {} bytes), unigram "
      "entropy of the validation text {:.4f} nats/byte; examples are windows of {} bytes",
      model.num_parameters(), gc.layers, gc.d_model, gc.heads, gc.context, gc.dropout,
      text.train_fortunes + text.validation_fortunes, text.files, dir, text.train_fortunes,
      text.validation_fortunes, text.train.size(), text.validation.size(), entropy, gc.context);
  task.logits_and_targets = [&](const data::Batch& b) {
    return std::pair{reshape(model.forward(b.images), {-1, gc.vocab}), reshape(b.labels, {-1})};
  };
  task.make_optimizer = [&](const examples::TrainConfig& cfg) {
    return examples::adamw_for(model, cfg);
  };
  const examples::RunSummary s = examples::train(task, c);
  if (dist::rank() != 0) return;  // replicas: rank 0 reports and samples
  const double loss = s.final_eval.loss;
  fmt::print(
      "validation loss {:.4f} nats/byte ({:.3f} bits/byte) = {:.3f} x the unigram entropy "
      "{:.4f} nats/byte (target: at most 0.7 x)\n",
      loss, loss / std::log(2.0), loss / entropy, entropy);
  if (f.sample_bytes > 0) {
    ModeGuard mode_guard(c.compiler_opt ? Mode::Lazy : Mode::Eager);
    const int64_t misses = metrics::counter("cache_miss");
    fmt::print("sample, greedy, after \"{}\":\n{}{}\n", printable(f.prompt), printable(f.prompt),
               printable(sample(model, f.prompt, f.sample_bytes, 0, c.seed)));
    fmt::print("sample, temperature {}, seed {}, after \"{}\":\n{}{}\n", f.temperature, c.seed,
               printable(f.prompt), printable(f.prompt),
               printable(sample(model, f.prompt, f.sample_bytes, f.temperature, c.seed)));
    if (c.compiler_opt) {
      const int64_t graphs = metrics::counter("cache_miss") - misses;
      fmt::print("sampling: {} graph{} prepared for {} forward steps\n", graphs,
                  graphs == 1 ? "" : "s", 2 * f.sample_bytes);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  lt::examples::TrainConfig c;
  c.epochs = 4;
  c.batch_size = 32;
  c.lr = 3e-4;
  c.lrf = 0.1;
  c.weight_decay = 0.01;
  c.warmup_steps = 200;
  c.clip_grad = 1.0;
  c.eval_every = 1000;
  c.log_interval = 100;
  GptFlags f;
  CLI::App app{"Train a byte-level GPT on the fortune-cookie texts of Debian's fortunes package "
               "(AdamW, warmup + cosine, clipping), eager or lazy (--compiler-opt), then sample "
               "from it."};
  lt::examples::add_train_flags(app, c, /*with_momentum=*/false);
  app.add_option("--dropout", f.dropout, "Dropout on embeddings, attention and residuals")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--layers", f.model.layers, "Transformer blocks")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{96}));
  app.add_option("--d-model", f.model.d_model, "Width of the residual stream")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{8}, int64_t{8192}));
  app.add_option("--heads", f.model.heads, "Attention heads (they divide --d-model)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{128}));
  app.add_option("--context", f.model.context, "Bytes of context")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{8192}));
  app.add_flag("--activation-checkpointing", f.checkpoint_blocks,
               "Recompute each transformer block's activations in backward instead of keeping "
               "them (lt::checkpoint per block)");
  app.add_option("--prompt", f.prompt, "Text the samples continue")->capture_default_str();
  app.add_option("--sample-bytes", f.sample_bytes, "Bytes sampled at the end (0: none)")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(0));
  app.add_option("--temperature", f.temperature,
                 "Temperature of the second sample (the first is greedy)")
      ->capture_default_str()
      ->check(lt::cli::number_at_least(0));
  return lt::cli::run(app, argc, argv, [&] {
    c.settings.apply();
    run(c, f);
  });
}
