// Creating distributed arrays. Every function is collective only in the sense that each rank makes
// its own shard; none communicates.
//  - empty, zeros, ones, full: the whole shard, halos included, is filled (empty: uninitialised).
//  - arange (element = its global flat row-major index), from_function (element = f(global
//    index)), random_uniform / random_normal / random_integers: the interior only; halos are left
//    uninitialised until exchange_halos.
// Random values are Philox at counter = global flat index (philox.hpp), so an array is bitwise
// identical to tessera::random::uniform & co. on the gathered array with offset 0, whatever the
// rank count, grid, blocks, halos or device.
// arange and the random functions are precompiled (plain C++ callers on CUDA devices are fine);
// from_function evaluates f on the device and needs nvcc for CUDA arrays (see below).
#pragma once
#include <cstdint>
#include <type_traits>

#include "tessera/distributed/array.hpp"
#include "tessera/local/basic_ops.hpp"

#ifdef __CUDACC__
#include <cuda_runtime.h>

#include "tessera/local/cuda_check.hpp"
#endif

namespace tessera::distributed {

/// New arrays on d, whole shards filled: uninitialized, with `value`, zeros, ones.
template <class T, int R> Array<T, R> empty(const Layout<R>& layout, Device d) { return Array<T, R>(layout, d); }
template <class T, int R> Array<T, R> full(const Layout<R>& layout, std::type_identity_t<T> value, Device d) {
  Array<T, R> a(layout, d);
  local::fill(a.local(), value);
  return a;
}
template <class T, int R> Array<T, R> zeros(const Layout<R>& layout, Device d) { return full<T, R>(layout, T(0), d); }
template <class T, int R> Array<T, R> ones(const Layout<R>& layout, Device d) { return full<T, R>(layout, T(1), d); }

namespace detail {
// A rank's interior as the precompiled fills see it: the element with local row-major position k
// (multi-index i) lives at data + sum i[d]*strides[d] and has global flat index
// sum (lo[d] + i[d]) * gstrides[d].
struct IndexMap {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  index_t size = 0;
  index_t shape[kMaxRank] = {}, strides[kMaxRank] = {}, lo[kMaxRank] = {}, gstrides[kMaxRank] = {};
};
template <class T, int R>
IndexMap index_map(const Array<T, R>& a) {
  IndexMap m;
  m.rank = R;
  const auto in = a.interior();
  const auto box = a.local_box();
  const auto gs = local::row_major_strides(a.global_shape());
  m.size = in.size();
  for (int d = 0; d < R; ++d) m.shape[d] = in.shape()[d], m.strides[d] = in.strides()[d], m.lo[d] = box.lo[d], m.gstrides[d] = gs[d];
  return m;
}

// Precompiled for T = int32, int64, float, double, complex64, complex128 (arange), float and
// double (uniform, normal), int32 and int64 (integers); ordered on `s`. The random ones validate
// their arguments exactly as tessera::random does.
template <class T> void arange_fill(T* data, const IndexMap& m, const Stream& s);
template <class T>
void uniform_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T high, const Stream& s);
template <class T>
void normal_fill(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, const Stream& s);
template <class T>
void integers_fill(T* data, const IndexMap& m, std::uint64_t seed, T low, T high, const Stream& s);
}  // namespace detail

/// Element = its global flat row-major index, converted to T (int32 wraps past 2^31 elements).
template <class T, int R> Array<T, R> arange(const Layout<R>& layout, Device d) {
  Array<T, R> a(layout, d);
  detail::arange_fill(a.interior().data(), detail::index_map(a), a.stream());
  return a;
}
/// Uniform in [low, high) (float, double), as tessera::random::uniform.
template <class T, int R>
Array<T, R> random_uniform(const Layout<R>& layout, Device d, std::uint64_t seed, std::type_identity_t<T> low = T(0),
                           std::type_identity_t<T> high = T(1)) {
  Array<T, R> a(layout, d);
  detail::uniform_fill<T>(a.interior().data(), detail::index_map(a), seed, low, high, a.stream());
  return a;
}
/// Normal (float, double), as tessera::random::normal.
template <class T, int R>
Array<T, R> random_normal(const Layout<R>& layout, Device d, std::uint64_t seed, std::type_identity_t<T> mean = T(0),
                          std::type_identity_t<T> stddev = T(1)) {
  Array<T, R> a(layout, d);
  detail::normal_fill<T>(a.interior().data(), detail::index_map(a), seed, mean, stddev, a.stream());
  return a;
}
/// Integers in [low, high) (int32, int64), as tessera::random::integers.
template <class T, int R>
Array<T, R> random_integers(const Layout<R>& layout, Device d, std::uint64_t seed, std::type_identity_t<T> low,
                            std::type_identity_t<T> high) {
  Array<T, R> a(layout, d);
  detail::integers_fill<T>(a.interior().data(), detail::index_map(a), seed, low, high, a.stream());
  return a;
}

/// from_function<T>(layout, d, f): element = T(f(Index<R> global_index)), f evaluated where the
/// array lives. For CUDA arrays the call must be compiled by nvcc and f must be callable on the
/// device: an `[=] __host__ __device__ (const Index<R>& i) { ... }` lambda (tessera_distributed
/// adds --extended-lambda to CUDA compilations) or a functor with __host__ __device__ operator().
/// A plain C++ translation unit throws BackendUnavailable for CUDA arrays.
/// nvcc and plain C++ instantiations get different symbols (as in expr.hpp), so that a functor
/// type used in both kinds of translation units does not break the one-definition rule.
#ifdef __CUDACC__
inline namespace creation_cuda {
template <class T, int R, class F>
__global__ void from_function_kernel(T* data, Index<R> shape, Index<R> strides, Index<R> lo, index_t n, F f) {
  for (index_t k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<index_t>(gridDim.x) * blockDim.x) {
    Index<R> g;
    index_t rem = k, off = 0;
    for (int d = R - 1; d >= 0; --d) {
      const index_t i = rem % shape[d];
      rem /= shape[d];
      off += i * strides[d];
      g[d] = lo[d] + i;
    }
    data[off] = static_cast<T>(f(static_cast<const Index<R>&>(g)));
  }
}
#else
inline namespace creation_host {
#endif
template <class T, int R, class F>
Array<T, R> from_function(const Layout<R>& layout, Device d, F f) {
#ifndef __CUDACC__
  if (d.is_cuda())  // on every rank, empty blocks too
    throw BackendUnavailable("distributed::from_function on " + d.str() +
                                 " evaluates f on the GPU: compile the calling file with nvcc (a .cu file or "
                                 "LANGUAGE CUDA) and give a __host__ __device__ lambda",
                             d);
#endif
  Array<T, R> a(layout, d);
  const auto in = a.interior();
  const index_t n = in.size();
  const Index<R> lo = a.local_box().lo, shape = in.shape(), strides = in.strides();
  if (n == 0) return a;
  if (d.is_cuda()) {
#ifdef __CUDACC__
    DeviceGuard guard(d);
    constexpr int kThreads = 256;
    const index_t blocks = std::min<index_t>((n + kThreads - 1) / kThreads, index_t{1} << 16);
    from_function_kernel<T, R><<<static_cast<unsigned>(blocks), kThreads, 0, static_cast<cudaStream_t>(a.stream().native())>>>(
        in.data(), shape, strides, lo, n, f);
    TESSERA_CHECK_CUDA(cudaGetLastError());
#endif
    return a;
  }
  // Host: an odometer over the interior, fastest along the last axis.
  Index<R> i{};
  for (index_t k = 0; k < n; ++k) {
    Index<R> g;
    index_t off = 0;
    for (int ax = 0; ax < R; ++ax) g[ax] = lo[ax] + i[ax], off += i[ax] * strides[ax];
    in.data()[off] = static_cast<T>(f(static_cast<const Index<R>&>(g)));
    for (int ax = R - 1; ax >= 0 && ++i[ax] == shape[ax]; --ax) i[ax] = 0;
  }
  return a;
}
}  // inline namespace creation_cuda / creation_host

}  // namespace tessera::distributed
