// Internal: the distributed layer's kernels, one implementation per backend with the same
// signature — namespace host (src/host/kernels_host.cpp) and namespace cuda (src/cuda/*.cu) —
// and the dispatch by device (src/common/backends.cpp, the one file that knows which backends
// were built). Callers validate arguments first; kernels get n > 0 and the device current.
// `stream` is a cudaStream_t (null on host).
#pragma once
#include <cstddef>
#include <complex>
#include <cstdint>

#include "tessera/distributed/creation.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed::detail {

// The 1-D FFT's phase factors on a row-major block of `rows` x `cols` complex values, rows `ld`
// apart (0: cols):
// element (r, c) is multiplied by scale * exp(i * sign * 2*pi * p / modulus), where
// p = i*j mod modulus (twiddles of the four-step algorithm: i = row0 + r, j = col0 + c) or
// p = i*i mod modulus (Bluestein's chirp; cols == 1). Indices reduced exactly in integers, so
// the phase keeps full precision however long the transform.
struct Twiddle {
  index_t rows = 0, cols = 0, ld = 0, row0 = 0, col0 = 0, modulus = 1;
  bool square = false;
  int sign = -1;
  double scale = 1.0;
};

#define TESSERA_DISTRIBUTED_KERNELS                                                                                   \
  template <class T> void arange_fill(T* data, const IndexMap& m, void* stream);                                       \
  template <class T>                                                                                                   \
  void uniform_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T range, T top, void* stream);              \
  template <class T>                                                                                                   \
  void normal_fill(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, void* stream);                    \
  template <class T>                                                                                                   \
  void integers_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, std::uint64_t range, void* stream);        \
  template <class T>                                                                                                   \
  void arg_combine(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out, void* stream); \
  /* data *= factor, n reals (a complex buffer is 2n reals): the FFT's normalization */                               \
  template <class Real> void scale(Real* data, std::size_t n, double factor, void* stream);              \
  template <class Real> void twiddle(std::complex<Real>* data, const Twiddle& t, void* stream);

namespace host { TESSERA_DISTRIBUTED_KERNELS }
namespace cuda {
TESSERA_DISTRIBUTED_KERNELS
// Rows of `row_bytes` bytes: dst/src advance by their pitches (bytes) per row (packing).
void copy_rows(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t row_bytes,
               std::size_t rows, void* stream);
}  // namespace cuda
#undef TESSERA_DISTRIBUTED_KERNELS

// The dispatch: the kernel of the stream's device, with that device current.
template <class T> void arange_kernel(T* data, const IndexMap& m, const Stream& s);
template <class T>
void uniform_kernel(T* data, const IndexMap& m, std::uint64_t seed, T low, T range, T top, const Stream& s);
template <class T> void normal_kernel(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, const Stream& s);
template <class T>
void integers_kernel(T* data, const IndexMap& m, std::uint64_t seed, T low, std::uint64_t range, const Stream& s);
template <class T>
void arg_combine_kernel(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out,
                        const Stream& s);
template <class Real> void scale_kernel(Real* data, std::size_t n, double factor, const Stream& s);
template <class Real> void twiddle_kernel(std::complex<Real>* data, const Twiddle& t, const Stream& s);
// Row copies on the device's copy kernel; false where there is none (the caller copies otherwise).
bool copy_rows_kernel(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t row_bytes,
                      std::size_t rows, const Stream& s);

}  // namespace tessera::distributed::detail
