// Malformed safetensors files: each is refused with one lt::Error naming the file and the
// problem, and no byte sequence makes the loader read past its buffer or fail another way.
#include <gtest/gtest.h>

#include "frontend/io/safetensors_reader.h"
#include "lt/lt.h"
#include "tests/support/scratch_dir.h"

namespace lt {
namespace {

using testing::ScratchDir;
using testing::write_bytes;

std::string le64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>(v >> (8 * i));
  return s;
}

/// A file: the header's length, the header, then `data`.
std::string file_of(const std::string& header, const std::string& data = "") {
  return le64(header.size()) + header + data;
}

class LoadErrors : public ::testing::Test {
 protected:
  /// The problem lt::load reports for a file of these bytes, checking the rest of the message:
  /// "load: PATH: PROBLEM at serialize_errors_test.cpp:LINE".
  std::string problem(const std::string& bytes) {
    write_bytes(path_, bytes);
    return problem_at(path_);
  }
  std::string problem_at(const std::string& path) {
    std::string msg = "no error";
    const int line = __LINE__ + 2;
    try {
      load(path);
    } catch (const Error& e) {
      msg = e.what();
    }
    const std::string head = "load: " + path + ": ";
    const std::string tail = " at serialize_errors_test.cpp:" + std::to_string(line);
    if (!msg.starts_with(head) || !msg.ends_with(tail) || msg.size() < head.size() + tail.size())
      return "unexpected message: " + msg;
    return msg.substr(head.size(), msg.size() - head.size() - tail.size());
  }
  ScratchDir dir_;
  std::string path_ = dir_.path("bad.safetensors");
};

TEST_F(LoadErrors, FileMissingOrNotAFile) {
  EXPECT_EQ(problem_at(dir_.path("none.safetensors")), "cannot open: No such file or directory");
  EXPECT_EQ(problem_at(dir_.str()), "not a regular file");
}

TEST_F(LoadErrors, TruncatedBeforeTheHeaderLength) {
  EXPECT_EQ(problem(""), "file is 0 bytes, shorter than the 8-byte header length");
  EXPECT_EQ(problem(std::string("\x02\0\0\0\0", 5)),
            "file is 5 bytes, shorter than the 8-byte header length");
}

TEST_F(LoadErrors, HeaderLengthPastTheEnd) {
  EXPECT_EQ(problem(le64(100) + "{}"),
            "header length 100 runs past the end of the file (2 bytes follow the length)");
  EXPECT_EQ(problem(le64(UINT64_MAX) + "{}"),
            "header length 18446744073709551615 runs past the end of the file (2 bytes follow "
            "the length)");
}

TEST_F(LoadErrors, BadJson) {
  EXPECT_EQ(problem(file_of(R"({"a":)")),
            "header is not valid JSON: parse error at line 1, column 6: syntax error while "
            "parsing value - unexpected end of input; expected '[', '{', or a literal");
  EXPECT_EQ(problem(file_of("{\"\xff\":1}")),
            "header is not valid JSON: parse error at line 1, column 3: syntax error while "
            "parsing object key - invalid string: ill-formed UTF-8 byte; last read: '\"\\xff'; "
            "expected string literal");
  EXPECT_EQ(problem(file_of(R"({"a":1e400})")),
            "header is not valid JSON: number overflow parsing '1e400'");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"F32","dtype":"F32"}})")),
            "header repeats the key \"dtype\"");
  EXPECT_EQ(problem(file_of(R"({"a":{},"a":{}})")), "header repeats the key \"a\"");
}

TEST_F(LoadErrors, JsonOfTheWrongShape) {
  EXPECT_EQ(problem(file_of("[1,2]")), "header is a JSON array, not an object");
  EXPECT_EQ(problem(file_of(R"({"a":3})")), "tensor \"a\": entry is a JSON number, not an object");
  EXPECT_EQ(problem(file_of(R"({"a":{"shape":[],"data_offsets":[0,0]}})")),
            "tensor \"a\": missing \"dtype\"");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"F32","data_offsets":[0,0]}})")),
            "tensor \"a\": missing \"shape\"");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"F32","shape":[]}})")),
            "tensor \"a\": missing \"data_offsets\"");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4],"x":1}})")),
            "tensor \"a\": unexpected key \"x\"");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":7,"shape":[],"data_offsets":[0,4]}})")),
            "tensor \"a\": \"dtype\" must be a string, got 7");
}

TEST_F(LoadErrors, UnknownDtype) {
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"Q8","shape":[],"data_offsets":[0,1]}})", "x")),
            "tensor \"a\": unknown dtype \"Q8\" (lazytrain reads BOOL, I32, I64, F16, BF16, F32, "
            "F64)");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"f32","shape":[],"data_offsets":[0,4]}})", "xxxx")),
            "tensor \"a\": unknown dtype \"f32\" (lazytrain reads BOOL, I32, I64, F16, BF16, F32, "
            "F64)");
}

TEST_F(LoadErrors, BadShapes) {
  const auto with_shape = [](const std::string& shape) {
    return file_of(R"({"a":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,0]}})");
  };
  EXPECT_EQ(problem(with_shape("[2,-1]")),
            "tensor \"a\": \"shape\" must be a list of non-negative integers, got [2,-1]");
  EXPECT_EQ(problem(with_shape("[1.0]")),
            "tensor \"a\": \"shape\" must be a list of non-negative integers, got [1.0]");
  EXPECT_EQ(problem(with_shape(R"("2")")),
            "tensor \"a\": \"shape\" must be a list of non-negative integers, got \"2\"");
  EXPECT_EQ(problem(with_shape("[9223372036854775808]")),
            "tensor \"a\": \"shape\" must be a list of non-negative integers, got "
            "[9223372036854775808]");
  EXPECT_EQ(problem(with_shape("[4294967296,4294967296,2]")),
            "tensor \"a\": shape [4294967296,4294967296,2] has more elements than fit in 64 bits");
  EXPECT_EQ(problem(with_shape("[4611686018427387904]")),
            "tensor \"a\": f32[4611686018427387904] takes more bytes than fit in 64 bits");
  // Long values are cut short in the message.
  EXPECT_EQ(problem(with_shape("[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,-17]")),
            "tensor \"a\": \"shape\" must be a list of non-negative integers, got "
            "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,...");
}

TEST_F(LoadErrors, BadOffsets) {
  const auto with_offsets = [](const std::string& offsets, const std::string& data) {
    return file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)" + offsets + "}}", data);
  };
  const std::string eight(8, '\0');
  EXPECT_EQ(problem(with_offsets("[0]", eight)),
            "tensor \"a\": \"data_offsets\" must be two non-negative integers, got [0]");
  EXPECT_EQ(problem(with_offsets("[-8,0]", eight)),
            "tensor \"a\": \"data_offsets\" must be two non-negative integers, got [-8,0]");
  EXPECT_EQ(problem(with_offsets(R"({"b":0})", eight)),
            "tensor \"a\": \"data_offsets\" must be two non-negative integers, got {\"b\":0}");
  EXPECT_EQ(problem(with_offsets("[8,0]", eight)),
            "tensor \"a\": data_offsets [8,0] begin after they end");
  EXPECT_EQ(problem(with_offsets("[0,400]", eight)),
            "tensor \"a\": data_offsets [0,400] run past the 8-byte data buffer");
  EXPECT_EQ(problem(with_offsets("[0,18446744073709551615]", eight)),
            "tensor \"a\": data_offsets [0,18446744073709551615] run past the 8-byte data buffer");
  EXPECT_EQ(problem(with_offsets("[0,4]", eight)),
            "tensor \"a\": f32[2] takes 8 bytes, data_offsets [0,4] hold 4");
}

TEST_F(LoadErrors, OffsetsMustTileTheBuffer) {
  const std::string twelve(12, '\0');
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                            twelve)),
            "tensors \"a\" [0,8] and \"b\" [4,12] overlap");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"I32","shape":[0],"data_offsets":[4,4]}})",
                            std::string(8, '\0'))),
            "tensors \"a\" [0,8] and \"b\" [4,4] overlap");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                            R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                            twelve)),
            "bytes [4,8) of the data buffer belong to no tensor");
  EXPECT_EQ(problem(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", twelve)),
            "bytes [8,12) of the data buffer belong to no tensor");
  EXPECT_EQ(problem(file_of("{}", "x")), "bytes [0,1) of the data buffer belong to no tensor");
}

TEST_F(LoadErrors, BadMetadata) {
  EXPECT_EQ(problem(file_of(R"({"__metadata__":[]})")),
            "\"__metadata__\" is a JSON array, not an object");
  EXPECT_EQ(problem(file_of(R"({"__metadata__":{"step":20}})")),
            "\"__metadata__\" value of \"step\" must be a string, got 20");
}

TEST_F(LoadErrors, BoolBytesOtherThanZeroOrOne) {
  EXPECT_EQ(problem(file_of(R"({"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                            std::string("\x01\x00\x02", 3))),
            "tensor \"b\": BOOL element 2 is byte 0x02, not 0 or 1");
}

TEST_F(LoadErrors, TheWholeMessageNamesTheFileAndTheCaller) {
  write_bytes(path_, "abc");
  const int line = __LINE__ + 2;
  try {
    load(path_);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "load: " + path_ +
                  ": file is 3 bytes, shorter than the 8-byte header length at "
                  "serialize_errors_test.cpp:" +
                  std::to_string(line));
  }
}

/// A valid file of several dtypes (header with metadata, BOOL data) to damage below.
std::string valid_image(const std::string& path) {
  save(path,
       {{"w", from_vector<float>({1, 2, 3}, {3})},
        {"n", from_vector<int64_t>({5}, {})},
        {"m", from_vector<bool>({true, false}, {2})}},
       {{"step", "7"}});
  return testing::read_bytes(path);
}

// Every prefix of a valid file is refused: a torn write is never taken for a checkpoint.
TEST_F(LoadErrors, EveryTruncationIsRefused) {
  const std::string image = valid_image(dir_.path("valid.safetensors"));
  for (size_t n = 0; n < image.size(); ++n) {
    write_bytes(path_, image.substr(0, n));
    EXPECT_NE(problem_at(path_), "no error") << "prefix of " << n << " bytes loaded";
  }
  write_bytes(path_, image);
  EXPECT_EQ(load(path_).tensors.size(), 3u);
}

// Every single-byte change either loads or is refused with lt::Error: nothing else escapes,
// and nothing reads outside the buffer (the sanitizer build checks that part).
TEST_F(LoadErrors, EveryByteChangeLoadsOrIsRefused) {
  const std::string image = valid_image(dir_.path("valid.safetensors"));
  int refused_in_length = 0;
  for (size_t i = 0; i < image.size(); ++i)
    for (int delta : {1, 0x80}) {
      std::string bad = image;
      bad[i] = static_cast<char>(bad[i] + delta);
      try {
        (void)io::decode_safetensors(io::MemorySource(bad));
      } catch (const Error&) {
        refused_in_length += i < 8;
      }
    }
  EXPECT_EQ(refused_in_length, 16);  // any other header length is wrong
}

}  // namespace
}  // namespace lt
