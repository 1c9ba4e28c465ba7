// The CUDA executor of expression trees (nvcc translation units only): one grid-stride kernel per
// assignment, several elements per thread when everything is contiguous (kLinearUnroll below).
#pragma once
#ifndef __CUDACC__
#error "tessera/local/expr/cuda_executor.cuh needs nvcc (include tessera/local/expr.hpp instead)"
#endif
#include <algorithm>
#include <cstdint>

#include "tessera/local/cuda_check.hpp"
#include "tessera/local/expr/tree.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::local {
inline namespace expr_cuda {
// The narrowest element that a leaf of the tree loads (scalars load none; an unknown node counts
// as 1 byte, which keeps the 4-element shape below).
template <class E> struct narrowest_load { static constexpr std::size_t value = 1; };
template <class T> struct narrowest_load<Scalar<T>> { static constexpr std::size_t value = SIZE_MAX; };
template <class T, int R> struct narrowest_load<Leaf<T, R>> { static constexpr std::size_t value = sizeof(T); };
template <class Op, class A> struct narrowest_load<Unary<Op, A>> : narrowest_load<A> {};
template <class Op, class A, class B> struct narrowest_load<Binary<Op, A, B>> {
  static constexpr std::size_t value = std::min(narrowest_load<A>::value, narrowest_load<B>::value);
};
template <class C, class A, class B> struct narrowest_load<Where<C, A, B>> {
  static constexpr std::size_t value =
      std::min({narrowest_load<C>::value, narrowest_load<A>::value, narrowest_load<B>::value});
};

// The number of array loads of a tree.
template <class E> struct load_count { static constexpr int value = 0; };
template <class T, int R> struct load_count<Leaf<T, R>> { static constexpr int value = 1; };
template <class Op, class A> struct load_count<Unary<Op, A>> : load_count<A> {};
template <class Op, class A, class B> struct load_count<Binary<Op, A, B>> {
  static constexpr int value = load_count<A>::value + load_count<B>::value;
};
template <class C, class A, class B> struct load_count<Where<C, A, B>> {
  static constexpr int value = load_count<C>::value + load_count<A>::value + load_count<B>::value;
};

// Elements per thread of the linear kernel, each load issued before the stores: 1 where every
// load and the store are 8 bytes or wider, or where there are more than 4 loads; else 4 (the
// runtime compiler's Kernel::unroll() is the same rule; the measurements are in the docs'
// performance notes in the README).
template <class D, class E>
inline constexpr int kLinearUnroll =
    (sizeof(D) >= 8 && narrowest_load<E>::value >= 8) || load_count<E>::value > 4 ? 1 : 4;

template <class D, class E>
__global__ void eval_linear_kernel(D* out, E e, index_t n) {
  constexpr int kUnroll = kLinearUnroll<D, E>;
  const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x * kUnroll;
  for (index_t base = static_cast<index_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x; base < n; base += step) {
    D v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const index_t j = base + static_cast<index_t>(k) * blockDim.x;
      if (j < n) v[k] = convert<D>(e.template eval<true>(j, nullptr));
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const index_t j = base + static_cast<index_t>(k) * blockDim.x;
      if (j < n) out[j] = v[k];
    }
  }
}

// I: the index type of the multi-index arithmetic; 32-bit where the element count fits, since a
// 64-bit division costs several times a 32-bit one and strided copies are bound by it.
template <int R, class I, class D, class E>
__global__ void eval_strided_kernel(D* out, Shape<R> shape, Shape<R> strides, E e, index_t n) {
  I ext[R > 0 ? R : 1];
#pragma unroll
  for (int d = 0; d < R; ++d) ext[d] = static_cast<I>(shape[d]);
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    index_t idx[R > 0 ? R : 1];
    I rem = static_cast<I>(i);
    index_t off = 0;
#pragma unroll
    for (int d = R - 1; d >= 0; --d) {
      const I q = rem / ext[d];
      idx[d] = static_cast<index_t>(rem - q * ext[d]);
      rem = q;
      off += idx[d] * strides[d];
    }
    out[off] = convert<D>(e.template eval<false>(i, idx));
  }
}

template <class T, int R, class E>
void eval_cuda(const Array<T, R>& dst, const E& b, bool linear) {
  const index_t n = dst.size();
  DeviceGuard guard(dst.device());
  auto stream = static_cast<cudaStream_t>(Stream::default_for(dst.device()).native());
  const int sms = detail::multiprocessor_count(dst.device().index());
  constexpr int threads = 256;
  using D = dev_t<T>;
  if (linear) {
    // One pass over the data (no grid-stride loop below 2^30 blocks): faster than a grid of 16
    // blocks per SM that loops (docs/performance/local.md, History).
    constexpr int unroll = kLinearUnroll<D, E>;
    const index_t want = (n + threads * unroll - 1) / (threads * unroll);
    const int blocks = static_cast<int>(std::min<index_t>(want, index_t(1) << 30));
    eval_linear_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<D*>(dst.data()), b, n);
  } else {
    const index_t want = (n + threads - 1) / threads;
    const int blocks = static_cast<int>(std::min<index_t>(want, static_cast<index_t>(sms) * 16));
    if (n < (index_t(1) << 31))
      eval_strided_kernel<R, unsigned><<<blocks, threads, 0, stream>>>(reinterpret_cast<D*>(dst.data()), dst.shape(),
                                                                       dst.strides(), b, n);
    else
      eval_strided_kernel<R, index_t><<<blocks, threads, 0, stream>>>(reinterpret_cast<D*>(dst.data()), dst.shape(),
                                                                      dst.strides(), b, n);
  }
  TESSERA_CHECK_CUDA(cudaGetLastError());
  detail::note_kernel_launch();
}
}  // inline namespace expr_cuda
}  // namespace tessera::local
