// Internal: the phase index of the 1-D FFT's twiddles and chirps (kernels.hpp's Twiddle), one
// definition for the host loop and the CUDA kernel. No library headers (nvcc compiles it).
#pragma once

#ifdef __CUDACC__
#define TESSERA_TWIDDLE_HD __host__ __device__ __forceinline__
#else
#define TESSERA_TWIDDLE_HD inline
#endif

namespace tessera::distributed::detail {

// (a * b) mod m for 0 <= a, b < m: 64-bit while the product fits (m <= 2^32), else 128-bit.
TESSERA_TWIDDLE_HD unsigned long long mul_mod(unsigned long long a, unsigned long long b, unsigned long long m) {
  if (m <= (1ull << 32)) return a * b % m;
  return static_cast<unsigned long long>(static_cast<unsigned __int128>(a) * b % m);
}

// p for block element (r, c): i*j or i*i (square) mod m, with i = row0 + r, j = col0 + c.
TESSERA_TWIDDLE_HD unsigned long long twiddle_index(long long row0, long long col0, long long r, long long c,
                                                    long long m, bool square) {
  const unsigned long long mm = static_cast<unsigned long long>(m);
  const unsigned long long i = static_cast<unsigned long long>(row0 + r) % mm;
  const unsigned long long j = square ? i : static_cast<unsigned long long>(col0 + c) % mm;
  return mul_mod(i, j, mm);
}

}  // namespace tessera::distributed::detail
