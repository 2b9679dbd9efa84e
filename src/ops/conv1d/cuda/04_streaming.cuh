// Rung 4, streaming at the memory-bandwidth limit. Rung 3 is bound by everything around the
// arithmetic: one 4-byte load and store per thread, a block that waits for its loads before
// it can compute, halo cells re-read for every 256 outputs. This rung changes four things:
//   - 16-byte loads: each thread stages two vectors of the tile body (8 f32 / 4 f64 values),
//     so a block's tile is 2048 f32 / 1024 f64 outputs and the halo is re-read 8x less often;
//   - the tile and its halo go to shared memory padded out to whole vectors, so the halo
//     loads are 16-byte loads too;
//   - the grid is sized to the SMs (as many blocks as fit at once) and each block loops over
//     tiles, loading the next tile (body and halo) into registers before computing the
//     current one, so its global loads are in flight while it computes;
//   - each thread computes outputs a block-width apart (t, t + 256, ...), so a warp's shared
//     reads of one tap are consecutive words: no bank conflicts. The mask is read through the
//     read-only cache (one broadcast per warp per tap), so it has no width cap of its own; the
//     launcher only refuses halos that do not fit the shared-memory budget.
#pragma once

#include <cstdint>

namespace gemmkit::cuda::kernels {

template <class T> struct Vector16;
template <> struct Vector16<float> { using type = float4; };
template <> struct Vector16<double> { using type = double2; };

inline constexpr int conv1d_streaming_threads = 256;
inline constexpr int conv1d_streaming_vectors = 2;  // body vectors each thread stages per tile

// Blocks per SM the register budget is set for: 8 (the thread limit, 2048) fits f32 in 32
// registers without spills; f64's wider accumulators and vectors need more, so 6 (40).
template <class T>
inline constexpr int conv1d_streaming_min_blocks = sizeof(T) == 4 ? 8 : 6;

template <class T>
inline constexpr int conv1d_streaming_tile =
    conv1d_streaming_threads * conv1d_streaming_vectors * int(16 / sizeof(T));

// The 16 bytes x[at, at + 16/sizeof(T)), zeros outside [0, n). `at` is a multiple of the
// vector length and x is 16-byte aligned, so a whole in-range vector is one aligned load.
template <class T>
__device__ __forceinline__ typename Vector16<T>::type load_vector(const T* __restrict__ x,
                                                                  std::int64_t at, std::int64_t n) {
  using Vec = typename Vector16<T>::type;
  constexpr int kVec = 16 / sizeof(T);
  if (at >= 0 && at + kVec <= n) return *reinterpret_cast<const Vec*>(x + at);
  union {
    Vec vector;
    T values[kVec];
  } edge;
#pragma unroll
  for (int e = 0; e < kVec; ++e) edge.values[e] = at + e >= 0 && at + e < n ? x[at + e] : T(0);
  return edge.vector;
}

// Dynamic shared memory: (left_pad + tile + right_pad) values of T, the halos rounded up to
// whole vectors (conv1d_streaming_shared_values).
template <class T>
__global__ void __launch_bounds__(conv1d_streaming_threads, conv1d_streaming_min_blocks<T>)
    conv1d_streaming_kernel(const T* __restrict__ x, const T* __restrict__ mask,
                            T* __restrict__ y, std::int64_t n, int width) {
  using Vec = typename Vector16<T>::type;
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kThreads = conv1d_streaming_threads;
  constexpr int kBodyVectors = conv1d_streaming_vectors;
  constexpr int kOutputs = kBodyVectors * kVec;  // outputs per thread per tile
  constexpr int kTile = conv1d_streaming_tile<T>;

  extern __shared__ __align__(16) unsigned char conv1d_streaming_smem[];
  T* staged = reinterpret_cast<T*>(conv1d_streaming_smem);
  const int left = width / 2, right = width - 1 - left;  // halo cells before / after the tile
  const int left_pad = (left + kVec - 1) / kVec * kVec;
  const int right_pad = (right + kVec - 1) / kVec * kVec;
  // staged[k] = x[tile_start - left_pad + k], k in [0, left_pad + kTile + right_pad)
  T* body = staged + left_pad;  // body[k] = x[tile_start + k], k in [0, kTile)
  const int left_vectors = left_pad / kVec, halo_vectors = (left_pad + right_pad) / kVec;
  const std::int64_t tiles = (n + kTile - 1) / kTile;

  // Vector h of the halo, as an offset in `staged`: the left pad's vectors, then the right's.
  const auto halo_offset = [&](int h) {
    return h < left_vectors ? h * kVec : left_pad + kTile + (h - left_vectors) * kVec;
  };
  // The loads of one tile that go through registers: body vector p of thread t is vector
  // p * kThreads + t of the tile (a warp's 16-byte loads and shared stores are contiguous),
  // and thread t < halo_vectors also takes halo vector t.
  Vec next[kBodyVectors], next_halo;
  const bool takes_halo = int(threadIdx.x) < halo_vectors;
  const auto load_tile = [&](std::int64_t start) {
#pragma unroll
    for (int p = 0; p < kBodyVectors; ++p)
      next[p] = load_vector(x, start + std::int64_t(p * kThreads + threadIdx.x) * kVec, n);
    if (takes_halo) next_halo = load_vector(x, start - left_pad + halo_offset(threadIdx.x), n);
  };

  std::int64_t tile = blockIdx.x;
  if (tile < tiles) load_tile(tile * kTile);
  for (; tile < tiles; tile += gridDim.x) {
    const std::int64_t tile_start = tile * kTile;
#pragma unroll
    for (int p = 0; p < kBodyVectors; ++p)
      reinterpret_cast<Vec*>(body)[p * kThreads + threadIdx.x] = next[p];
    if (takes_halo) reinterpret_cast<Vec*>(staged + halo_offset(threadIdx.x))[0] = next_halo;
    // Halos wider than one vector per thread (masks of over ~1000 taps): the rest directly.
    for (int h = threadIdx.x + kThreads; h < halo_vectors; h += kThreads)
      reinterpret_cast<Vec*>(staged + halo_offset(h))[0] =
          load_vector(x, tile_start - left_pad + halo_offset(h), n);
    __syncthreads();

    // The next tile's loads go out now and land while this tile is computed.
    const std::int64_t following = tile + gridDim.x;
    if (following < tiles) load_tile(following * kTile);

    // Thread t makes outputs tile_start + t + q * kThreads; window[q * kThreads + j] is the
    // input under tap j of output q.
    const T* window = body - left + threadIdx.x;
    T acc[kOutputs];
#pragma unroll
    for (int q = 0; q < kOutputs; ++q) acc[q] = T(0);
#pragma unroll 2
    for (int j = 0; j < width; ++j) {
      const T tap = __ldg(mask + j);
#pragma unroll
      for (int q = 0; q < kOutputs; ++q) acc[q] += tap * window[q * kThreads + j];
    }
#pragma unroll
    for (int q = 0; q < kOutputs; ++q) {
      const std::int64_t out = tile_start + threadIdx.x + q * kThreads;
      if (out < n) y[out] = acc[q];
    }
    __syncthreads();  // the next iteration overwrites `staged`
  }
}

}  // namespace gemmkit::cuda::kernels
