// In-place scaling by a real factor of a contiguous buffer of reals (a complex buffer is twice as
// many reals): the FFT's normalization, one pass at HBM speed on CUDA.
#pragma once
#include <cstddef>

namespace tessera::distributed::detail {

template <class Real>
void scale_cuda(Real* data, std::size_t n, double factor, int device, void* stream);

}  // namespace tessera::distributed::detail
