// The project's one pair of 128-bit integer types, and their decimal text: exact sums of
// 64-bit products, walk counts and bounds need more than 64 bits. The public
// gemmkit::int128_t (gemmkit/verify.hpp) is the same type as i128.
#pragma once

#include <string>

namespace gemmkit {

// A GCC/Clang extension: __extension__ keeps -Wpedantic quiet.
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// |x| in decimal, after a minus sign where `negative`.
inline std::string decimal_text(u128 x, bool negative) {
  char buf[40];  // a sign and the 39 digits of 2^128 - 1
  int i = sizeof buf;
  do {
    buf[--i] = static_cast<char>('0' + static_cast<int>(x % 10));
    x /= 10;
  } while (x != 0);
  if (negative) buf[--i] = '-';
  return std::string(buf + i, buf + sizeof buf);
}

// x in decimal.
inline std::string u128_text(u128 x) { return decimal_text(x, false); }

// x in decimal (-2^127 included).
inline std::string i128_text(i128 x) {
  return decimal_text(x < 0 ? -static_cast<u128>(x) : static_cast<u128>(x), x < 0);
}

}  // namespace gemmkit
