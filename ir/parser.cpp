// Recursive-descent parser for the text form that printer.cpp writes. The lexer is lazy (one token
// of lookahead) so the first error in reading order is the one reported.
#include "ir/parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/error.h"

namespace lt::ir {
namespace {

/// A default-constructed Attrs holding alternative `index`: the op table stores the index, and
/// the parser fills the fields generically from kNames/fields().
template <size_t... I>
Attrs default_attrs(size_t index, std::index_sequence<I...>) {
  Attrs a;
  (void)((index == I ? (a.emplace<I>(), true) : false) || ...);
  return a;
}
Attrs default_attrs(size_t index) {
  LT_CHECK(index < std::variant_size_v<Attrs>, "attrs index {} out of range", index);
  return default_attrs(index, std::make_index_sequence<std::variant_size_v<Attrs>>{});
}

/// Calls f on element `i` of a tuple of references (the run-time index of an attribute name).
template <class Tuple, class F, size_t... I>
void with_field(Tuple& t, size_t i, F&& f, std::index_sequence<I...>) {
  (void)((i == I ? (f(std::get<I>(t)), true) : false) || ...);
}

bool is_ident(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// Atoms are maximal runs of these characters: identifiers, integers and every double form the
// printer writes (1e-05, 1e+20, -inf, nan) lex as one token and are interpreted by context.
bool is_atom_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
         c == '+';
}

enum class Tok { End, Atom, Value, GraphName, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string_view text;  // Value and GraphName include their '%' / '@'
  int line = 1, col = 1;
  std::string_view body() const {
    return text.substr(kind == Tok::Value || kind == Tok::GraphName ? 1 : 0);
  }
};

class Parser {
 public:
  explicit Parser(std::string_view src) : src_(src) { advance(); }

  Graph parse_graph() {
    if (!is_atom("graph")) fail_got("expected 'graph'");
    advance();
    if (tok_.kind != Tok::GraphName || !is_ident(tok_.body()))
      fail_got("expected a graph name like @main");
    g_ = Graph(std::string(tok_.body()));
    advance();
    expect('(', "expected '(' before the parameters");
    if (!is_punct(')')) {
      do parse_param();
      while (accept(','));
    }
    expect(')', "expected ',' or ')' after a parameter");
    std::vector<std::pair<Token, Donation>> donations;  // checked once the results are known
    if (is_atom("donate")) {
      advance();
      expect('(', "expected '(' after donate");
      do {
        const Token at = tok_;
        const Value v = parse_use();
        if (!v.is_param()) fail_got(at, "only parameters can be donated");
        expect(':', "expected ':' between a donated parameter and its result index");
        const int64_t r = parse_int("expected a result index");
        donations.push_back({at, {v.param_index(), static_cast<int>(r)}});
      } while (accept(','));
      expect(')', "expected ',' or ')' in donate(...)");
    }
    expect('{', "expected '{' to open the graph body");
    while (tok_.kind == Tok::Value) parse_node();
    if (!is_atom("return"))
      fail_got(fmt::format("unterminated graph @{}: expected a node or 'return'", g_.name()));
    advance();
    std::vector<Value> results;
    if (tok_.kind == Tok::Value) {
      do results.push_back(parse_use());
      while (accept(','));
    }
    for (const auto& [at, d] : donations) {
      if (d.result < 0 || d.result >= static_cast<int>(results.size()))
        fail(at, fmt::format("donation to result {}, but the graph returns {} values", d.result,
                             results.size()));
      g_.add_donation(d);
    }
    g_.set_results(std::move(results));
    expect('}', fmt::format("expected '}}' to close graph @{}", g_.name()));
    if (tok_.kind != Tok::End) fail_got("expected end of input after the graph");
    return std::move(g_);
  }

 private:
  // ---- lexing ----
  void bump() {
    if (src_[pos_++] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
  }

  void skip_blanks() {
    while (pos_ < src_.size()) {
      if (std::isspace(static_cast<unsigned char>(src_[pos_]))) {
        bump();
      } else if (src_.substr(pos_, 2) == "//") {
        while (pos_ < src_.size() && src_[pos_] != '\n') bump();
      } else {
        return;
      }
    }
  }

  void advance() {
    skip_blanks();
    tok_ = {Tok::End, {}, line_, col_};
    if (pos_ == src_.size()) return;
    const size_t start = pos_;
    const char c = src_[pos_];
    if (c == '%' || c == '@' || is_atom_char(c)) {
      tok_.kind = c == '%' ? Tok::Value : c == '@' ? Tok::GraphName : Tok::Atom;
      if (tok_.kind != Tok::Atom) bump();
      while (pos_ < src_.size() && is_atom_char(src_[pos_])) bump();
    } else if (std::strchr("(){}[],:=#", c) != nullptr) {
      tok_.kind = Tok::Punct;
      bump();
    } else {
      tok_.text = src_.substr(start, 1);
      fail(tok_, fmt::format("unexpected character '{}'", c));
    }
    tok_.text = src_.substr(start, pos_ - start);
  }

  bool is_punct(char c) const { return tok_.kind == Tok::Punct && tok_.text[0] == c; }
  bool is_atom(std::string_view s) const { return tok_.kind == Tok::Atom && tok_.text == s; }
  bool accept(char c) {
    if (!is_punct(c)) return false;
    advance();
    return true;
  }
  void expect(char c, std::string_view what) {
    if (!accept(c)) fail_got(what);
  }

  // ---- errors ----
  static std::string describe(const Token& t) {
    return t.kind == Tok::End ? "end of input" : fmt::format("'{}'", t.text);
  }
  [[noreturn]] static void fail(const Token& at, std::string_view what) {
    throw Error(fmt::format("line {}, column {}: {}", at.line, at.col, what));
  }
  [[noreturn]] static void fail_got(const Token& at, std::string_view what) {
    fail(at, fmt::format("{}, got {}", what, describe(at)));
  }
  [[noreturn]] void fail_got(std::string_view what) const { fail_got(tok_, what); }

  // ---- literals and types ----
  int64_t parse_int(std::string_view what) {
    int64_t v = 0;
    const std::string_view s = tok_.text;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (tok_.kind != Tok::Atom || s.empty() || end != s.data() + s.size()) fail_got(what);
    if (ec == std::errc::result_out_of_range) fail_got("integer out of range");
    if (ec != std::errc()) fail_got(what);
    advance();
    return v;
  }

  Ints parse_int_list(std::string_view what) {
    if (!is_punct('[')) fail_got(what);
    advance();
    Ints v;
    if (!is_punct(']')) {
      do v.push_back(parse_int("expected an integer"));
      while (accept(','));
    }
    expect(']', "expected ',' or ']' in a list");
    return v;
  }

  DType parse_dtype_atom(std::string_view what) {
    DType t{};
    if (tok_.kind != Tok::Atom) fail_got(what);
    if (!parse_dtype(tok_.text, &t)) fail(tok_, fmt::format("unknown dtype '{}'", tok_.text));
    advance();
    return t;
  }

  TensorType parse_type() {
    TensorType t;
    t.dtype = parse_dtype_atom("expected a type like f32[4,8]");
    const Token dims = tok_;
    t.shape = parse_int_list("expected '[' after the dtype");
    for (int64_t d : t.shape)
      if (d < 0) fail_got(dims, fmt::format("negative dimension {} in a type", d));
    if (!shape_fits(t.shape))
      fail(dims, fmt::format("shape {} has more than {} elements", shape_str(t.shape),
                             kMaxElements));
    return t;
  }

  // ---- attributes, generically from kNames/fields() ----
  void parse_field(int64_t& f, const std::string& kind) { f = parse_int(kind + "an integer"); }
  void parse_field(Ints& f, const std::string& kind) {
    f = parse_int_list(kind + "a list of integers like [1,2]");
  }
  void parse_field(DType& f, const std::string& kind) {
    DType t{};
    if (tok_.kind != Tok::Atom || !parse_dtype(tok_.text, &t)) fail_got(kind + "a dtype");
    f = t;
    advance();
  }
  void parse_field(ReduceKind& f, const std::string& kind) {
    if (tok_.kind != Tok::Atom || !parse_reduce_kind(tok_.text, &f))
      fail_got(kind + "sum, mean, max or min");
    advance();
  }
  void parse_field(bool& f, const std::string& kind) {
    if (!is_atom("true") && !is_atom("false")) fail_got(kind + "true or false");
    f = tok_.text == "true";
    advance();
  }
  void parse_field(double& f, const std::string& kind) {
    const std::string_view s = tok_.text;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), f);
    if (tok_.kind != Tok::Atom || s.empty() || end != s.data() + s.size())
      fail_got(kind + "a number");
    // from_chars leaves f untouched when out of range; the printer writes inf, never 1e999.
    if (ec == std::errc::result_out_of_range) fail_got("number out of range");
    if (ec != std::errc()) fail_got(kind + "a number");
    advance();
  }

  Attrs parse_attrs(Op op) {
    Attrs attrs = default_attrs(info(op).attrs_index);
    const std::string_view mn = mnemonic(op);
    std::visit(
        [&](auto& s) {
          using S = std::decay_t<decltype(s)>;
          constexpr size_t n = S::kNames.size();
          if constexpr (n == 0) {
            if (is_punct('{')) fail_got(fmt::format("{} takes no attributes", mn));
          } else {
            const std::string names = fmt::format("{}", fmt::join(S::kNames, ", "));
            if (!is_punct('{'))
              fail_got(fmt::format("expected attributes {{{}}} for {}", names, mn));
            advance();
            std::array<bool, n> seen{};
            auto fields = s.fields();
            if (!is_punct('}')) {
              do {
                const Token name = tok_;
                if (tok_.kind != Tok::Atom) fail_got("expected an attribute name");
                size_t i = 0;
                while (i < n && name.text != S::kNames[i]) ++i;
                if (i == n)
                  fail(name, fmt::format("unknown attribute '{}' for {} (expects {})", name.text,
                                         mn, names));
                if (seen[i]) fail(name, fmt::format("duplicate attribute '{}'", name.text));
                seen[i] = true;
                advance();
                expect('=', "expected '=' after the attribute name");
                const std::string kind =
                    fmt::format("attribute '{}' of {} expects ", S::kNames[i], mn);
                with_field(fields, i, [&](auto& f) { parse_field(f, kind); },
                           std::make_index_sequence<n>{});
              } while (accept(','));
            }
            const Token close = tok_;
            expect('}', "expected ',' or '}' after an attribute");
            for (size_t i = 0; i < required_fields<S>(); ++i)
              if (!seen[i])
                fail_got(close, fmt::format("missing attribute '{}' for {}", S::kNames[i], mn));
          }
        },
        attrs);
    return attrs;
  }

  // ---- values, parameters, nodes ----
  Value parse_use() {
    const Token use = tok_;
    if (tok_.kind != Tok::Value) fail_got("expected a value like %x or %3");
    const std::string_view b = use.body();
    Value v;
    if (auto it = params_.find(b); it != params_.end()) {
      v = Value::param(it->second);
    } else if (int id = node_ref(b); id >= 0 && id < static_cast<int>(g_.nodes().size())) {
      v = Value::node(id);
    } else {
      fail(use, fmt::format("use of undefined value '{}'", use.text));
    }
    advance();
    if (v.is_param()) return v;
    const int outs = g_.num_outputs(v.def);
    if (!is_punct('#')) {
      if (outs != 1)
        fail(use, fmt::format("'{}' has {} outputs; name one as {}#<index>", use.text, outs,
                              use.text));
      return v;
    }
    // One spelling per value keeps golden-test patterns reliable: '#' only on multi-output nodes.
    if (outs == 1) fail_got(fmt::format("'{}' has one output and takes no '#index'", use.text));
    advance();
    const Token idx = tok_;
    const int64_t i = parse_int("expected an output index after '#'");
    if (i < 0 || i >= outs)
      fail_got(idx, fmt::format("output index out of range for '{}' ({} outputs)", use.text, outs));
    v.index = static_cast<int32_t>(i);
    return v;
  }

  /// The node id spelled by `b` in canonical form ("0", "12"), or -1.
  static int node_ref(std::string_view b) {
    if (b.empty() || b.size() > 9 || (b.size() > 1 && b[0] == '0')) return -1;
    int v = 0;
    auto [end, ec] = std::from_chars(b.data(), b.data() + b.size(), v);
    return ec == std::errc() && end == b.data() + b.size() ? v : -1;
  }

  void parse_param() {
    const Token t = tok_;
    if (tok_.kind != Tok::Value) fail_got("expected a parameter like %x: f32[4]");
    if (!is_ident(t.body()))
      fail_got("parameter names are identifiers ([A-Za-z_][A-Za-z0-9_]*)");
    if (params_.contains(t.body())) fail(t, fmt::format("duplicate parameter '{}'", t.text));
    advance();
    expect(':', "expected ':' after the parameter name");
    params_.emplace(t.body(), static_cast<int>(g_.params().size()));
    g_.add_param(parse_type(), std::string(t.body()));
  }

  void parse_node() {
    const int id = static_cast<int>(g_.nodes().size());
    if (node_ref(tok_.body()) != id)
      fail_got(fmt::format("node ids must be sequential from %0: expected %{}", id));
    advance();
    int64_t count = -1;  // -1: a single output, written without a count
    if (accept(':')) {
      const Token c = tok_;
      count = parse_int("expected an output count after ':'");
      if (count == 1 || count < 0)
        fail_got(c, "output count must be 0 or at least 2 (one output is written without a count)");
    }
    expect('=', "expected '=' after the node id");
    const Token op_tok = tok_;
    std::optional<Op> op;
    if (tok_.kind == Tok::Atom) op = op_from_mnemonic(tok_.text);
    if (!op) {
      if (tok_.kind != Tok::Atom) fail_got("expected an op name");
      fail(op_tok, fmt::format("unknown op '{}'", op_tok.text));
    }
    advance();
    expect('(', "expected '(' after the op name");
    std::vector<Value> inputs;
    if (!is_punct(')')) {
      do inputs.push_back(parse_use());
      while (accept(','));
    }
    expect(')', "expected ',' or ')' after an operand");
    Attrs attrs = parse_attrs(*op);
    expect(':', "expected ':' before the result type");
    TypeList types;
    if (count < 0) {
      types.push_back(parse_type());
    } else {
      expect('(', fmt::format("expected '(' and {} types", count));
      if (!is_punct(')')) {
        do types.push_back(parse_type());
        while (accept(','));
      }
      if (static_cast<int64_t>(types.size()) != count && is_punct(')'))
        fail_got(fmt::format("node %{} declares {} outputs but lists {} types", id, count,
                             types.size()));
      expect(')', "expected ',' or ')' after a type");
    }
    g_.add_typed(*op, std::move(inputs), std::move(attrs), std::move(types));
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  Token tok_;
  Graph g_;
  std::unordered_map<std::string_view, int> params_;  // name (a view into src_) -> number
};

}  // namespace

Graph parse(std::string_view text) { return Parser(text).parse_graph(); }

}  // namespace lt::ir
