// arg_combine of reduce.hpp: picks, per output element, the winner among the ranks' (value, global
// index) pairs of an argmin/argmax along a split axis. Host loop here; CUDA in src/cuda/reduce.cu.
#include <cstdint>

#include "tessera/config.hpp"
#include "tessera/distributed/reduce.hpp"
#include "../detail/arg_combine.hpp"

namespace tessera::distributed::detail {

#if TESSERA_HAVE_CUDA
namespace cuda {  // src/cuda/reduce.cu; called with m > 0 and the device current
template <class T>
void arg_combine(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out, void* stream);
}  // namespace cuda
#endif

template <class T>
void arg_combine(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out, const Stream& s) {
  if (m == 0) return;
  if (s.device().is_cuda()) {
#if TESSERA_HAVE_CUDA
    DeviceGuard guard(s.device());
    return cuda::arg_combine(vals, idx, parts, m, is_min, out, s.native());
#else
    throw BackendUnavailable("distributed::argmin/argmax on " + s.device().str() + " needs the CUDA backend",
                             s.device());
#endif
  }
  for (index_t j = 0; j < m; ++j) {
    out[j] = arg_combine_one(vals, idx, parts, m, j, is_min);
  }
}

template void arg_combine<bool>(const bool*, const index_t*, int, index_t, bool, index_t*, const Stream&);
template void arg_combine<std::int32_t>(const std::int32_t*, const index_t*, int, index_t, bool, index_t*,
                                        const Stream&);
template void arg_combine<std::int64_t>(const std::int64_t*, const index_t*, int, index_t, bool, index_t*,
                                        const Stream&);
template void arg_combine<float>(const float*, const index_t*, int, index_t, bool, index_t*, const Stream&);
template void arg_combine<double>(const double*, const index_t*, int, index_t, bool, index_t*, const Stream&);

}  // namespace tessera::distributed::detail
