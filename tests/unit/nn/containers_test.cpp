// ModuleList, ModuleDict and Identity; modules() and named_modules() in PyTorch's order and
// names; freezing with requires_grad_ (no gradient, the optimizer skips the parameter).
#include <gtest/gtest.h>

#include <set>

#include "lt/optim.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::error_of;
using testing::values;

/// PyTorch's
///   self.layers = nn.ModuleList([nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)])
///   self.heads = nn.ModuleDict({'cls': nn.Linear(1, 2), 'box': nn.Linear(1, 4)})
///   self.tied = self.layers[0]
struct Net : nn::Module {
  Net() {
    layers = register_module("layers", std::make_shared<nn::ModuleList>(
                                           std::make_shared<nn::Linear>(2, 3),
                                           std::make_shared<nn::ReLU>()));
    layers->append(std::make_shared<nn::Linear>(3, 1));
    heads = register_module("heads", std::make_shared<nn::ModuleDict>(nn::NamedModules{
                                         {"cls", std::make_shared<nn::Linear>(1, 2)},
                                         {"box", std::make_shared<nn::Linear>(1, 4)}}));
    register_module("tied", (*layers)[0]);
  }
  Tensor forward(const Tensor& x) {
    Tensor h = x;
    for (const auto& m : *layers) {
      if (auto fc = std::dynamic_pointer_cast<nn::Linear>(m)) h = fc->forward(h);
      else h = std::static_pointer_cast<nn::ReLU>(m)->forward(h);
    }
    return heads->at<nn::Linear>("cls")->forward(h);
  }
  std::shared_ptr<nn::ModuleList> layers;
  std::shared_ptr<nn::ModuleDict> heads;
};

std::vector<std::string> names(const nn::NamedModules& ms) {
  std::vector<std::string> out;
  for (const auto& [n, _] : ms) out.push_back(n);
  return out;
}

std::vector<std::string> names(const nn::NamedTensors& ts) {
  std::vector<std::string> out;
  for (const auto& [n, _] : ts) out.push_back(n);
  return out;
}

// [k for k, _ in Net().named_modules()], named_parameters(), state_dict().keys() and str(Net())
// in PyTorch 1.13.
TEST(Containers, NamesAndOrderArePyTorchs) {
  auto net = std::make_shared<Net>();
  const nn::NamedModules all = net->named_modules();
  EXPECT_EQ(names(all), (std::vector<std::string>{"", "layers", "layers.0", "layers.1",
                                                   "layers.2", "heads", "heads.cls",
                                                   "heads.box"}));
  EXPECT_EQ(all[0].second.get(), net.get());
  EXPECT_EQ(all[2].second, (*net->layers)[0]);
  EXPECT_EQ(names(net->named_parameters()),
            (std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.2.weight",
                                      "layers.2.bias", "heads.cls.weight", "heads.cls.bias",
                                      "heads.box.weight", "heads.box.bias"}));
  std::set<std::string> keys;
  for (const auto& [k, _] : net->state_dict()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"layers.0.weight", "layers.0.bias", "layers.2.weight",
                                         "layers.2.bias", "heads.cls.weight", "heads.cls.bias",
                                         "heads.box.weight", "heads.box.bias", "tied.weight",
                                         "tied.bias"}));
  EXPECT_EQ(net->str(),
            "Net(\n"
            "  (layers): ModuleList(\n"
            "    (0): Linear(in_features=2, out_features=3, bias=true)\n"
            "    (1): ReLU()\n"
            "    (2): Linear(in_features=3, out_features=1, bias=true)\n"
            "  )\n"
            "  (heads): ModuleDict(\n"
            "    (cls): Linear(in_features=1, out_features=2, bias=true)\n"
            "    (box): Linear(in_features=1, out_features=4, bias=true)\n"
            "  )\n"
            "  (tied): Linear(in_features=2, out_features=3, bias=true)\n"
            ")");
  EXPECT_EQ(net->forward(zeros({5, 2})).shape(), (Shape{5, 2}));
}

TEST(Containers, ModulesPrefixAndIncludeSelf) {
  auto net = std::make_shared<Net>();
  EXPECT_EQ(net->modules().size(), 8u);
  EXPECT_EQ(net->modules(false).size(), 7u);
  EXPECT_EQ(names(net->layers->named_modules("layers")),
            (std::vector<std::string>{"layers", "layers.0", "layers.1", "layers.2"}));
  EXPECT_EQ(names(net->heads->named_modules("", false)),
            (std::vector<std::string>{"cls", "box"}));
  // A module that is not held by a shared_ptr can list its descendants only.
  Net on_stack;
  EXPECT_EQ(names(on_stack.named_modules("", false)).size(), 7u);
  EXPECT_EQ(error_of([&] { on_stack.named_modules(); }),
            "named_modules: this Net is not held by a std::shared_ptr (make it with "
            "std::make_shared), so it cannot be listed; pass include_self = false to list its "
            "descendants");
}

TEST(Containers, ModuleListOperations) {
  nn::ModuleList list;
  EXPECT_TRUE(list.empty());
  auto fc = std::make_shared<nn::Linear>(2, 2);
  list.push_back(fc).append(std::make_shared<nn::Identity>());
  nn::ModuleList more(std::make_shared<nn::Tanh>());
  list.extend(more).extend({std::make_shared<nn::ReLU>()});
  list.extend(list);  // its own modules once more, as Python's list.extend(list)
  ASSERT_EQ(list.size(), 8u);
  EXPECT_EQ(list[0], fc);
  EXPECT_EQ(list[4], fc);
  EXPECT_EQ(list.at<nn::Tanh>(2)->name(), "Tanh");
  EXPECT_EQ(names(list.named_children()),
            (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"}));
  EXPECT_EQ(list.parameters().size(), 2u);  // the shared Linear's, once
  size_t n = 0;
  for (const auto& m : list) n += m != nullptr;
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(error_of([&] { list[8]; }), "ModuleList: index 8 is out of range for 8 modules");
  EXPECT_EQ(error_of([&] { list.at<nn::Linear>(1); }),
            "ModuleList::at: module 1 is a Identity, not the type asked for");
  EXPECT_EQ(error_of([&] { list.push_back(nullptr); }), "ModuleList::push_back: module 8 is null");
}

TEST(Containers, ModuleDictOperations) {
  nn::ModuleDict dict;
  auto a = std::make_shared<nn::Linear>(1, 1), b = std::make_shared<nn::Linear>(1, 2);
  dict.insert("b", b).insert("a", a);
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"b", "a"}));  // insertion order
  EXPECT_TRUE(dict.contains("a"));
  EXPECT_FALSE(dict.contains("c"));
  EXPECT_EQ(dict["a"], a);
  // A key that is there keeps its place and gets the new module, as `dict['b'] = ...`.
  auto b2 = std::make_shared<nn::Linear>(1, 3);
  dict.update({{"b", b2}, {"c", std::make_shared<nn::ReLU>()}});
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(dict.at<nn::Linear>("b"), b2);
  EXPECT_EQ(dict.values().size(), 3u);
  EXPECT_EQ(names(dict.items()), (std::vector<std::string>{"b", "a", "c"}));
  std::set<std::string> keys;
  for (const auto& [k, _] : dict.state_dict()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"b.weight", "b.bias", "a.weight", "a.bias"}));
  EXPECT_EQ(error_of([&] { dict["d"]; }), "ModuleDict: no module under key 'd'");
  EXPECT_EQ(error_of([&] { dict.at<nn::Linear>("c"); }),
            "ModuleDict::at: module 'c' is a ReLU, not the type asked for");
  EXPECT_EQ(error_of([&] { dict.insert("x.y", a); }),
            "register_module: name 'x.y' in ModuleDict contains '.' (dots separate the levels of "
            "a dotted name)");
  EXPECT_EQ(error_of([&] { dict.insert("a", nullptr); }),
            "register_module: 'a' in ModuleDict is null");
  EXPECT_EQ(error_of([&] { dict.insert("z", nullptr); }),
            "register_module: 'z' in ModuleDict is null");
}

TEST(Containers, IdentityReturnsItsInput) {
  const Tensor x = from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ(nn::Identity().forward(x).impl(), x.impl());
  EXPECT_EQ(nn::Identity().str(), "Identity()");
}

/// A frozen first layer: no gradient, and SGD with momentum and weight decay leaves it as it was
/// (PyTorch skips a parameter whose .grad is None); the head trains.
void expect_frozen_layer_stays(Mode mode) {
  manual_seed(3);
  auto net = std::make_shared<Net>();
  nn::Module& first = *(*net->layers)[0];
  EXPECT_EQ(&first.requires_grad_(false), &first);
  for (const Tensor& p : first.parameters()) EXPECT_FALSE(p.requires_grad());
  const auto before_first = values(first.parameters()[0]);
  const auto before_head = values(net->heads->at<nn::Linear>("cls")->weight);
  optim::SGD opt(net->parameters(), {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.1});
  const Tensor x = randn({4, 2});
  {
    ModeGuard guard(mode);
    for (int step = 0; step < 2; ++step) {
      opt.zero_grad();
      sum(net->forward(x)).backward();
      opt.step();
      if (mode == Mode::Lazy) mark_step();
    }
  }
  for (const Tensor& p : first.parameters()) EXPECT_FALSE(p.grad().defined());
  EXPECT_EQ(values(first.parameters()[0]), before_first);
  EXPECT_NE(values(net->heads->at<nn::Linear>("cls")->weight), before_head);
  net->requires_grad_();
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
}

TEST(Containers, FrozenParametersGetNoGradientAndNoUpdate) {
  expect_frozen_layer_stays(Mode::Eager);
  expect_frozen_layer_stays(Mode::Lazy);
}

TEST(Containers, RequiresGradOfAnIntegerParameterChangesNothing) {
  struct Holder : nn::Module {
    Holder() {
      w = register_parameter("w", zeros({2}), false);
      register_parameter("idx", from_vector<int64_t>({1, 2}, {2}), false);
    }
    Tensor w;
  } h;
  EXPECT_EQ(error_of([&] { h.requires_grad_(); }),
            "requires_grad_: parameter 'idx' of Holder is i64[2]; only floating-point parameters "
            "can require grad");
  EXPECT_FALSE(h.w.requires_grad());
  h.requires_grad_(false);  // freezing is always possible
  EXPECT_FALSE(h.w.requires_grad());
}

}  // namespace
}  // namespace lt
