// Tensor::str: repr(tensor) of PyTorch 1.13 (torch/_tensor_str.py with its default print
// options), step for step, so that a printed lazytrain tensor reads as the PyTorch one does.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "frontend/autograd/grad_node.h"
#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "lt/lazy.h"
#include "lt/tensor.h"

namespace lt {

namespace {

// PyTorch's PRINT_OPTS defaults.
constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

/// The elements as PyTorch reads them for printing: floats as doubles (f16 and bf16 widened, as
/// PyTorch's .float()), integers and bools as int64.
struct Elements {
  bool floating = false, boolean = false;
  std::vector<double> f;
  std::vector<int64_t> i;
};

/// The element indices that are printed, in order: all of them, or with summarize the first and
/// last kEdgeItems of every dim longer than 2 kEdgeItems (get_summarized_data's selection).
void shown(const Shape& shape, size_t d, int64_t offset, bool summarize,
           std::vector<int64_t>& out) {
  if (d == shape.size()) {
    out.push_back(offset);
    return;
  }
  int64_t stride = 1;
  for (size_t k = d + 1; k < shape.size(); ++k) stride *= shape[k];
  const int64_t n = shape[d];
  for (int64_t j = 0; j < n; ++j) {
    if (summarize && n > 2 * kEdgeItems && j == kEdgeItems) j = n - kEdgeItems;
    shown(shape, d + 1, offset + j * stride, summarize, out);
  }
}

/// Python's str() of a float in "{:.Nf}" / "{:.Ne}": fmt's, except that NaN has no sign.
std::string py_float(double v, char style, int precision) {
  if (std::isnan(v)) return "nan";
  return style == 'e' ? fmt::format("{:.{}e}", v, precision)
                      : fmt::format("{:.{}f}", v, precision);
}

/// torch._tensor_str._Formatter: one width and one notation for every element printed.
class Formatter {
 public:
  Formatter(const Elements& e, const std::vector<int64_t>& indices) : e_(e) {
    if (!e.floating) {
      for (int64_t k : indices) width_ = std::max(width_, plain(k).size());
      return;
    }
    std::vector<double> vals;  // nonzero finite
    for (int64_t k : indices)
      if (std::isfinite(e.f[k]) && e.f[k] != 0) vals.push_back(e.f[k]);
    if (vals.empty()) return;
    double lo = std::abs(vals[0]), hi = lo;
    for (double v : vals) {
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
      int_mode_ = int_mode_ && v == std::ceil(v);
    }
    sci_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double v : vals) {
      const size_t w = sci_        ? py_float(v, 'e', kPrecision).size()
                       : int_mode_ ? py_float(v, 'f', 0).size() + 1
                                   : py_float(v, 'f', kPrecision).size();
      width_ = std::max(width_, w);
    }
  }

  size_t width() const { return width_; }

  /// Element k, right-aligned to the width.
  std::string operator()(int64_t k) const {
    std::string s;
    if (!e_.floating) {
      s = plain(k);
    } else if (sci_) {
      s = py_float(e_.f[k], 'e', kPrecision);
    } else if (int_mode_) {
      s = py_float(e_.f[k], 'f', 0);
      if (std::isfinite(e_.f[k])) s += ".";
    } else {
      s = py_float(e_.f[k], 'f', kPrecision);
    }
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }

 private:
  std::string plain(int64_t k) const {
    if (e_.boolean) return e_.i[k] ? "True" : "False";
    return std::to_string(e_.i[k]);
  }

  const Elements& e_;
  bool int_mode_ = true, sci_ = false;
  size_t width_ = 1;
};

struct Printer {
  const Shape& shape;
  const Formatter& format;
  bool summarize;

  // _vector_str: elements joined by ", ", as many to a line as fit in the line width.
  std::string vector(int64_t offset, int64_t indent) const {
    const int64_t n = shape.back();
    const int64_t per_line =
        std::max<int64_t>(1, (kLineWidth - indent) / static_cast<int64_t>(format.width() + 2));
    std::vector<std::string> data;
    for (int64_t j = 0; j < n; ++j) {
      if (summarize && n > 2 * kEdgeItems && j == kEdgeItems) {
        data.push_back(" ...");
        j = n - kEdgeItems;
      }
      data.push_back(format(offset + j));
    }
    std::string out = "[";
    for (size_t j = 0; j < data.size(); ++j) {
      if (j > 0) {
        out += static_cast<int64_t>(j) % per_line == 0
                   ? ",\n" + std::string(static_cast<size_t>(indent + 1), ' ')
                   : ", ";
      }
      out += data[j];
    }
    return out + "]";
  }

  // _tensor_str_with_formatter: sub-tensors separated by a blank line per dim below them.
  std::string tensor(size_t d, int64_t offset, int64_t indent) const {
    if (shape.empty()) return format(0);
    if (d + 1 == shape.size()) return vector(offset, indent);
    int64_t stride = 1;
    for (size_t k = d + 1; k < shape.size(); ++k) stride *= shape[k];
    const int64_t n = shape[d];
    const std::string sep = "," + std::string(shape.size() - d - 1, '\n') +
                            std::string(static_cast<size_t>(indent + 1), ' ');
    std::string out = "[";
    for (int64_t j = 0; j < n; ++j) {
      if (j > 0) out += sep;
      if (summarize && n > 2 * kEdgeItems && j == kEdgeItems) {
        out += "..." + sep;
        j = n - kEdgeItems;
      }
      out += tensor(d + 1, offset + j * stride, indent + 1);
    }
    return out + "]";
  }
};

Elements elements(const Tensor& t, const Loc& loc) {
  Elements e;
  e.floating = is_float(t.dtype());
  e.boolean = t.dtype() == DType::Bool;
  if (e.floating) {
    e.f = t.to_vector<double>(loc);
  } else if (e.boolean) {
    for (bool b : t.to_vector<bool>(loc)) e.i.push_back(b);
  } else {
    e.i = t.to_vector<int64_t>(loc);
  }
  return e;
}

/// A grad_fn in PyTorch's spelling: the op's name in CamelCase, then "Backward" (mul ->
/// MulBackward, gelu_erf -> GeluErfBackward; a custom function's name as given).
std::string grad_fn_name(const GradNode& node) {
  if (node.custom) return node.custom->name + "Backward";
  std::string out;
  bool upper = true;
  for (char c : node_name(node)) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + "Backward";
}

// _add_suffixes: ", suffix" on the last line while it fits in the line width, else a new line.
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes,
                         size_t indent) {
  const size_t newline = text.rfind('\n');
  // Python's len(s) - s.rfind("\n") + 1, where rfind gives -1 for no newline.
  size_t last = newline == std::string::npos ? text.size() + 2 : text.size() - newline + 1;
  for (const std::string& s : suffixes) {
    if (last + s.size() + 2 > static_cast<size_t>(kLineWidth)) {
      text += ",\n" + std::string(indent, ' ') + s;
      last = indent + s.size();
    } else {
      text += ", " + s;
      last += s.size() + 2;
    }
  }
  return text + ")";
}

}  // namespace

std::string Tensor::grad_fn_name() const {
  return is_leaf() ? std::string() : lt::grad_fn_name(*impl()->grad_fn);
}

std::string Tensor::str(Loc loc) const {
  if (!defined()) return "Tensor(undefined)";
  lazy::sync(*this, "print", loc);
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  const DType dt = dtype();
  std::vector<std::string> suffixes;
  std::string body;
  if (numel() == 0) {
    if (rank() != 1) {
      std::string size = "size=(";
      for (int64_t d = 0; d < rank(); ++d) size += fmt::format("{}{}", d ? ", " : "", shape()[d]);
      suffixes.push_back(size + ")");
    }
    // No element says which dtype an empty tensor has: only the default float goes unnamed.
    if (dt != DType::F32) suffixes.push_back(fmt::format("dtype={}", dtype_name(dt)));
    body = "[]";
  } else {
    if (dt != DType::F32 && dt != DType::I64 && dt != DType::Bool)
      suffixes.push_back(fmt::format("dtype={}", dtype_name(dt)));
    const Elements e = elements(*this, loc);
    const bool summarize = numel() > kThreshold;
    std::vector<int64_t> indices;
    shown(shape(), 0, 0, summarize, indices);
    const Formatter format(e, indices);
    body = Printer{shape(), format, summarize}.tensor(0, 0, indent);
  }
  if (impl()->grad_fn)
    suffixes.push_back(fmt::format("grad_fn=<{}>", lt::grad_fn_name(*impl()->grad_fn)));
  else if (requires_grad())
    suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, static_cast<size_t>(indent));
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace lt
