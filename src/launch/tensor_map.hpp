// Tensor maps: what the bulk copy engine (TMA) needs to know about a matrix in global
// memory. Built on the host for each launch and passed to kernels by value.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace gemmkit::cuda {

// A row-major rows x cols matrix with leading dimension ld (elements of elem_bytes each),
// copied in boxes of box_rows x box_cols, swizzled across a box row (box_cols * elem_bytes is
// 128, 64 or 32 bytes: in shared memory, 16-byte chunk c of row r sits at chunk c ^ (r % 8),
// c ^ (r / 2 % 4) or c ^ (r / 4 % 2)). Boxes reaching past the matrix are filled with zeros. Needs base and ld *
// elem_bytes to be multiples of 16 bytes; a device error otherwise.
CUtensorMap make_tile_map(const void* base, CUtensorMapDataType type, int elem_bytes,
                          std::int64_t rows, std::int64_t cols, std::int64_t ld, int box_rows,
                          int box_cols);

// The same for a strided batch of `batch` such matrices, matrix z at base + z * stride
// elements: a rank-3 map whose outermost coordinate is z (the 3-D TMA copies). stride *
// elem_bytes must be a multiple of 16 bytes as well.
CUtensorMap make_batched_tile_map(const void* base, CUtensorMapDataType type, int elem_bytes,
                                  std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                  std::int64_t batch, std::int64_t stride, int box_rows,
                                  int box_cols);

// Whether ptr and ld elements of elem_bytes meet TMA's 16-byte rule.
inline bool tma_compatible(const void* ptr, std::int64_t ld, int elem_bytes) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && (ld * elem_bytes) % 16 == 0;
}

}  // namespace gemmkit::cuda
