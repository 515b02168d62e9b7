// The data layer: IDX reading (plain and gzipped) with its exact error texts, the Fashion-MNIST
// loader on tiny files written here, and the deterministic batch order.
#include "frontend/data/idx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "lt/data.h"
#include "lt/options.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt::data {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using ::testing::HasSubstr;

Bytes idx_bytes(const std::vector<uint32_t>& dims, const Bytes& payload, uint8_t type = 0x08) {
  Bytes b{0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

Bytes iota_bytes(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7);
  return b;
}

using testing::error_of;

class DataFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("lt_idx_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_plain(const std::string& name, const Bytes& b) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return p;
  }
  std::string write_gz(const std::string& name, const Bytes& b) {
    const std::string p = (dir_ / name).string();
    gzFile f = gzopen(p.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, b.data(), static_cast<unsigned>(b.size())), static_cast<int>(b.size()));
    gzclose(f);
    return p;
  }
  Bytes read_raw(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
};

TEST_F(DataFiles, ReadsPlainAndGzipped) {
  const Bytes payload = iota_bytes(2 * 3 * 4);
  for (const std::string& p : {write_plain("a.idx", idx_bytes({2, 3, 4}, payload)),
                               write_gz("a.idx.gz", idx_bytes({2, 3, 4}, payload))}) {
    const IdxArray a = read_idx(p);
    EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3, 4})) << p;
    EXPECT_EQ(a.item_size(), 12);
    EXPECT_EQ(a.bytes, payload) << p;
  }
}

TEST_F(DataFiles, MaxItemsReadsAPrefix) {
  const Bytes payload = iota_bytes(3 * 4);
  const IdxArray a = read_idx(write_gz("a.gz", idx_bytes({3, 4}, payload)), 2);
  EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(a.bytes, Bytes(payload.begin(), payload.begin() + 8));
  EXPECT_EQ(read_idx(write_gz("b.gz", idx_bytes({3, 4}, payload)), 10).dims[0], 3);
}

TEST_F(DataFiles, MissingFile) {
  const std::string p = (dir_ / "nope.gz").string();
  EXPECT_EQ(error_of([&] { read_idx(p); }), "read_idx: " + p + ": no such file");
  EXPECT_EQ(error_of([&] { read_idx(dir_.string()); }),
            "read_idx: " + dir_.string() + ": not a regular file");
}

TEST_F(DataFiles, BadHeaders) {
  Bytes magic = idx_bytes({2}, {1, 2});
  magic[0] = 0x12;
  magic[1] = 0x34;
  std::string p = write_gz("magic.gz", magic);
  EXPECT_EQ(error_of([&] { read_idx(p); }),
            "read_idx: " + p + ": bad magic 0x12340801: not an IDX file");
  p = write_plain("float.idx", idx_bytes({1}, {0, 0, 0, 0}, 0x0d));
  EXPECT_EQ(error_of([&] { read_idx(p); }),
            "read_idx: " + p + ": element type 0x0d is not unsigned byte (0x08)");
  p = write_plain("nodims.idx", {0, 0, 8, 0});
  EXPECT_EQ(error_of([&] { read_idx(p); }),
            "read_idx: " + p + ": header declares 0 dims (1 to 8 supported)");
  p = write_plain("short.idx", {0, 0, 8});
  EXPECT_EQ(error_of([&] { read_idx(p); }),
            "read_idx: " + p + ": truncated header: got 3 of 4 bytes");
  p = write_gz("dims.gz", {0, 0, 8, 3, 0, 0, 0, 2});
  EXPECT_EQ(error_of([&] { read_idx(p); }),
            "read_idx: " + p + ": truncated header: got 4 of 12 bytes");
  p = write_plain("huge.idx", idx_bytes({0xffffffff, 0xffffffff}, {}));
  EXPECT_EQ(error_of([&] { read_idx(p); }),
            "read_idx: " + p + ": dims [4294967295,4294967295] hold more than 1099511627776 bytes");
  // Found by fuzz_idx (tests/fuzz/regressions/fuzz_idx/): zero items of a size past any int64.
  p = write_plain("empty_huge.idx", idx_bytes({0, 0xffffffff, 0xffffffff, 3}, {}));
  EXPECT_EQ(error_of([&] { read_idx(p); }),
            "read_idx: " + p + ": dims [0,4294967295,4294967295,3]: the non-zero dims multiply to "
                               "more than 1099511627776");
}

TEST_F(DataFiles, TruncatedData) {
  const Bytes short_file = idx_bytes({3, 4}, iota_bytes(10));
  for (const std::string& p : {write_plain("t.idx", short_file), write_gz("t.gz", short_file)}) {
    EXPECT_EQ(error_of([&] { read_idx(p); }),
              "read_idx: " + p + ": truncated: dims [3,4] need 12 data bytes, got 10");
  }
}

TEST_F(DataFiles, HeaderDeclaringMoreThanTheFileHoldsIsTruncated) {
  // Found by fuzz_idx (tests/fuzz/regressions/fuzz_idx/): 13 bytes that declare 425 GB of data
  // must not make the reader allocate them.
  const Bytes big = idx_bytes({8448, 50331648}, {2});
  const std::string why = ": truncated: dims [8448,50331648] need 425201762304 data bytes, got 1";
  const std::string p = write_plain("big.idx", big);
  EXPECT_EQ(error_of([&] { read_idx(p); }), "read_idx: " + p + why);
  const std::string gz = write_gz("big.gz", big);
  EXPECT_EQ(error_of([&] { read_idx(gz, 7); }), "read_idx: " + gz + why);
}

TEST_F(DataFiles, CutGzipStreamReadsAsTruncated) {
  // A download cut short: the compressed stream itself ends early.
  Bytes noise(4000);
  for (size_t i = 0; i < noise.size(); ++i)
    noise[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  const std::string full = write_gz("full.gz", idx_bytes({40, 100}, noise));
  Bytes gz = read_raw(full);
  gz.resize(gz.size() / 2);
  const std::string p = write_plain("cut.gz", gz);
  EXPECT_THAT(
      error_of([&] { read_idx(p); }),
      HasSubstr("read_idx: " + p + ": truncated: dims [40,100] need 4000 data bytes, got "));
}

TEST_F(DataFiles, TrailingBytes) {
  const std::string p = write_gz("x.gz", idx_bytes({3, 4}, iota_bytes(13)));
  EXPECT_EQ(error_of([&] { read_idx(p); }),
            "read_idx: " + p + ": trailing bytes after the 12 data bytes of dims [3,4]");
  EXPECT_EQ(read_idx(p, 2).dims[0], 2) << "a prefix read does not look past its items";
}

TEST_F(DataFiles, CorruptGzip) {
  Bytes gz = read_raw(write_gz("ok.gz", idx_bytes({64}, iota_bytes(64))));
  gz[gz.size() - 6] ^= 0xff;  // inside the CRC-32 trailer
  const std::string p = write_plain("bad.gz", gz);
  EXPECT_THAT(error_of([&] { read_idx(p); }),
              HasSubstr("read_idx: " + p + ": corrupt gzip data: "));
}

// --- Fashion-MNIST on tiny files -----------------------------------------------------------

class TinyFashionMnist : public DataFiles {
 protected:
  void write_split(const std::string& prefix, uint32_t n_images, const Bytes& labels) {
    write_gz(prefix + "-images-idx3-ubyte.gz",
             idx_bytes({n_images, 28, 28}, iota_bytes(n_images * 784)));
    write_plain(prefix + "-labels-idx1-ubyte",
                idx_bytes({static_cast<uint32_t>(labels.size())}, labels));
  }
};

TEST_F(TinyFashionMnist, LoadsScaledImagesAndLabels) {
  write_split("t10k", 3, {0, 9, 4});
  const TensorDataset ds = load_fashion_mnist(Split::Test, {.dir = dir_.string()});
  ASSERT_EQ(ds.images.type(), (TensorType{DType::F32, {3, 784}}));
  ASSERT_EQ(ds.labels.type(), (TensorType{DType::I64, {3}}));
  EXPECT_EQ(ds.labels.to_vector<int64_t>(), (std::vector<int64_t>{0, 9, 4}));
  const std::vector<float> px = ds.images.to_vector<float>();
  const Bytes raw = iota_bytes(3 * 784);
  for (size_t i : {size_t{0}, size_t{1}, size_t{785}, size_t{2351}})
    EXPECT_FLOAT_EQ(px[i], raw[i] / 255.0f) << i;

  const TensorDataset two =
      load_fashion_mnist(Split::Test, {.dir = dir_.string(), .limit = 2, .normalize = true});
  EXPECT_EQ(two.size(), 2);
  EXPECT_NEAR(two.images.to_vector<float>()[1],
              (raw[1] / 255.0 - kFashionMnistMean) / kFashionMnistStd, 1e-6);
}

TEST_F(TinyFashionMnist, Errors) {
  const std::string d = dir_.string();
  EXPECT_EQ(error_of([&] { load_fashion_mnist(Split::Train, {.dir = d}); }),
            "load_fashion_mnist: no train-images-idx3-ubyte.gz or train-images-idx3-ubyte in " + d +
                " (install the dataset-fashion-mnist package or point LT_FASHION_MNIST_DIR at a "
                "directory holding the IDX files)");
  write_split("train", 3, {1, 2});
  EXPECT_EQ(error_of([&] { load_fashion_mnist(Split::Train, {.dir = d}); }),
            "load_fashion_mnist: " + d + "/train-images-idx3-ubyte.gz holds 3 images but " + d +
                "/train-labels-idx1-ubyte holds 2 labels");
  write_split("t10k", 2, {1, 10});
  EXPECT_EQ(
      error_of([&] { load_fashion_mnist(Split::Test, {.dir = d}); }),
      "load_fashion_mnist: " + d + "/t10k-labels-idx1-ubyte: label 10 of item 1 is not in [0,10)");
}

TEST_F(TinyFashionMnist, DirectoryFromTheSetting) {
  const std::string saved = option("LT_FASHION_MNIST_DIR");
  set_option("LT_FASHION_MNIST_DIR", dir_.string());
  EXPECT_EQ(fashion_mnist_dir(), dir_.string());
  write_split("train", 2, {3, 5});
  EXPECT_EQ(load_fashion_mnist(Split::Train).size(), 2);
  set_option("LT_FASHION_MNIST_DIR", saved);
  EXPECT_EQ(fashion_mnist_dir(), saved);
}

// --- batching ------------------------------------------------------------------------------

TEST(Batches, ShuffleIsASeededPermutation) {
  const std::vector<int64_t> a = shuffled_indices(1000, 7, 0);
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 1000u);
  EXPECT_EQ(*std::min_element(a.begin(), a.end()), 0);
  EXPECT_EQ(*std::max_element(a.begin(), a.end()), 999);
  EXPECT_EQ(a, shuffled_indices(1000, 7, 0));
  EXPECT_NE(a, shuffled_indices(1000, 7, 1));
  EXPECT_NE(a, shuffled_indices(1000, 8, 0));
  // Pinned: the order must not change with the platform or the standard library.
  EXPECT_EQ(shuffled_indices(8, 42, 3), (std::vector<int64_t>{0, 4, 6, 3, 1, 5, 2, 7}));
  EXPECT_TRUE(shuffled_indices(0, 1, 0).empty());
}

TensorDataset rows_dataset(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    x.insert(x.end(), {static_cast<float>(i), static_cast<float>(-i)});
    y.push_back(i);
  }
  return {from_vector(x, {n, 2}), from_vector(y, {n})};
}

TEST(Batches, IteratorCoversEachRowOncePerEpoch) {
  BatchIterator plain(rows_dataset(10), {.batch_size = 4, .shuffle = false});
  EXPECT_EQ(plain.num_batches(), 3);
  std::vector<int64_t> sizes;
  while (auto b = plain.next()) {
    sizes.push_back(b->labels.numel());
    const auto y = b->labels.to_vector<int64_t>();
    const auto x = b->images.to_vector<float>();
    for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(x[2 * i], static_cast<float>(y[i]));
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));

  BatchIterator shuffled(rows_dataset(10), {.batch_size = 4, .seed = 3, .drop_last = true});
  EXPECT_EQ(shuffled.num_batches(), 2);
  for (int epoch = 0; epoch < 2; ++epoch) {
    shuffled.start_epoch(epoch);
    std::vector<int64_t> seen;
    while (auto b = shuffled.next()) {
      const auto y = b->labels.to_vector<int64_t>();
      const auto x = b->images.to_vector<float>();
      for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(x[2 * i + 1], -static_cast<float>(y[i]));
      seen.insert(seen.end(), y.begin(), y.end());
    }
    const auto& order = shuffled.order();
    EXPECT_EQ(seen, std::vector<int64_t>(order.begin(), order.begin() + 8));
    EXPECT_EQ(order, shuffled_indices(10, 3, epoch));
  }
}

// A replica's rows of each batch are the rows of the whole batch it would cut out; the range is
// clipped to the batch (the short last one too), and every call moves on by a whole batch.
TEST(Batches, NextRowsAreTheRowsOfTheWholeBatch) {
  BatchIterator whole(rows_dataset(10), {.batch_size = 4, .seed = 5});
  BatchIterator part(rows_dataset(10), {.batch_size = 4, .seed = 5});
  // The third batch holds 2 rows (10 = 4 + 4 + 2): rows [1, 6) of it are its second row alone.
  const std::pair<int64_t, int64_t> ranges[] = {{0, 2}, {2, 2}, {1, 5}};
  for (const auto& [first, count] : ranges) {
    const auto w = whole.next();
    const auto p = part.next_rows(first, count);
    ASSERT_TRUE(w && p);
    const auto wy = w->labels.to_vector<int64_t>();
    const int64_t end = std::min<int64_t>(first + count, static_cast<int64_t>(wy.size()));
    EXPECT_EQ(p->labels.to_vector<int64_t>(),
              std::vector<int64_t>(wy.begin() + std::min<int64_t>(first, end), wy.begin() + end));
    const auto px = p->images.to_vector<float>(), wx = w->images.to_vector<float>();
    EXPECT_EQ(px, std::vector<float>(wx.begin() + 2 * std::min<int64_t>(first, end),
                                     wx.begin() + 2 * end));
    EXPECT_EQ(part.batch_index(), whole.batch_index());
  }
  EXPECT_FALSE(part.next_rows(0, 2));
  part.start_epoch(1);
  EXPECT_EQ(part.next_rows(5, 2)->labels.numel(), 0);  // past the batch's 4 rows
  EXPECT_THAT(error_of([&] { part.next_rows(-1, 2); }),
              HasSubstr("BatchIterator::next_rows: rows [-1, -1 + 2) of a batch at idx_test.cpp:"));
}

TEST(Batches, GatherRowsChecksIndices) {
  const TensorDataset ds = rows_dataset(3);
  const std::vector<int64_t> rows{2, 0, 2};
  EXPECT_EQ(gather_rows(ds.images, rows).to_vector<float>(),
            (std::vector<float>{2, -2, 0, 0, 2, -2}));
  const std::vector<int64_t> bad{3};
  EXPECT_THAT(error_of([&] { gather_rows(ds.labels, bad); }),
              HasSubstr("gather_rows: row 3 out of range for i64[3] at idx_test.cpp:"));
  EXPECT_THAT(error_of([&] { BatchIterator(ds, {.batch_size = 0}); }),
              HasSubstr("BatchIterator: batch_size must be >= 1, got 0"));
}

}  // namespace
}  // namespace lt::data
