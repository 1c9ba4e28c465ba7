// CUDA row copies (detail/kernels.hpp): the packing of the exchange and the halos.
#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/distributed/settings.hpp"
#include "../detail/kernels.hpp"
#include "tessera/local/settings.hpp"
#include "tessera/local/cuda_check.hpp"

namespace tessera::distributed::detail::cuda {

namespace {
// V: the widest unit that divides the row length, both pitches and both addresses.
// I: 32-bit indices when they suffice (64-bit division is slow on the GPU).
// Each thread has K loads in flight before it stores: with few blocks per SM (room for NCCL's
// kernels) that is what keeps enough bytes in flight to reach HBM bandwidth.
template <class V, class I>
__global__ void copy_rows_kernel(char* dst, std::size_t dpitch, const char* src, std::size_t spitch,
                                 I units_per_row, I total) {
  constexpr int K = 4;
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I base = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; base < total; base += stride * K) {
    V v[K];
    I row[K], unit[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const I i = base + static_cast<I>(k) * stride;
      row[k] = i / units_per_row;
      unit[k] = i - row[k] * units_per_row;
      if (i < total) v[k] = reinterpret_cast<const V*>(src + row[k] * spitch)[unit[k]];
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (base + static_cast<I>(k) * stride < total) reinterpret_cast<V*>(dst + row[k] * dpitch)[unit[k]] = v[k];
  }
}

template <class V>
void launch(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t row_bytes,
            std::size_t rows, cudaStream_t s, int sms) {
  const std::size_t upr = row_bytes / sizeof(V), total = upr * rows;
  const int threads = 256;
  const std::size_t want = (total + 4 * threads - 1) / (4 * threads);  // 4 units per thread
  // Two blocks per SM keep the copy at HBM speed and leave room on every SM for the NCCL
  // kernels it overlaps with (a full-occupancy grid would hold them back until it ends).
  const int per_sm = distributed::settings().copy_blocks_per_sm;
  const std::size_t cap = std::size_t(sms) * per_sm;
  const int blocks = static_cast<int>(want < cap ? want : cap);
  if (total < (std::size_t(1) << 31))
    copy_rows_kernel<V, unsigned><<<blocks, threads, 0, s>>>(static_cast<char*>(dst), dpitch,
                                                             static_cast<const char*>(src), spitch,
                                                             static_cast<unsigned>(upr), static_cast<unsigned>(total));
  else
    copy_rows_kernel<V, std::size_t><<<blocks, threads, 0, s>>>(static_cast<char*>(dst), dpitch,
                                                                static_cast<const char*>(src), spitch, upr, total);
  TESSERA_CHECK_CUDA(cudaGetLastError());
}
}  // namespace

void copy_rows(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t row_bytes,
               std::size_t rows, void* stream) {
  if (rows == 0 || row_bytes == 0) return;
  int device = 0, sms = 0;
  TESSERA_CHECK_CUDA(cudaGetDevice(&device));  // the dispatch made the stream's device current
  TESSERA_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const auto align = reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | dpitch | spitch |
                     row_bytes;
  auto s = static_cast<cudaStream_t>(stream);
  if (distributed::settings().copy_engine) {  // copy engines: no SMs taken from concurrent kernels
    TESSERA_CHECK_CUDA(cudaMemcpy2DAsync(dst, dpitch, src, spitch, row_bytes, rows, cudaMemcpyDeviceToDevice, s));
    return;
  }
  if (align % 16 == 0) launch<uint4>(dst, dpitch, src, spitch, row_bytes, rows, s, sms);
  else if (align % 8 == 0) launch<uint2>(dst, dpitch, src, spitch, row_bytes, rows, s, sms);
  else if (align % 4 == 0) launch<unsigned>(dst, dpitch, src, spitch, row_bytes, rows, s, sms);
  else launch<unsigned char>(dst, dpitch, src, spitch, row_bytes, rows, s, sms);
}

}  // namespace tessera::distributed::detail::cuda
