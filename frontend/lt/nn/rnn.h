// Recurrent layers with PyTorch's names, shapes, gate order and initialization: LSTM and GRU,
// stacked and optionally bidirectional, composed from linear, sigmoid and tanh.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "lt/nn/module.h"

namespace lt::nn {

/// torch.nn.LSTM's and torch.nn.GRU's keyword arguments (proj_size is not supported).
struct RNNOptions {
  int64_t num_layers = 1;
  bool bias = true;
  /// Input and output [N, T, features] instead of [T, N, features]; the states keep [L*D, N, H].
  bool batch_first = false;
  /// Dropout on every layer's output but the last, in training mode only.
  double dropout = 0;
  bool bidirectional = false;
};

/// What LSTM and GRU share: the parameters of layer k, for each direction, named
/// weight_ih_l{k} [G H, in], weight_hh_l{k} [G H, H], bias_ih_l{k} and bias_hh_l{k} [G H]
/// (suffix _reverse for the backward direction), with G gates and in = input_size for layer 0,
/// D H above it (D = 2 when bidirectional, else 1); all drawn from U(-1/sqrt(H), 1/sqrt(H)).
class RNNBase : public Module {
 public:
  /// Draws every parameter again from U(-1/sqrt(H), 1/sqrt(H)) (the global generator).
  void reset_parameters();
  std::string extra_repr() const override;

  const int64_t input_size, hidden_size;
  const RNNOptions options;

 protected:
  RNNBase(const char* layer, int64_t gates, int64_t input_size, int64_t hidden_size,
          RNNOptions options);
  struct Weights {
    Tensor w_ih, w_hh, b_ih, b_hh;  ///< biases undefined without options.bias
  };
  const Weights& weights(int64_t layer, int64_t direction) const {
    return weights_[layer * directions() + direction];
  }
  int64_t directions() const { return options.bidirectional ? 2 : 1; }

  /// One direction's state at a time step: h, and c for the LSTM.
  struct State {
    Tensor h, c;
  };
  /// The new state from the state and this step's input projection x W_ih^T + b_ih [N, G H].
  virtual State cell(const Weights& w, const Tensor& projected, const State& s, Loc loc) const = 0;
  /// Runs every layer and direction over input [T, N, in] (already time-major, batched) from
  /// the states h0 (and c0 for the LSTM) [L*D, N, H]: the output [T, N, D H] and the final
  /// states stacked as h0.
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& h0, const Tensor& c0,
                                         Loc loc) const;
  /// PyTorch's checks of the input once made batched (rank `rank`, `features` last) against
  /// the layer: 3 dims and input_size features.
  void check_input(int64_t rank, int64_t features, Loc loc) const;
  /// PyTorch's check of a state's shape: [L*D, N, H] with N the input's batch.
  void check_hidden(const Tensor& h, int64_t batch, const char* which, Loc loc) const;
  [[noreturn]] void fail(const std::string& what, Loc loc) const;

 private:
  const char* layer_;
  std::vector<Weights> weights_;
};

/// Long short-term memory (torch.nn.LSTM): gates i, f, g, o in that order along the G = 4 H rows
/// of the weights; c' = sigmoid(f) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c').
class LSTM : public RNNBase {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, RNNOptions options = {});
  /// input [T, N, input_size] ([N, T, input_size] with batch_first) or unbatched
  /// [T, input_size]; the initial (h_0, c_0), each [L*D, N, H] ([L*D, H] unbatched), default
  /// zeros. Returns (output [T, N, D H], (h_n, c_n)) in the input's layout, as PyTorch.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt,
      Loc loc = Loc::current());

 protected:
  State cell(const Weights& w, const Tensor& projected, const State& s, Loc loc) const override;

 private:
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> unhooked_forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx, Loc loc);
};

/// Gated recurrent unit (torch.nn.GRU): gates r, z, n in that order along the G = 3 H rows;
/// n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (1 - z) n + z h.
class GRU : public RNNBase {
 public:
  GRU(int64_t input_size, int64_t hidden_size, RNNOptions options = {});
  /// As LSTM::forward, with one state h_0 (undefined: zeros); returns (output, h_n).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {},
                                     Loc loc = Loc::current());

 protected:
  State cell(const Weights& w, const Tensor& projected, const State& s, Loc loc) const override;

 private:
  std::tuple<Tensor, Tensor> unhooked_forward(const Tensor& input, const Tensor& hx, Loc loc);
};

}  // namespace lt::nn
