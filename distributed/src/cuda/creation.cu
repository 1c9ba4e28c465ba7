// CUDA side of the precompiled fills of creation.hpp: one grid-stride kernel per fill, element k of
// the interior mapped to its memory offset and global flat index, with the same philox.hpp
// conversions as the host loops in src/host/creation.cpp (hence bitwise identical values).
#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/distributed/creation.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/philox.hpp"
#include "tessera/local/element_types.hpp"
#include "../detail/kernels.hpp"

namespace tessera::distributed::detail::cuda {
namespace {

template <class T> struct Arange {
  __device__ void operator()(T* p, index_t g) const { *p = static_cast<T>(g); }
};
template <class R> struct Arange<std::complex<R>> {  // real part = g, imaginary part = 0
  __device__ void operator()(std::complex<R>* p, index_t g) const {
    R* q = reinterpret_cast<R*>(p);
    q[0] = static_cast<R>(g);
    q[1] = R(0);
  }
};
template <class T> struct Uniform {
  std::uint64_t seed;
  T low, range, top;
  __device__ void operator()(T* p, index_t g) const {
    *p = philox::uniform(philox::block_at(seed, static_cast<std::uint64_t>(g)), low, range, top);
  }
};
template <class T> struct Normal {
  std::uint64_t seed;
  T mean, stddev;
  __device__ void operator()(T* p, index_t g) const {
    *p = philox::normal(philox::block_at(seed, static_cast<std::uint64_t>(g)), mean, stddev);
  }
};
template <class T> struct Integer {
  std::uint64_t seed;
  T low;
  std::uint64_t range;
  __device__ void operator()(T* p, index_t g) const {
    *p = philox::integer(philox::block_at(seed, static_cast<std::uint64_t>(g)), low, range);
  }
};

template <class T, class F>
__global__ void fill_kernel(T* data, IndexMap m, F f) {
  for (index_t k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < m.size;
       k += static_cast<index_t>(gridDim.x) * blockDim.x) {
    index_t rem = k, off = 0, g = 0;
    for (int d = m.rank - 1; d >= 0; --d) {
      const index_t i = rem % m.shape[d];
      rem /= m.shape[d];
      off += i * m.strides[d];
      g += (m.lo[d] + i) * m.gstrides[d];
    }
    f(data + off, g);
  }
}

template <class T, class F>
void launch(T* data, const IndexMap& m, F f, void* stream) {
  constexpr int kThreads = 256;
  constexpr index_t kMaxBlocks = 1 << 16;  // enough to fill any GPU; the loop does the rest
  const index_t blocks = (m.size + kThreads - 1) / kThreads;
  fill_kernel<<<static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kThreads, 0,
                static_cast<cudaStream_t>(stream)>>>(data, m, f);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}

}  // namespace

template <class T> void arange_fill(T* data, const IndexMap& m, void* stream) { launch(data, m, Arange<T>{}, stream); }
template <class T>
void uniform_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T range, T top, void* stream) {
  launch(data, m, Uniform<T>{seed, low, range, top}, stream);
}
template <class T>
void normal_fill(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, void* stream) {
  launch(data, m, Normal<T>{seed, mean, stddev}, stream);
}
template <class T>
void integers_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, std::uint64_t range, void* stream) {
  launch(data, m, Integer<T>{seed, low, range}, stream);
}

#define TESSERA_ARANGE(T) template void arange_fill<T>(T*, const IndexMap&, void*);
#define TESSERA_REAL_FILLS(T)                                                           \
  template void uniform_fill<T>(T*, const IndexMap&, std::uint64_t, T, T, T, void*);    \
  template void normal_fill<T>(T*, const IndexMap&, std::uint64_t, T, T, void*);
#define TESSERA_INTEGER_FILLS(T) \
  template void integers_fill<T>(T*, const IndexMap&, std::uint64_t, T, std::uint64_t, void*);
TESSERA_FOR_EACH_NUMERIC(TESSERA_ARANGE)
TESSERA_FOR_EACH_REAL(TESSERA_REAL_FILLS)
TESSERA_FOR_EACH_INTEGER(TESSERA_INTEGER_FILLS)

}  // namespace tessera::distributed::detail::cuda
