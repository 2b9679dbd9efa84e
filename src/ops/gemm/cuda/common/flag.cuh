// A flag in global memory that one block raises and others wait for: how the blocks of one
// launch hand partial sums to each other (stream-K: rungs 15, 19 and 24). The raiser's
// threads write their sums and meet at a barrier; then one thread raises the flag with
// release semantics. The waiting thread's acquire load that sees the value orders the sums
// before its own reads, and a barrier after it before its block's. Flags start at 0 (the
// launcher zeroes them before each launch) and are raised to a value that is never 0.
#pragma once

namespace gemmkit::cuda::kernels {

__device__ __forceinline__ void flag_raise(unsigned* flag, unsigned value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

// Spins until *flag == value. sleep_ns > 0 backs off that long between polls, leaving the
// memory system to the blocks being waited for (rung 15, whose waits can be long).
__device__ __forceinline__ void flag_wait(const unsigned* flag, unsigned value, unsigned sleep_ns = 0) {
  for (;;) {
    unsigned seen;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(flag) : "memory");
    if (seen == value) return;
    if (sleep_ns > 0) __nanosleep(sleep_ns);
  }
}

}  // namespace gemmkit::cuda::kernels
