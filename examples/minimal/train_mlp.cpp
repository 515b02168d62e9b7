// Trains an MLP on Fashion-MNIST: eagerly, or with --compiler-opt as one compiled graph per step;
// --save PATH writes the trained weights (safetensors, by PyTorch's names).
#include <lt/lt.h>

#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  namespace nn = lt::nn;
  bool lazy = false;
  const char* save = nullptr;
  for (int i = 1; i < argc; ++i) {
    lazy |= std::string_view(argv[i]) == "--compiler-opt";
    if (std::string_view(argv[i]) == "--save" && i + 1 < argc) save = argv[++i];
  }
  lt::manual_seed(0);
  // One layer after the other: each draws its weights from the seeded generator in turn (the
  // order of a call's arguments is the compiler's choice).
  auto fc1 = std::make_shared<nn::Linear>(784, 256);
  auto fc2 = std::make_shared<nn::Linear>(256, 10);
  nn::Sequential model(fc1, std::make_shared<nn::ReLU>(), fc2);
  lt::optim::SGD opt(model.parameters(), {.lr = 0.1, .momentum = 0.9});
  const auto train = lt::data::load_fashion_mnist(lt::data::Split::Train, {.normalize = true});
  lt::data::BatchIterator batches(train, {.batch_size = 128, .seed = 0, .drop_last = true});
  lt::optim::sched::Scheduler schedule(
      opt, lt::optim::sched::CosineAnnealingLR(batches.num_batches() - 1));

  lt::ModeGuard mode(lazy ? lt::Mode::Lazy : lt::Mode::Eager);
  for (int step = 0; auto batch = batches.next(); ++step) {
    opt.zero_grad();
    lt::Tensor loss = lt::cross_entropy(model.forward(batch->images), batch->labels);
    loss.backward();
    opt.step();
    schedule.step();
    lt::mark_step();  // lazy: forward, backward and update run here, compiled once, then cached
    if (step % 100 == 0) std::printf("step %3d  loss %.4f\n", step, loss.item<float>());
  }
  const auto test = lt::data::load_fashion_mnist(lt::data::Split::Test, {.normalize = true});
  lt::NoGradGuard no_grad;
  lt::Tensor hits = lt::eq(lt::argmax(model.forward(test.images), 1), test.labels);
  std::printf("test accuracy %.4f\n", lt::mean(lt::cast(hits, lt::DType::F32)).item<float>());
  if (save) lt::save(save, model.state_dict());
}
