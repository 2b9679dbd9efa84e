// Rung 4: merge-path CSR SpMV (after Merrill and Garland, "Merge-based parallel sparse
// matrix-vector multiplication", SC16). Rungs 1-3 split the work by rows, so one row of
// 10^5 nonzeros keeps one thread (or group) busy while the rest of the GPU idles. Here the
// work is the merged sequence of the rows + nnz "items" (a row end or a nonzero), and every
// thread gets exactly ITEMS of it, whatever the row lengths:
//   1. partition (once per matrix, like cuSPARSE's preprocess): a binary search along each
//      tile's diagonal finds where the merge path crosses it, (row, nonzero) per tile;
//   2. per tile of BLOCK * ITEMS items: the block loads the tile's nonzero products
//      values[j] * x[cols[j]] and its row ends into shared memory with coalesced loads, each
//      thread searches its own start in shared memory and walks its ITEMS items, writing
//      every row it finishes; the partial sums of rows that cross thread boundaries meet in
//      a block-wide scan reduced by row (deterministic), and the tile's last, unfinished row
//      leaves a carry;
//   3. fix-up: each tile's carry is added to its row (atomically: a long row collects the
//      carries of many tiles).
#pragma once

#include <cub/block/block_scan.cuh>

#include <cstdint>

namespace gemmkit::cuda::spmv {

// Where the merge path of (row ends a[0..a_len), nonzero indices b_begin + [0..b_len))
// crosses `diagonal`: (rows consumed, nonzeros consumed) with row + nz == diagonal. A row end
// a[i] goes before nonzero b when a[i] <= b (the row has ended by then).
struct MergeCoord {
  std::int64_t row, nz;
};
template <class Offset>
__device__ __forceinline__ MergeCoord merge_path_search(std::int64_t diagonal, const Offset* a,
                                                        std::int64_t a_len, std::int64_t b_begin,
                                                        std::int64_t b_len) {
  std::int64_t lo = diagonal - b_len > 0 ? diagonal - b_len : 0;
  std::int64_t hi = diagonal < a_len ? diagonal : a_len;
  while (lo < hi) {
    const std::int64_t pivot = (lo + hi) / 2;
    if (std::int64_t(a[pivot]) <= b_begin + diagonal - pivot - 1) lo = pivot + 1;
    else hi = pivot;
  }
  return {lo, diagonal - lo};
}

// Step 1: tile t starts at diagonal t * tile_items (clipped at rows + nnz); tiles + 1 entries.
template <class Offset>
__global__ void merge_path_partition_kernel(std::int64_t rows, std::int64_t nnz,
                                            const Offset* __restrict__ row_offsets,
                                            std::int64_t tile_items, std::int64_t tiles,
                                            std::int64_t* __restrict__ tile_row,
                                            std::int64_t* __restrict__ tile_nz) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t > tiles) return;
  const std::int64_t diagonal = t * tile_items < rows + nnz ? t * tile_items : rows + nnz;
  const MergeCoord c = merge_path_search(diagonal, row_offsets + 1, rows, 0, nnz);
  tile_row[t] = c.row;
  tile_nz[t] = c.nz;
}

template <class T>
struct RowPartial {  // a partial sum and the (tile-local) row it belongs to
  int row;
  T sum;
};
// Reduce-by-row: the scan adds partial sums only along a run of the same row.
struct SumByRow {
  template <class P>
  __device__ __forceinline__ P operator()(const P& a, const P& b) const {
    return {b.row, a.row == b.row ? a.sum + b.sum : b.sum};
  }
};

// x gathered through the read-only cache; values and columns are read exactly once, so with
// kStreaming they are loaded evict-first, leaving L2 to x.
template <bool kStreaming, class V>
__device__ __forceinline__ V load_once(const V* p) {
  if constexpr (kStreaming) return __ldcs(p);
  else return __ldg(p);
}

// Step 2. tile_row / tile_nz: the partition (tiles + 1 entries); carry_*: one per tile.
template <class T, class Offset, int BLOCK, int ITEMS, bool kStreaming>
__global__ void __launch_bounds__(BLOCK)
    merge_path_kernel(std::int64_t rows, std::int64_t nnz, const Offset* __restrict__ row_offsets,
                      const std::int32_t* __restrict__ cols, const T* __restrict__ values,
                      const T* __restrict__ x, T* __restrict__ y,
                      const std::int64_t* __restrict__ tile_row, const std::int64_t* __restrict__ tile_nz,
                      std::int64_t* __restrict__ carry_row, T* __restrict__ carry_sum) {
  constexpr int kTileItems = BLOCK * ITEMS;
  using Scan = cub::BlockScan<RowPartial<T>, BLOCK>;
  __shared__ Offset s_row_end[kTileItems + 1];  // ends of the tile's rows, + the unfinished one
  __shared__ T s_product[kTileItems];            // values[j] * x[cols[j]] of the tile's nonzeros
  __shared__ typename Scan::TempStorage s_scan;

  const int tid = threadIdx.x;
  const std::int64_t row0 = tile_row[blockIdx.x], nz0 = tile_nz[blockIdx.x];
  const int tile_rows = int(tile_row[blockIdx.x + 1] - row0);  // row ends in this tile
  const int tile_nnz = int(tile_nz[blockIdx.x + 1] - nz0);     // nonzeros in this tile

  // Coalesced loads, all issued before any is used: ITEMS nonzeros per thread, strided by BLOCK.
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = k * BLOCK + tid;
    if (i < tile_nnz) {
      const std::int64_t j = nz0 + i;
      s_product[i] = load_once<kStreaming>(values + j) * __ldg(x + load_once<kStreaming>(cols + j));
    }
  }
  for (int i = tid; i <= tile_rows; i += BLOCK) {
    const std::int64_t r = row0 + i;
    s_row_end[i] = r < rows ? row_offsets[r + 1] : Offset(nnz);
  }
  __syncthreads();

  // This thread's ITEMS items of the tile's merge path, from its own diagonal.
  const int tile_items = tile_rows + tile_nnz;
  const int d0 = tid * ITEMS < tile_items ? tid * ITEMS : tile_items;
  const MergeCoord start = merge_path_search(d0, s_row_end, tile_rows, nz0, tile_nnz);
  int r = int(start.row), j = int(start.nz);  // tile-local row and nonzero
  T running = 0;
  int first_row = -1;  // the first row this thread finishes may have begun in earlier threads
  T first_sum = 0;
#pragma unroll
  for (int step = 0; step < ITEMS; ++step) {
    if (d0 + step < tile_items) {
      if (nz0 + j < std::int64_t(s_row_end[r])) {  // nonzero j belongs to row r
        running += s_product[j];
        ++j;
      } else {  // row r ends here
        if (first_row < 0) {
          first_row = r;
          first_sum = running;
        } else {
          y[row0 + r] = running;  // began and ended in this thread: complete
        }
        running = 0;
        ++r;
      }
    }
  }

  // Partial sums carried out of each thread, reduced by row across the block.
  RowPartial<T> carry{r, running}, prefix, tile_total;
  Scan(s_scan).ExclusiveScan(carry, prefix, SumByRow{}, tile_total);
  if (tid == 0) prefix.row = -1;  // an exclusive scan leaves thread 0's prefix undefined
  if (first_row >= 0) y[row0 + first_row] = first_sum + (prefix.row == first_row ? prefix.sum : T(0));
  // The tile's unfinished row (tile_total.row == tile_rows): added by the fix-up.
  if (tid == 0) {
    carry_row[blockIdx.x] = row0 + tile_rows;
    carry_sum[blockIdx.x] = tile_total.sum;
  }
}

// Step 3: a row crossing tiles gets every earlier tile's carry (carry rows past the last row
// hold nothing).
template <class T>
__global__ void merge_path_fixup_kernel(std::int64_t tiles, std::int64_t rows,
                                        const std::int64_t* __restrict__ carry_row,
                                        const T* __restrict__ carry_sum, T* __restrict__ y) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < tiles && carry_row[t] < rows) atomicAdd(y + carry_row[t], carry_sum[t]);
}

}  // namespace gemmkit::cuda::spmv
