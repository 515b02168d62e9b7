// The dims of a shape: a vector of int64 that keeps up to six dims inline. Every traced op, every
// eager result and every graph node copies shapes; with std::vector each copy was a heap
// allocation, and a ResNet-20 step traced about 14 of them per op. Ranks above six spill to the
// heap. The interface is std::vector's, as far as shapes need it.
#pragma once
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <span>
#include <vector>

namespace lt {

class Dims {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  static constexpr size_t kInline = 6;

  Dims() = default;
  explicit Dims(size_t n, int64_t value = 0) { assign(n, value); }
  Dims(std::initializer_list<int64_t> l) { assign(l.begin(), l.end()); }
  template <std::input_iterator It>
  Dims(It first, It last) {
    assign(first, last);
  }
  Dims(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit
  explicit Dims(std::span<const int64_t> s) { assign(s.begin(), s.end()); }
  Dims(const Dims& o) { copy_from(o); }
  Dims(Dims&& o) noexcept { take(o); }
  Dims& operator=(const Dims& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  Dims& operator=(Dims&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Dims& operator=(std::initializer_list<int64_t> l) {
    assign(l.begin(), l.end());
    return *this;
  }
  ~Dims() { release(); }

  explicit operator std::vector<int64_t>() const { return {begin(), end()}; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  int64_t& front() { return data_[0]; }
  const int64_t& front() const { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n <= cap_) return;
    auto* heap = new int64_t[n];
    std::copy(begin(), end(), heap);
    const size_t size = size_;
    release();
    data_ = heap;
    size_ = size;
    cap_ = n;
  }
  void clear() { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data_ + size_, data_ + n, value);
    size_ = n;
  }
  void assign(size_t n, int64_t value) {
    clear();
    resize(n, value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>)
      reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(*first);
  }
  void push_back(int64_t v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data_[size_++] = v;
  }
  int64_t& emplace_back(int64_t v) {
    push_back(v);
    return back();
  }
  void pop_back() { --size_; }
  iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_t{1}, v); }
  iterator insert(const_iterator pos, size_t n, int64_t v) {
    const size_t at = static_cast<size_t>(pos - data_);
    if (size_ + n > cap_) reserve(std::max(size_ + n, cap_ * 2));
    std::move_backward(data_ + at, data_ + size_, data_ + size_ + n);
    std::fill(data_ + at, data_ + at + n, v);
    size_ += n;
    return data_ + at;
  }
  template <std::input_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - data_);
    const Dims mid(first, last);  // copied first: the range may lie in *this
    Dims tail(data_ + at, data_ + size_);
    size_ = at;
    for (int64_t d : mid) push_back(d);
    for (int64_t d : tail) push_back(d);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> l) {
    return insert(pos, l.begin(), l.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    auto* f = data_ + (first - data_);
    auto* l = data_ + (last - data_);
    std::move(l, end(), f);
    size_ -= static_cast<size_t>(l - f);
    return f;
  }

  friend bool operator==(const Dims& a, const Dims& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend std::strong_ordering operator<=>(const Dims& a, const Dims& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return data_ != inline_; }
  void release() {
    if (on_heap()) delete[] data_;
    data_ = inline_;
    cap_ = kInline;
    size_ = 0;
  }
  // A traced op copies several shapes: one block copy, not a push_back per dim.
  void copy_from(const Dims& o) {
    reserve(o.size_);
    std::copy_n(o.data_, o.size_, data_);
    size_ = o.size_;
  }
  // Steals o's heap block or copies its inline dims; o is left empty.
  void take(Dims& o) {
    if (o.on_heap()) {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = kInline;
    } else {
      std::copy(o.begin(), o.end(), inline_);
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = kInline;
  int64_t inline_[kInline];
};

}  // namespace lt
