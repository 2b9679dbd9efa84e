// BigInt: the exact integers walk counts are returned as. GMP does the decimal conversions;
// no GMP type appears in the public header.
#include <gmp.h>

#include <cmath>
#include <limits>
#include <cstdlib>
#include <memory>

#include "gemmkit/error.hpp"
#include "gemmkit/walks.hpp"

namespace gemmkit {
namespace {

struct Mpz {
  mpz_t value;
  Mpz() { mpz_init(value); }
  ~Mpz() { mpz_clear(value); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
};

void to_mpz(const BigInt& x, mpz_t out) {
  const auto& m = x.magnitude();
  mpz_import(out, m.size(), -1, sizeof(std::uint64_t), 0, 0, m.data());
  if (x.negative()) mpz_neg(out, out);
}

BigInt from_mpz(const mpz_t x) {
  std::vector<std::uint64_t> magnitude((mpz_sizeinbase(x, 2) + 63) / 64 + 1, 0);
  std::size_t count = 0;
  mpz_export(magnitude.data(), &count, -1, sizeof(std::uint64_t), 0, 0, x);
  magnitude.resize(count);
  return BigInt::from_limbs(std::move(magnitude), mpz_sgn(x) < 0);
}

}  // namespace

BigInt::BigInt(std::int64_t value) {
  if (value == 0) return;
  negative_ = value < 0;
  // The magnitude of INT64_MIN does not fit int64, but it fits uint64.
  magnitude_.push_back(negative_ ? ~static_cast<std::uint64_t>(value) + 1
                                 : static_cast<std::uint64_t>(value));
}

BigInt BigInt::from_limbs(std::vector<std::uint64_t> magnitude, bool negative) {
  while (!magnitude.empty() && magnitude.back() == 0) magnitude.pop_back();
  BigInt x;
  x.magnitude_ = std::move(magnitude);
  x.negative_ = negative && !x.magnitude_.empty();
  return x;
}

BigInt BigInt::from_string(std::string_view decimal) {
  std::string text(decimal);
  std::size_t digits_from = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  bool ok = text.size() > digits_from;
  for (std::size_t i = digits_from; i < text.size(); ++i) ok = ok && text[i] >= '0' && text[i] <= '9';
  if (!ok) fail(ErrorCategory::usage, "'" + text + "' is not a decimal integer");
  if (text[0] == '+') text.erase(0, 1);
  Mpz x;
  mpz_set_str(x.value, text.c_str(), 10);
  return from_mpz(x.value);
}

std::string BigInt::to_string() const {
  if (magnitude_.empty()) return "0";
  if (magnitude_.size() == 1) {
    const std::string digits = std::to_string(magnitude_[0]);
    return negative_ ? "-" + digits : digits;
  }
  Mpz x;
  to_mpz(*this, x.value);
  std::string out(mpz_sizeinbase(x.value, 10) + 2, '\0');
  mpz_get_str(out.data(), 10, x.value);
  out.resize(std::char_traits<char>::length(out.c_str()));
  return out;
}

bool BigInt::fits_int64() const {
  if (magnitude_.empty()) return true;
  if (magnitude_.size() > 1) return false;
  const std::uint64_t limit = std::uint64_t{1} << 63;
  return negative_ ? magnitude_[0] <= limit : magnitude_[0] < limit;
}

std::int64_t BigInt::to_int64() const {
  if (!fits_int64()) fail(ErrorCategory::numeric, to_string() + " does not fit a 64-bit integer");
  if (magnitude_.empty()) return 0;
  return negative_ ? static_cast<std::int64_t>(~magnitude_[0] + 1)
                   : static_cast<std::int64_t>(magnitude_[0]);
}

double BigInt::to_double() const {
  if (magnitude_.empty()) return 0.0;
  // mpz_get_d truncates; the decimal text gives the nearest double (inf past the range).
  return std::strtod(to_string().c_str(), nullptr);
}

std::size_t BigInt::bit_length() const {
  if (magnitude_.empty()) return 0;
  return 64 * (magnitude_.size() - 1) + (64 - static_cast<std::size_t>(__builtin_clzll(magnitude_.back())));
}

std::strong_ordering operator<=>(const BigInt& a, const BigInt& b) {
  if (a.negative_ != b.negative_) return a.negative_ ? std::strong_ordering::less : std::strong_ordering::greater;
  // Compare magnitudes, then flip for negatives.
  std::strong_ordering m = a.magnitude_.size() <=> b.magnitude_.size();
  for (std::size_t i = a.magnitude_.size(); m == 0 && i-- > 0;) m = a.magnitude_[i] <=> b.magnitude_[i];
  if (!a.negative_) return m;
  return m == 0 ? m : (m < 0 ? std::strong_ordering::greater : std::strong_ordering::less);
}

}  // namespace gemmkit
