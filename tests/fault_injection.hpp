// Planted faults, for tests that test the tests (host and GPU suites): a suite's own checker
// must pass a kernel's real output and fail the same output with one fault planted, of the
// kinds a buggy kernel makes: one term dropped, one added twice, one added with the wrong
// sign, an edge row or column computed as its neighbour, a write outside the output, a
// residue of the wrong sign. Each fault changes a copy of what the kernel wrote; nothing here
// touches a kernel.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/host_matrix_type.hpp"
#include "gemmkit/gemm.hpp"

namespace gemmkit::test {

// One fault: its name (what a kernel got wrong) and how to plant it in the output.
struct PlantedFault {
  std::string name;
  std::function<void()> plant;
};

// The bytes a kernel wrote, which the faults change and which are put back after each.
struct OutputBytes {
  void* data;
  std::size_t bytes;
};
template <class V>
OutputBytes output_bytes(V& v) {
  return {v.data(), v.size() * sizeof(typename V::value_type)};
}

// `check` (returning ::testing::AssertionResult) must pass the output as the kernel wrote it
// and fail it with each fault planted; the output is restored after each fault. Returns the
// number of faults caught, so that a caller can also say which ran.
template <class Check>
int expect_faults_caught(OutputBytes output, Check&& check, const std::vector<PlantedFault>& faults) {
  const ::testing::AssertionResult clean = check();
  EXPECT_TRUE(clean) << "the clean output must pass before faults mean anything";
  if (!clean) return 0;
  EXPECT_FALSE(faults.empty());
  std::vector<unsigned char> saved(output.bytes);
  if (output.bytes) std::memcpy(saved.data(), output.data, output.bytes);
  int caught = 0;
  for (const PlantedFault& f : faults) {
    f.plant();
    if (output.bytes) {
      EXPECT_NE(std::memcmp(saved.data(), output.data, output.bytes), 0) << f.name << ": planted nothing";
    }
    const ::testing::AssertionResult r = check();
    EXPECT_FALSE(r) << "planted fault not caught: " << f.name;
    if (!r) {
      ++caught;
      std::cout << "[  FAULT   ] caught: " << f.name << std::endl;
    }
    if (output.bytes) std::memcpy(output.data, saved.data(), output.bytes);
  }
  return caught;
}

// ---- GEMM results in host memory ------------------------------------------------------------

// Entry access for one product (batch 1) of any host dtype, in its own layout.
class GemmEntries {
 public:
  explicit GemmEntries(const GemmProblem& p) : p_(as_row_major(p)) {}
  const GemmProblem& problem() const { return p_; }

  // op(A)(i, q) op(B)(q, j) times alpha, of the row-major problem.
  double term(std::int64_t i, std::int64_t j, std::int64_t q) const {
    return p_.alpha * input(p_.a, p_.trans_a ? q * p_.lda + i : i * p_.lda + q) *
           input(p_.b, p_.trans_b ? j * p_.ldb + q : q * p_.ldb + j);
  }
  // The q of entry (i, j)'s term largest in magnitude (the first of equals).
  std::int64_t largest_term(std::int64_t i, std::int64_t j) const {
    std::int64_t best = 0;
    for (std::int64_t q = 1; q < p_.k; ++q)
      if (std::fabs(term(i, j, q)) > std::fabs(term(i, j, best))) best = q;
    return best;
  }
  double c(std::int64_t i, std::int64_t j) const { return get(i * p_.ldc + j); }
  void set_c(std::int64_t i, std::int64_t j, double v) const { put(i * p_.ldc + j, v); }

 private:
  double input(const void* base, std::int64_t at) const {
    return detail::visit_storage(p_.dtype, [&]<class T>(std::type_identity<T>) {
      return static_cast<double>(static_cast<const T*>(base)[at]);
    });
  }
  double get(std::int64_t at) const {
    return detail::visit_storage(p_.c_dtype(), [&]<class T>(std::type_identity<T>) {
      return static_cast<double>(static_cast<const T*>(p_.c)[at]);
    });
  }
  void put(std::int64_t at, double v) const {
    detail::visit_storage(p_.c_dtype(), [&]<class T>(std::type_identity<T>) {
      static_cast<T*>(p_.c)[at] = static_cast<T>(v);
    });
  }

  GemmProblem p_;
};

// The faults of one GEMM result (p.c in host memory, batch 1, m and n >= 2, k >= 1): at the
// last entry the largest term dropped, at the first entry it is added twice, at the middle
// one added with the wrong sign; the last row and the last column computed as their
// neighbours (an edge tile off by one). `where` prefixes the names.
inline std::vector<PlantedFault> gemm_faults(const GemmProblem& p, const std::string& where = "") {
  const GemmEntries e(p);
  const std::int64_t m = e.problem().m, n = e.problem().n;
  const auto at = [](std::int64_t i, std::int64_t j) {
    return "(" + std::to_string(i) + ", " + std::to_string(j) + ")";
  };
  const auto change_term = [e](std::int64_t i, std::int64_t j, double times) {
    e.set_c(i, j, e.c(i, j) + times * e.term(i, j, e.largest_term(i, j)));
  };
  return {
      {where + "a term of C" + at(m - 1, n - 1) + " dropped", [=] { change_term(m - 1, n - 1, -1); }},
      {where + "a term of C" + at(0, 0) + " added twice", [=] { change_term(0, 0, 1); }},
      {where + "a term of C" + at(m / 2, n / 2) + " with the wrong sign", [=] { change_term(m / 2, n / 2, -2); }},
      {where + "the last row of C computed as the row before it",
       [=] { for (std::int64_t j = 0; j < n; ++j) e.set_c(m - 1, j, e.c(m - 2, j)); }},
      {where + "the last column of C computed as the column before it",
       [=] { for (std::int64_t i = 0; i < m; ++i) e.set_c(i, n - 1, e.c(i, n - 2)); }},
  };
}

// A fault of a kernel that writes one element past the last column of C's first row (into
// the padding, which ldc > n must leave); for checkers that check the padding.
inline PlantedFault gemm_padding_fault(const GemmProblem& p) {
  const GemmEntries e(p);
  return {"C's padding written past the end of row 0",
          [e] { e.set_c(0, e.problem().n, e.c(0, e.problem().n - 1)); }};
}

// ---- exact integers as limbs (walk counts, Chinese remainder rebuilds, exact GEMM) ---------

// Adds a small signed delta to the `limbs`-word two's complement integer at x.
inline void add_to_limbs(std::uint64_t* x, int limbs, std::int64_t delta) {
  __extension__ typedef unsigned __int128 wide;
  const std::uint64_t extend = delta < 0 ? ~0ull : 0ull;
  wide carry = 0;
  for (int l = 0; l < limbs; ++l) {
    const wide sum = wide(x[l]) + (l == 0 ? static_cast<std::uint64_t>(delta) : extend) + carry;
    x[l] = static_cast<std::uint64_t>(sum);
    carry = sum >> 64;
  }
}

// The faults of a table of exact integers, entry (r, c) as `limbs` words (two's complement,
// least significant first) at words + (r * ld + c) * limbs: the last entry one less (a term
// of 1 dropped: the smallest change there is), the first one more (counted twice), the last
// nonzero entry negated (a wrong sign), and the last row rebuilt as the row before it (or the
// last column as the one before it, for one row).
inline std::vector<PlantedFault> limb_table_faults(std::uint64_t* words, std::int64_t rows, std::int64_t cols,
                                                   std::int64_t ld, int limbs) {
  const auto entry = [=](std::int64_t r, std::int64_t c) { return words + (r * ld + c) * limbs; };
  std::int64_t nonzero = rows * cols - 1;
  const auto is_zero = [&](std::int64_t e) {
    const std::uint64_t* x = entry(e / cols, e % cols);
    for (int l = 0; l < limbs; ++l)
      if (x[l] != 0) return false;
    return true;
  };
  while (nonzero > 0 && is_zero(nonzero)) --nonzero;
  std::vector<PlantedFault> faults = {
      {"the last entry one less", [=] { add_to_limbs(entry(rows - 1, cols - 1), limbs, -1); }},
      {"the first entry one more", [=] { add_to_limbs(entry(0, 0), limbs, 1); }},
      {"entry " + std::to_string(nonzero) + " (the last nonzero one) negated", [=] {
         std::uint64_t* x = entry(nonzero / cols, nonzero % cols);
         for (int l = 0; l < limbs; ++l) x[l] = ~x[l];
         add_to_limbs(x, limbs, 1);
       }},
  };
  if (rows >= 2)
    faults.push_back({"the last row rebuilt as the row before it", [=] {
                        std::memcpy(entry(rows - 1, 0), entry(rows - 2, 0), std::size_t(cols * limbs) * 8);
                      }});
  else
    faults.push_back({"the last column rebuilt as the column before it", [=] {
                        std::memcpy(entry(0, cols - 1), entry(0, cols - 2), std::size_t(limbs) * 8);
                      }});
  return faults;
}

}  // namespace gemmkit::test
