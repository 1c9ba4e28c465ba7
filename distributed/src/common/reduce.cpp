// arg_combine of reduce.hpp: picks, per output element, the winner among the ranks' (value, global
// index) pairs of an argmin/argmax along a split axis, by the device's kernel (detail/kernels.hpp).
#include "../detail/kernels.hpp"
#include "tessera/distributed/reduce.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::distributed::detail {

template <class T>
void arg_combine(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out, const Stream& s) {
  if (m == 0) return;
  arg_combine_kernel(vals, idx, parts, m, is_min, out, s);
}

#define TESSERA_ARG_COMBINE(T) \
  template void arg_combine<T>(const T*, const index_t*, int, index_t, bool, index_t*, const Stream&);
TESSERA_FOR_EACH_ORDERED(TESSERA_ARG_COMBINE)

}  // namespace tessera::distributed::detail
