// .npy reading and writing: round trips, hand-built files of every supported kind, and one
// test per class of malformed file.
#include <bit>
#include <cmath>

#include "host/io_test_support.hpp"

namespace gemmkit::test {
namespace {

// A .npy file: preamble for `major`.0, `dict` padded to 64 bytes and terminated by a newline
// (unless `terminate` is false), then `data`.
std::string npy_bytes(int major, std::string dict, const std::string& data, bool terminate = true) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  if (terminate) {
    while ((preamble + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
  }
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t b = 0; b < preamble - 8; ++b)
    out += static_cast<char>(dict.size() >> (8 * b) & 0xff);
  return out + dict + data;
}

template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

class NpyTest : public ScratchDirTest {
 protected:
  template <class T>
  void round_trip(std::int64_t rows, std::int64_t cols, std::int64_t ld = -1) {
    SCOPED_TRACE(std::string(dtype_name(dtype_of<T>)) + " " + std::to_string(rows) + "x" +
                 std::to_string(cols) + " ld " + std::to_string(ld));
    const Matrix<T> original = make_matrix<T>(rows, cols, ld);
    const std::string p = path("m.npy");
    write_npy(p, original);
    const AnyMatrix back = read_npy(p);
    ASSERT_TRUE(std::holds_alternative<Matrix<T>>(back));
    const auto& m = std::get<Matrix<T>>(back);
    ASSERT_EQ(m.rows(), rows);
    ASSERT_EQ(m.cols(), cols);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        ASSERT_TRUE(same_bits(m(i, j), original(i, j))) << i << "," << j;
    // Compact data whatever the leading dimension: the header, then rows*cols elements.
    const std::string bytes = read_file(p);
    EXPECT_EQ(bytes.size() % 64, rows * cols * sizeof(T) % 64);
  }

  template <class T>
  void round_trip_shapes() {
    round_trip<T>(1, 1);
    round_trip<T>(1, 9);
    round_trip<T>(9, 1);
    round_trip<T>(5, 4);
    round_trip<T>(5, 4, 7);  // leading dimension past the width
    round_trip<T>(0, 3);
    round_trip<T>(3, 0);
  }

  Matrix<double> read_f64(const std::string& bytes) {
    const AnyMatrix m = read_npy(write_file("hand.npy", bytes));
    EXPECT_TRUE(std::holds_alternative<Matrix<double>>(m));
    return std::get<Matrix<double>>(m);
  }

  template <class T>
  Matrix<T> read_as(const std::string& bytes) {
    const AnyMatrix m = read_npy(write_file("hand.npy", bytes));
    EXPECT_EQ(dtype_of_any(m), dtype_of<T>);
    return std::get<Matrix<T>>(m);
  }

  void expect_bad(const std::string& bytes, const std::string& part) {
    const std::string p = write_file("bad.npy", bytes);
    expect_input_error([&] { read_npy(p); }, p, part);
  }
};

TEST_F(NpyTest, RoundTripF64) { round_trip_shapes<double>(); }
TEST_F(NpyTest, RoundTripF32) { round_trip_shapes<float>(); }
TEST_F(NpyTest, RoundTripI32) { round_trip_shapes<std::int32_t>(); }
TEST_F(NpyTest, RoundTripI64) { round_trip_shapes<std::int64_t>(); }

TEST_F(NpyTest, WriterFollowsTheSpec) {
  const std::string p = path("w.npy");
  write_npy(p, make_matrix<float>(2, 3));
  const std::string bytes = read_file(p);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_length =
      static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  const std::size_t data_offset = 10 + header_length;
  EXPECT_EQ(data_offset % 64, 0u);
  EXPECT_EQ(bytes[data_offset - 1], '\n');
  EXPECT_EQ(bytes.size(), data_offset + 6 * sizeof(float));
  const std::string header = bytes.substr(10, header_length);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (2, 3)"), std::string::npos) << header;
}

// Arrays of any rank (walk counts of every length): the header of write_npy, then the
// elements as they are in memory; a rank-2 array is byte for byte what write_npy writes.
TEST_F(NpyTest, ArraysOfAnyRank) {
  const std::vector<std::int64_t> values = {1, -2, 3, 4, INT64_MIN, INT64_MAX, 0, 7, 8, 9, 10, 11};
  write_npy_array(path("a.npy"), DType::i64, {2, 3, 2}, values.data());
  std::string expected = npy_bytes(1, dict("<i8", "(2, 3, 2)"), "");
  for (std::int64_t v : values) expected += raw<std::int64_t>({v});
  EXPECT_EQ(read_file(path("a.npy")), expected);

  const Matrix<double> m = make_matrix<double>(3, 4);
  write_npy(path("m.npy"), m);
  write_npy_array(path("a2.npy"), DType::f64, {3, 4}, m.data());
  EXPECT_EQ(read_file(path("a2.npy")), read_file(path("m.npy")));

  write_npy_array(path("e.npy"), DType::f64, {0, 5, 2}, nullptr);
  EXPECT_EQ(read_file(path("e.npy")), npy_bytes(1, dict("<f8", "(0, 5, 2)"), ""));
  expect_error([&] { write_npy_array(path("n.npy"), DType::f64, {2, -1}, m.data()); }, ErrorCategory::usage,
               "(2, -1)");
  expect_error([&] { write_npy_array(path("x.npy"), DType::f64, {2, 2}, nullptr); }, ErrorCategory::usage,
               "(2, 2)");
  expect_error([&] { write_npy_array(path("i8.npy"), DType::i8, {2, 2}, m.data()); }, ErrorCategory::usage,
               "i8");
  EXPECT_EQ(listing(), (std::set<std::string>{"a.npy", "m.npy", "a2.npy", "e.npy"}));
}

TEST_F(NpyTest, ReadsVersion2And3Headers) {
  for (int major : {2, 3}) {
    const Matrix<double> m =
        read_f64(npy_bytes(major, dict("<f8", "(1, 2)"), raw<double>({1.5, -2.0})));
    ASSERT_EQ(m.rows(), 1);
    ASSERT_EQ(m.cols(), 2);
    EXPECT_EQ(m(0, 0), 1.5);
    EXPECT_EQ(m(0, 1), -2.0);
  }
}

TEST_F(NpyTest, HonoursFortranOrder) {
  // Column-major data 1..6 of a 2x3 matrix.
  const auto m = read_as<std::int64_t>(
      npy_bytes(1, dict("<i8", "(2, 3)", true), raw<std::int64_t>({1, 2, 3, 4, 5, 6})));
  ASSERT_EQ(m.rows(), 2);
  ASSERT_EQ(m.cols(), 3);
  EXPECT_EQ(m(0, 0), 1);
  EXPECT_EQ(m(1, 0), 2);
  EXPECT_EQ(m(0, 1), 3);
  EXPECT_EQ(m(1, 2), 6);
}

// The header as a reader of the data itself (the distributed parallel read) sees it.
TEST_F(NpyTest, LayoutDescribesTheData) {
  const std::string bytes = npy_bytes(1, dict("<i4", "(2, 3)", true), raw<std::int32_t>({1, 2, 3, 4, 5, 6}));
  const std::string f = write_file("f.npy", bytes);
  const NpyLayout l = read_npy_layout(f);
  EXPECT_EQ(l.dtype, DType::i32);
  EXPECT_FALSE(l.widened);
  EXPECT_TRUE(l.fortran_order);
  EXPECT_EQ(l.rows, 2);
  EXPECT_EQ(l.cols, 3);
  EXPECT_EQ(l.itemsize, 4);
  EXPECT_EQ(l.data_offset, std::int64_t(bytes.size()) - 24);  // the data: its last 6 x 4 bytes
  const std::string narrow = write_file("u2.npy", npy_bytes(1, dict("<u2", "(2,)"), std::string(4, '\1')));
  EXPECT_TRUE(read_npy_layout(narrow).widened);
  EXPECT_EQ(read_npy_layout(narrow).dtype, DType::i32);
  EXPECT_EQ(read_npy_layout(narrow).itemsize, 2);
  // The checks of read_npy, the data's length included; and a file, not a pipe.
  const std::string short_data = write_file("short.npy", npy_bytes(1, dict("<f8", "(2, 2)"), raw<double>({1, 2, 3})));
  expect_input_error([&] { read_npy_layout(short_data); }, short_data, "(truncated)");
  expect_input_error([&] { read_npy_layout("/dev/null"); }, "/dev/null", "not a regular file");
}

TEST_F(NpyTest, OneDimensionalReadsAsColumn) {
  const auto m =
      read_as<std::int32_t>(npy_bytes(1, dict("<i4", "(4,)"), raw<std::int32_t>({7, 8, 9, -10})));
  ASSERT_EQ(m.rows(), 4);
  ASSERT_EQ(m.cols(), 1);
  EXPECT_EQ(m(3, 0), -10);
}

TEST_F(NpyTest, HeaderDictionaryVariants) {
  const std::string data = raw<double>({1, 2});
  for (const std::string& d : {
           std::string("{\"shape\": (2,), \"descr\": \"<f8\", \"fortran_order\": False}"),
           std::string("{ 'fortran_order' : False , 'shape' : ( 1 , 2 ) , 'descr' : '=f8' , }"),
           std::string("{'descr':'<f8','fortran_order':False,'shape':(2L,)}"),
           std::string("{'descr': '<f8', 'fortran_order': True, 'shape': (2,)}"),
       }) {
    SCOPED_TRACE(d);
    const Matrix<double> m = read_f64(npy_bytes(1, d, data));
    ASSERT_EQ(m.size(), 2);
    EXPECT_EQ(m.data()[0], 1.0);
    EXPECT_EQ(m.data()[1], 2.0);
  }
}

TEST_F(NpyTest, WidensSmallIntegersAndBooleans) {
  const auto u1 =
      read_as<std::int32_t>(npy_bytes(1, dict("|u1", "(1, 3)"), std::string("\x00\x7f\xff", 3)));
  EXPECT_EQ(u1(0, 0), 0);
  EXPECT_EQ(u1(0, 1), 127);
  EXPECT_EQ(u1(0, 2), 255);
  const auto i1 =
      read_as<std::int32_t>(npy_bytes(1, dict("|i1", "(1, 2)"), std::string("\x80\x7f", 2)));
  EXPECT_EQ(i1(0, 0), -128);
  EXPECT_EQ(i1(0, 1), 127);
  const auto b1 =
      read_as<std::int32_t>(npy_bytes(1, dict("|b1", "(1, 3)"), std::string("\x01\x00\x01", 3)));
  EXPECT_EQ(b1(0, 0), 1);
  EXPECT_EQ(b1(0, 1), 0);
  EXPECT_EQ(b1(0, 2), 1);
  const auto i2 =
      read_as<std::int32_t>(npy_bytes(1, dict("<i2", "(1, 2)"), raw<std::int16_t>({-32768, 1234})));
  EXPECT_EQ(i2(0, 0), -32768);
  EXPECT_EQ(i2(0, 1), 1234);
  const auto u2 =
      read_as<std::int32_t>(npy_bytes(1, dict("<u2", "(1, 1)"), raw<std::uint16_t>({65535})));
  EXPECT_EQ(u2(0, 0), 65535);
  const auto u4 =
      read_as<std::int64_t>(npy_bytes(1, dict("<u4", "(1, 1)"), raw<std::uint32_t>({4294967295u})));
  EXPECT_EQ(u4(0, 0), 4294967295);
  const auto u8 =
      read_as<std::int64_t>(npy_bytes(1, dict("<u8", "(1, 1)"), raw<std::uint64_t>({1ull << 62})));
  EXPECT_EQ(u8(0, 0), std::int64_t{1} << 62);
}

TEST_F(NpyTest, ReadsHalfPrecisionAsItself) {
  const std::vector<std::uint16_t> bits = {0x3c00, 0xc000, 0x0001, 0x03ff, 0x0400,
                                           0x7bff, 0x7c00, 0xfc00, 0x7e01, 0x8000};
  std::string data;
  for (std::uint16_t b : bits) data += raw<std::uint16_t>({b});
  const auto m = read_as<Half>(npy_bytes(1, dict("<f2", "(1, 10)"), data));
  for (std::size_t j = 0; j < bits.size(); ++j) EXPECT_EQ(m(0, j).bits, bits[j]) << j;  // NaN payload too
  EXPECT_EQ(static_cast<float>(m(0, 0)), 1.0f);
  EXPECT_EQ(static_cast<float>(m(0, 2)), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(static_cast<float>(m(0, 5)), 65504.0f);               // largest finite
  EXPECT_EQ(static_cast<float>(m(0, 7)), -std::numeric_limits<float>::infinity());
}

TEST_F(NpyTest, ReadsBfloat16AsItself) {
  // Upper halves of float32 1.0, -3.5 and +inf; both names ml_dtypes users end up with.
  for (const char* descr : {"bfloat16", "<V2"}) {
    SCOPED_TRACE(descr);
    const auto m = read_as<BFloat16>(
        npy_bytes(1, dict(descr, "(3,)"), raw<std::uint16_t>({0x3f80, 0xc060, 0x7f80})));
    EXPECT_EQ(static_cast<float>(m(0, 0)), 1.0f);
    EXPECT_EQ(static_cast<float>(m(1, 0)), -3.5f);
    EXPECT_EQ(static_cast<float>(m(2, 0)), std::numeric_limits<float>::infinity());
  }
}

TEST_F(NpyTest, WritesHalfAsF2AndBfloat16AsTwoByteVoid) {
  // Every f16 and bf16 bit pattern survives a round trip (NaNs included), and the header
  // names what numpy (f2) and ml_dtypes (<V2, np.save's spelling of bfloat16) read.
  Matrix<Half> h(256, 256);
  Matrix<BFloat16> b(256, 256);
  for (std::int64_t i = 0; i < 65536; ++i) {
    h.data()[i] = Half::from_bits(std::uint16_t(i));
    b.data()[i] = BFloat16::from_bits(std::uint16_t(65535 - i));
  }
  write_npy(path("h.npy"), h);
  write_npy(path("b.npy"), b);
  EXPECT_NE(read_file(path("h.npy")).find("'descr': '<f2'"), std::string::npos);
  EXPECT_NE(read_file(path("b.npy")).find("'descr': '<V2'"), std::string::npos);
  const auto h2 = std::get<Matrix<Half>>(read_npy(path("h.npy")));
  const auto b2 = std::get<Matrix<BFloat16>>(read_npy(path("b.npy")));
  for (std::int64_t i = 0; i < 65536; ++i) {
    ASSERT_EQ(h2.data()[i].bits, std::uint16_t(i));
    ASSERT_EQ(b2.data()[i].bits, std::uint16_t(65535 - i));
  }
}

TEST_F(NpyTest, RejectsTruncatedData) {
  expect_bad(npy_bytes(1, dict("<f8", "(2, 2)"), raw<double>({1, 2, 3})), "truncated");
}

TEST_F(NpyTest, RejectsShapeDisagreeingWithData) {
  expect_bad(npy_bytes(1, dict("<f8", "(1, 2)"), raw<double>({1, 2, 3})),
             "needs 16 bytes of data, but the file holds 24");
}

TEST_F(NpyTest, RejectsBigEndian) {
  expect_bad(npy_bytes(1, dict(">f8", "(1,)"), raw<double>({1})),
             "big-endian dtype '>f8' is not supported");
}

TEST_F(NpyTest, RejectsUnsupportedDtype) {
  expect_bad(npy_bytes(1, dict("<c16", "(1,)"), std::string(16, '\0')), "unsupported dtype '<c16'");
  expect_bad(npy_bytes(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}",
                       raw<double>({1})),
             "structured dtypes");
}

TEST_F(NpyTest, RejectsOversizedHeader) {
  std::string bytes = npy_bytes(2, dict("<f8", "(1,)"), raw<double>({1}));
  bytes[8] = '\0', bytes[9] = '\0', bytes[10] = '\x10', bytes[11] = '\0';  // 1 MiB
  expect_bad(bytes, "exceeds the 65536-byte limit");
}

TEST_F(NpyTest, RejectsHeaderPastTheEnd) {
  std::string bytes = npy_bytes(1, dict("<f8", "(1,)"), "");
  bytes[9] = '\x7f';
  expect_bad(bytes, "runs past the end");
}

TEST_F(NpyTest, RejectsBadMagic) {
  expect_bad("PK\x03\x04 this is a zip file", "not a .npy file");
  expect_bad("", "not a .npy file");
}

TEST_F(NpyTest, RejectsUnknownVersion) {
  std::string bytes = npy_bytes(1, dict("<f8", "(1,)"), raw<double>({1}));
  bytes[6] = '\x04';
  expect_bad(bytes, "unsupported .npy format version 4.0");
}

TEST_F(NpyTest, RejectsUnterminatedHeader) {
  expect_bad(npy_bytes(1, dict("<f8", "(1,)") + "   ", raw<double>({1}), false),
             "not terminated by a newline");
}

TEST_F(NpyTest, RejectsBadShapes) {
  expect_bad(npy_bytes(1, dict("<f8", "()"), raw<double>({1})), "0-dimensional");
  expect_bad(npy_bytes(1, dict("<f8", "(1, 1, 1)"), raw<double>({1})),
             "3-dimensional shape '(1, 1, 1)'");
  expect_bad(npy_bytes(1, dict("<f8", "(-1,)"), raw<double>({1})),
             "expected a non-negative dimension");
  expect_bad(npy_bytes(1, dict("<f8", "(99999999999999999999,)"), ""), "too large");
  expect_bad(npy_bytes(1, dict("<f8", "(4294967296, 4294967296)"), ""), "overflow");
  // No elements: an empty matrix stores nothing, however many rows it claims.
  const AnyMatrix empty = read_npy(write_file("empty.npy", npy_bytes(1, dict("<f8", "(100000000000, 0)"), "")));
  EXPECT_EQ(rows_of(empty), 100000000000);
  EXPECT_EQ(cols_of(empty), 0);
}

TEST_F(NpyTest, RejectsMalformedDictionary) {
  expect_bad(npy_bytes(1, "{'descr': '<f8', 'shape': (1,)}", raw<double>({1})),
             "no 'fortran_order' key");
  expect_bad(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}",
                       raw<double>({1})),
             "unexpected key 'x'");
  expect_bad(npy_bytes(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}",
                       raw<double>({1})),
             "appears twice");
  expect_bad(npy_bytes(1, "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}", raw<double>({1})),
             "fortran_order must be True or False");
  expect_bad(
      npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)", raw<double>({1})),
      "expected ',' or '}'");
}

TEST_F(NpyTest, RejectsUnsignedValuesPastInt64) {
  expect_bad(npy_bytes(1, dict("<u8", "(2,)"), raw<std::uint64_t>({1, ~0ull})),
             "18446744073709551615 does not fit");
}

TEST_F(NpyTest, MissingFileIsAnInputError) {
  const std::string p = path("absent.npy");
  expect_input_error([&] { read_npy(p); }, p, "cannot open");
  expect_error([&] { read_npy(p); }, ErrorCategory::input, "No such file or directory");
  expect_error([&] { read_npy(dir_); }, ErrorCategory::input, "Is a directory");
}

}  // namespace
}  // namespace gemmkit::test
