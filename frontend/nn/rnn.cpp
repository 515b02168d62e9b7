// LSTM and GRU. Each layer and direction projects the inputs of all time steps with one matmul;
// a time step then adds only its hidden state's projection (as ATen's CPU kernels).
#include "lt/nn/rnn.h"

#include <fmt/ranges.h>

#include <cmath>
#include <utility>

#include "frontend/nn/layer_args.h"
#include "lt/nn/init.h"
#include "lt/ops.h"

namespace lt::nn {

RNNBase::RNNBase(const char* layer, int64_t gates, int64_t in, int64_t hidden, RNNOptions o)
    : input_size(in), hidden_size(hidden), options(o), layer_(layer) {
  require(in >= 0 && hidden >= 1 && o.num_layers >= 1, layer,
          "needs input_size >= 0, hidden_size >= 1 and num_layers >= 1, got {}, {} and {}", in,
          hidden, o.num_layers);
  require(o.dropout >= 0 && o.dropout <= 1, layer,
          "dropout should be a number in range [0, 1] representing the probability of an "
          "element being zeroed");
  for (int64_t l = 0; l < o.num_layers; ++l)
    for (int64_t d = 0; d < directions(); ++d) {
      const std::string suffix = fmt::format("_l{}{}", l, d == 1 ? "_reverse" : "");
      const int64_t layer_in = l == 0 ? in : hidden * directions();
      Weights w;
      w.w_ih = register_parameter("weight_ih" + suffix, eager_full({gates * hidden, layer_in}, 0));
      w.w_hh = register_parameter("weight_hh" + suffix, eager_full({gates * hidden, hidden}, 0));
      if (o.bias) {
        w.b_ih = register_parameter("bias_ih" + suffix, eager_full({gates * hidden}, 0));
        w.b_hh = register_parameter("bias_hh" + suffix, eager_full({gates * hidden}, 0));
      }
      weights_.push_back(std::move(w));
    }
  reset_parameters();
}

void RNNBase::reset_parameters() {
  const double bound = 1 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor& p : parameters()) init::uniform_(p, -bound, bound);
}

std::string RNNBase::extra_repr() const {
  std::string s = fmt::format("{}, {}", input_size, hidden_size);
  if (options.num_layers != 1) s += fmt::format(", num_layers={}", options.num_layers);
  if (!options.bias) s += ", bias=false";
  if (options.batch_first) s += ", batch_first=true";
  if (options.dropout != 0) s += fmt::format(", dropout={}", options.dropout);
  if (options.bidirectional) s += ", bidirectional=true";
  return s;
}

void RNNBase::fail(const std::string& what, Loc loc) const {
  throw Error(fmt::format("{}: {} at {}", layer_, what, location_str(loc)));
}

void RNNBase::check_input(int64_t rank, int64_t features, Loc loc) const {
  if (rank != 3) fail(fmt::format("input must have 3 dimensions, got {}", rank), loc);
  if (features != input_size)
    fail(fmt::format("input.size(-1) must be equal to input_size. Expected {}, got {}", input_size,
                     features),
         loc);
}

void RNNBase::check_hidden(const Tensor& h, int64_t batch, const char* which, Loc loc) const {
  const Shape want{options.num_layers * directions(), batch, hidden_size};
  if (h.shape() != want)
    fail(fmt::format("Expected {} size ({}, {}, {}), got [{}]", which, want[0], want[1], want[2],
                     fmt::join(h.shape(), ", ")),
         loc);
}

std::tuple<Tensor, Tensor, Tensor> RNNBase::run(const Tensor& input, const Tensor& h0,
                                                const Tensor& c0, Loc loc) const {
  const int64_t steps = input.shape()[0], dirs = directions();
  if (steps == 0) fail("Expected sequence length to be larger than 0 in RNN", loc);
  Tensor x = input;
  std::vector<Tensor> h_n, c_n;
  for (int64_t l = 0; l < options.num_layers; ++l) {
    std::vector<Tensor> outputs;
    for (int64_t d = 0; d < dirs; ++d) {
      const Weights& w = weights(l, d);
      const Tensor projected = linear(x, w.w_ih, w.b_ih, loc);  // [T, N, G H]
      State s{select(h0, 0, l * dirs + d, loc),
              c0.defined() ? select(c0, 0, l * dirs + d, loc) : Tensor()};
      std::vector<Tensor> hs(steps);
      for (int64_t k = 0; k < steps; ++k) {
        const int64_t t = d == 0 ? k : steps - 1 - k;
        s = cell(w, select(projected, 0, t, loc), s, loc);
        hs[t] = s.h;
      }
      outputs.push_back(stack(hs, 0, loc));
      h_n.push_back(s.h);
      if (s.c.defined()) c_n.push_back(s.c);
    }
    x = dirs == 1 ? outputs[0] : concat(outputs, -1, loc);
    if (l + 1 < options.num_layers && options.dropout > 0 && is_training())
      x = dropout(x, options.dropout, true, loc);
  }
  return {x, stack(h_n, 0, loc), c_n.empty() ? Tensor() : stack(c_n, 0, loc)};
}

LSTM::LSTM(int64_t in, int64_t hidden, RNNOptions o) : RNNBase("LSTM", 4, in, hidden, o) {}

RNNBase::State LSTM::cell(const Weights& w, const Tensor& projected, const State& s,
                          Loc loc) const {
  const Tensor gates = add(linear(s.h, w.w_hh, w.b_hh, loc), projected, loc);
  const std::vector<Tensor> g = chunk(gates, 4, 1, loc);  // i, f, g, o
  const Tensor c =
      add(mul(sigmoid(g[1], loc), s.c, loc), mul(sigmoid(g[0], loc), tanh(g[2], loc), loc), loc);
  return {mul(sigmoid(g[3], loc), tanh(c, loc), loc), c};
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTM::forward(
    const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx, Loc loc) {
  if (!has_hooks()) return unhooked_forward(input, hx, loc);
  const Tensor h0 = hx ? std::get<0>(*hx) : Tensor(), c0 = hx ? std::get<1>(*hx) : Tensor();
  const TensorList out = with_hooks({input, h0, c0}, [&](const TensorList& in) {
    std::optional<std::tuple<Tensor, Tensor>> state;
    if (in[1].defined() || in[2].defined()) state.emplace(in[1], in[2]);
    auto [o, hc] = unhooked_forward(in[0], state, loc);
    return TensorList{o, std::get<0>(hc), std::get<1>(hc)};
  });
  return {out[0], {out[1], out[2]}};
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTM::unhooked_forward(
    const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx, Loc loc) {
  if (!input.defined()) fail("input is undefined", loc);
  const bool batched = input.rank() == 3;
  const int64_t batch_dim = options.batch_first ? 0 : 1;
  Tensor h0, c0;
  if (hx) {
    std::tie(h0, c0) = *hx;
    if (!h0.defined() || !c0.defined()) fail("hx holds an undefined tensor", loc);
    if (batched && (h0.rank() != 3 || c0.rank() != 3))
      fail(fmt::format("For batched 3-D input, hx and cx should also be 3-D but got ({}-D, "
                       "{}-D) tensors",
                       h0.rank(), c0.rank()),
           loc);
    if (!batched && (h0.rank() != 2 || c0.rank() != 2))
      fail(fmt::format("For unbatched 2-D input, hx and cx should also be 2-D but got ({}-D, "
                       "{}-D) tensors",
                       h0.rank(), c0.rank()),
           loc);
  }
  check_input(batched ? 3 : input.rank() + 1, input.rank() ? input.shape().back() : 1, loc);
  Tensor x = batched ? input : unsqueeze(input, batch_dim, loc);
  if (options.batch_first) x = transpose(x, 0, 1, loc);
  const int64_t n = x.shape()[1];
  if (hx) {
    if (!batched) h0 = unsqueeze(h0, 1, loc), c0 = unsqueeze(c0, 1, loc);
    check_hidden(h0, n, "hidden[0]", loc);
    check_hidden(c0, n, "hidden[1]", loc);
  } else {
    h0 = c0 = zeros({options.num_layers * directions(), n, hidden_size}, x.dtype(), loc);
  }
  auto [out, h_n, c_n] = run(x, h0, c0, loc);
  if (options.batch_first) out = transpose(out, 0, 1, loc);
  if (!batched) return {squeeze(out, batch_dim, loc), {squeeze(h_n, 1, loc), squeeze(c_n, 1, loc)}};
  return {out, {h_n, c_n}};
}

GRU::GRU(int64_t in, int64_t hidden, RNNOptions o) : RNNBase("GRU", 3, in, hidden, o) {}

RNNBase::State GRU::cell(const Weights& w, const Tensor& projected, const State& s, Loc loc) const {
  const std::vector<Tensor> gi = chunk(projected, 3, 1, loc);  // r, z, n
  const std::vector<Tensor> gh = chunk(linear(s.h, w.w_hh, w.b_hh, loc), 3, 1, loc);
  const Tensor r = sigmoid(add(gi[0], gh[0], loc), loc);
  const Tensor z = sigmoid(add(gi[1], gh[1], loc), loc);
  const Tensor n = tanh(add(gi[2], mul(r, gh[2], loc), loc), loc);
  // (1 - z) n + z h written as ATen's n + z (h - n).
  return {add(n, mul(z, sub(s.h, n, loc), loc), loc), {}};
}

std::tuple<Tensor, Tensor> GRU::forward(const Tensor& input, const Tensor& hx, Loc loc) {
  if (!has_hooks()) return unhooked_forward(input, hx, loc);
  const TensorList out = with_hooks({input, hx}, [&](const TensorList& in) {
    auto [o, h_n] = unhooked_forward(in[0], in[1], loc);
    return TensorList{o, h_n};
  });
  return {out[0], out[1]};
}

std::tuple<Tensor, Tensor> GRU::unhooked_forward(const Tensor& input, const Tensor& hx, Loc loc) {
  if (!input.defined()) fail("input is undefined", loc);
  const bool batched = input.rank() == 3;
  const int64_t batch_dim = options.batch_first ? 0 : 1;
  if (hx.defined() && batched && hx.rank() != 3)
    fail(fmt::format("For batched 3-D input, hx should also be 3-D but got {}-D tensor", hx.rank()),
         loc);
  if (hx.defined() && !batched && hx.rank() != 2)
    fail(fmt::format("For unbatched 2-D input, hx should also be 2-D but got {}-D tensor",
                     hx.rank()),
         loc);
  check_input(batched ? 3 : input.rank() + 1, input.rank() ? input.shape().back() : 1, loc);
  Tensor x = batched ? input : unsqueeze(input, batch_dim, loc);
  if (options.batch_first) x = transpose(x, 0, 1, loc);
  const int64_t n = x.shape()[1];
  Tensor h0;
  if (hx.defined()) {
    h0 = batched ? hx : unsqueeze(hx, 1, loc);
    check_hidden(h0, n, "hidden", loc);
  } else {
    h0 = zeros({options.num_layers * directions(), n, hidden_size}, x.dtype(), loc);
  }
  auto [out, h_n, unused] = run(x, h0, {}, loc);
  if (options.batch_first) out = transpose(out, 0, 1, loc);
  if (!batched) return {squeeze(out, batch_dim, loc), squeeze(h_n, 1, loc)};
  return {out, h_n};
}

}  // namespace lt::nn
