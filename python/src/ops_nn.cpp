// The neural-network ops of lt/ops.h, torch.nn.init's schemes (lt/nn/init.h) and gradient
// clipping (lt/optim.h), their options structs taken as plain arguments.
#include <string>
#include <vector>

#include "python/src/bind.h"

namespace lt::py {
namespace {

using T = Tensor;
using Ints = std::vector<int64_t>;
using OptT = std::optional<T>;

T or_undefined(const OptT& t) { return t ? *t : T(); }

void bind_layers(pb::module_& m, const Loc& at) {
  m.def("linear", [at](const T& x, const T& w, const OptT& b) {
    return linear(x, w, or_undefined(b), at);
  });
  m.def("conv2d", [at](const T& x, const T& w, const OptT& b, const Ints& stride,
                       const Ints& padding, const Ints& dilation, int64_t groups) {
    return conv2d(x, w, or_undefined(b), {stride, padding, dilation, groups}, at);
  });
  m.def("max_pool2d", [at](const T& x, const Ints& kernel, const Ints& stride,
                           const Ints& padding, bool ceil_mode) {
    return max_pool2d(x, {.kernel = kernel, .stride = stride, .padding = padding,
                          .ceil_mode = ceil_mode}, at);
  });
  m.def("max_pool2d_with_indices", [at](const T& x, const Ints& kernel, const Ints& stride,
                                        const Ints& padding, const Ints& dilation,
                                        bool ceil_mode) {
    ValuesIndices r = max_pool2d_with_indices(x, {.kernel = kernel, .stride = stride,
                                                  .padding = padding, .ceil_mode = ceil_mode,
                                                  .dilation = dilation}, at);
    return std::pair{r.values, r.indices};
  });
  m.def("avg_pool2d", [at](const T& x, const Ints& kernel, const Ints& stride,
                           const Ints& padding, bool ceil_mode, bool count_include_pad) {
    return avg_pool2d(x, {kernel, stride, padding, ceil_mode, count_include_pad}, at);
  });
  m.def("adaptive_avg_pool2d", [at](const T& x, const Ints& size) {
    return adaptive_avg_pool2d(x, size, at);
  });
  m.def("adaptive_max_pool2d", [at](const T& x, const Ints& size) {
    return adaptive_max_pool2d(x, size, at);
  });
  m.def("adaptive_max_pool2d_with_indices", [at](const T& x, const Ints& size) {
    ValuesIndices r = adaptive_max_pool2d_with_indices(x, size, at);
    return std::pair{r.values, r.indices};
  });
  m.def("softmax", [at](const T& x, int64_t d) { return softmax(x, d, at); });
  m.def("log_softmax", [at](const T& x, int64_t d) { return log_softmax(x, d, at); });
  m.def("layer_norm", [at](const T& x, const T& g, const T& b, double eps) {
    return layer_norm(x, g, b, eps, at);
  });
  m.def("batch_norm", [at](const T& x, const T& g, const T& b, const OptT& mean,
                           const OptT& var, bool training, double momentum, double eps) {
    return batch_norm(x, g, b, or_undefined(mean), or_undefined(var), training, momentum, eps,
                      at);
  });
  m.def("embedding", [at](const T& table, const T& ids) { return embedding(table, ids, at); });
  m.def("one_hot", [at](const T& ids, int64_t n, int code) {
    return one_hot(ids, n, dtype_of(code), at);
  });
  m.def("dropout", [at](const T& x, double p, bool training) {
    return dropout(x, p, training, at);
  });
}

void bind_resampling(pb::module_& m, const Loc& at) {
  m.def("conv1d", [at](const T& x, const T& w, const OptT& b, int64_t stride, int64_t padding,
                       int64_t dilation, int64_t groups) {
    return conv1d(x, w, or_undefined(b), {stride, padding, dilation, groups}, at);
  });
  m.def("conv_transpose2d", [at](const T& x, const T& w, const OptT& b, const Ints& stride,
                                 const Ints& padding, const Ints& output_padding, int64_t groups,
                                 const Ints& dilation) {
    return conv_transpose2d(x, w, or_undefined(b),
                            {stride, padding, output_padding, groups, dilation}, at);
  });
  m.def("interpolate", [at](const T& x, const Ints& size, const std::vector<double>& scale,
                            const std::string& mode, std::optional<bool> align_corners) {
    return interpolate(x, {size, scale, mode, align_corners}, at);
  });
}

void bind_losses(pb::module_& m, const Loc& at) {
  m.def("cross_entropy", [at](const T& x, const T& y, const OptT& w, int64_t ignore_index,
                              const std::string& reduction, double smoothing) {
    return cross_entropy(x, y, {or_undefined(w), ignore_index, reduction, smoothing}, at);
  });
  m.def("nll_loss", [at](const T& x, const T& y, const OptT& w, int64_t ignore_index,
                         const std::string& reduction) {
    return nll_loss(x, y, {or_undefined(w), ignore_index, reduction}, at);
  });
  m.def("mse_loss", [at](const T& x, const T& y, const std::string& r) {
    return mse_loss(x, y, r, at);
  });
  m.def("l1_loss", [at](const T& x, const T& y, const std::string& r) {
    return l1_loss(x, y, r, at);
  });
  m.def("smooth_l1_loss", [at](const T& x, const T& y, double beta, const std::string& r) {
    return smooth_l1_loss(x, y, beta, r, at);
  });
  m.def("binary_cross_entropy_with_logits", [at](const T& x, const T& y, const OptT& w,
                                                 const OptT& pos_w, const std::string& r) {
    return binary_cross_entropy_with_logits(x, y, {or_undefined(w), or_undefined(pos_w), r}, at);
  });
}

void bind_init(pb::module_& m, const Loc& at) {
  namespace init = nn::init;
  m.def("init_uniform_", [at](T& t, double a, double b) { init::uniform_(t, a, b, at); });
  m.def("init_normal_", [at](T& t, double mean, double sd) { init::normal_(t, mean, sd, at); });
  m.def("init_constant_", [at](T& t, double v) { init::constant_(t, v, at); });
  m.def("init_xavier_uniform_", [at](T& t, double gain) { init::xavier_uniform_(t, gain, at); });
  m.def("init_xavier_normal_", [at](T& t, double gain) { init::xavier_normal_(t, gain, at); });
  m.def("fan_in_and_fan_out", [at](const T& t) { return init::fan_in_and_fan_out(t, at); });
  m.def("clip_grad_norm_", [at](const std::vector<T>& ps, double max_norm, double norm_type) {
    return optim::clip_grad_norm_(ps, max_norm, norm_type, at);
  });
  m.def("clip_grad_value_", [at](const std::vector<T>& ps, double v) {
    optim::clip_grad_value_(ps, v, at);
  });
}

}  // namespace

void bind_ops_nn(pb::module_& m) {
  const Loc& at = call_site();
  bind_layers(m, at);
  bind_resampling(m, at);
  bind_losses(m, at);
  bind_init(m, at);
}

}  // namespace lt::py
