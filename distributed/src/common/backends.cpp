// The backend registry of the distributed layer: the kernels of detail/kernels.hpp dispatched by
// device. The only file of the layer that knows which backends were built.
#include "../detail/algo_kernels.hpp"
#include "../detail/gemm.hpp"
#include "../detail/kernels.hpp"
#include "../detail/transport.hpp"
#include "tessera/config.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/error.hpp"

namespace tessera::distributed::detail {
namespace {
[[noreturn]] void unavailable(const Stream& s) {
  throw BackendUnavailable("distributed kernels on " + s.device().str() + " need the CUDA backend, which this build lacks",
                           s.device());
}
}  // namespace

#if TESSERA_HAVE_CUDA
#define TESSERA_DISPATCH(CALL)       \
  if (s.device().is_host()) return host::CALL; \
  DeviceGuard guard(s.device());     \
  return cuda::CALL;
#else
#define TESSERA_DISPATCH(CALL)       \
  if (s.device().is_host()) return host::CALL; \
  unavailable(s);
#endif

std::unique_ptr<ExchangeTransport> make_ipc_transport(const comm::ProcessGroup& g, Device d) {
#if TESSERA_HAVE_CUDA
  return cuda::make_ipc_transport(g, d);
#else
  (void)g;
  throw BackendUnavailable("exchange transport ipc: needs the CUDA backend, which this build lacks", d);
#endif
}

template <class T> void arange_kernel(T* data, const IndexMap& m, const Stream& s) {
  TESSERA_DISPATCH(arange_fill(data, m, s.native()))
}
template <class T>
void uniform_kernel(T* data, const IndexMap& m, std::uint64_t seed, T low, T range, T top, const Stream& s) {
  TESSERA_DISPATCH(uniform_fill(data, m, seed, low, range, top, s.native()))
}
template <class T> void normal_kernel(T* data, const IndexMap& m, std::uint64_t seed, T mean, T stddev, const Stream& s) {
  TESSERA_DISPATCH(normal_fill(data, m, seed, mean, stddev, s.native()))
}
template <class T>
void integers_kernel(T* data, const IndexMap& m, std::uint64_t seed, T low, std::uint64_t range, const Stream& s) {
  TESSERA_DISPATCH(integers_fill(data, m, seed, low, range, s.native()))
}
template <class T>
void arg_combine_kernel(const T* vals, const index_t* idx, int parts, index_t m, bool is_min, index_t* out,
                        const Stream& s) {
  TESSERA_DISPATCH(arg_combine(vals, idx, parts, m, is_min, out, s.native()))
}
template <class Real> void scale_kernel(Real* data, std::size_t n, double factor, const Stream& s) {
  TESSERA_DISPATCH(scale(data, n, factor, s.native()))
}
template <class Real> void twiddle_kernel(std::complex<Real>* data, const Twiddle& t, const Stream& s) {
  TESSERA_DISPATCH(twiddle(data, t, s.native()))
}
template <class T> void gemm_kernel(const GemmArgs& g, const T* a, const T* b, T* c, const Stream& s) {
  TESSERA_DISPATCH(gemm(g, a, b, c, s.native()))
}
template <class T>
int sort_kernel(const T* in, T* keys0, T* keys1, index_t* vals0, index_t* vals1, index_t n, bool canonical,
                const Stream& s) {
  TESSERA_DISPATCH(sort(in, keys0, keys1, vals0, vals1, n, canonical, s.native()))
}
template <class T>
void split_points_kernel(const T* keys, index_t n, const T* sk, const int* sr, const index_t* sp, int ns, int me,
                         index_t* out, const Stream& s) {
  TESSERA_DISPATCH(split_points(keys, n, sk, sr, sp, ns, me, out, s.native()))
}
template <class T>
void scan_kernel(const T* in, T* data, index_t outer, index_t len, index_t inner, bool prod, const Stream& s) {
  TESSERA_DISPATCH(scan(in, data, outer, len, inner, prod, s.native()))
}
template <class T>
void scan_offset_kernel(T* data, const T* off, index_t outer, index_t len, index_t inner, bool prod, const Stream& s) {
  TESSERA_DISPATCH(scan_offset(data, off, outer, len, inner, prod, s.native()))
}
template <class T> void scan_fold_kernel(const T* parts, int upto, index_t m, bool prod, T* out, const Stream& s) {
  TESSERA_DISPATCH(scan_fold(parts, upto, m, prod, out, s.native()))
}
void rows_of_kernel(const index_t* pos, index_t n, index_t len, index_t inner, index_t* row, const Stream& s) {
  TESSERA_DISPATCH(rows_of(pos, n, len, inner, row, s.native()))
}
void places_of_kernel(const index_t* pos, index_t n, index_t len, index_t inner, index_t* dst, index_t* along,
                      const Stream& s) {
  TESSERA_DISPATCH(places_of(pos, n, len, inner, dst, along, s.native()))
}
template <class T> void gather_kernel(const T* src, const index_t* off, index_t n, T* dst, const Stream& s) {
  TESSERA_DISPATCH(gather(src, off, n, dst, s.native()))
}
template <class T> void scatter_kernel(T* dst, const index_t* off, const T* src, index_t n, const Stream& s) {
  TESSERA_DISPATCH(scatter(dst, off, src, n, s.native()))
}
template <class T> void nonzero_flags_kernel(const T* in, index_t n, bool* flags, const Stream& s) {
  TESSERA_DISPATCH(nonzero_flags(in, n, flags, s.native()))
}
template <class T> void select_kernel(const bool* c, const T* x, const T* y, index_t n, T* out, const Stream& s) {
  TESSERA_DISPATCH(select(c, x, y, n, out, s.native()))
}
template <class T> index_t compact_kernel(const T* in, const bool* flags, index_t n, T* out, const Stream& s) {
  TESSERA_DISPATCH(compact(in, flags, n, out, s.native()))
}
template <class T>
void histogram_kernel(const T* x, index_t n, double lo, double hi, index_t bins, index_t* counts, const Stream& s) {
  TESSERA_DISPATCH(histogram(x, n, lo, hi, bins, counts, s.native()))
}
#undef TESSERA_DISPATCH

bool copy_rows_kernel(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t row_bytes,
                      std::size_t rows, const Stream& s) {
#if TESSERA_HAVE_CUDA
  if (!s.device().is_cuda()) return false;
  DeviceGuard guard(s.device());
  cuda::copy_rows(dst, dpitch, src, spitch, row_bytes, rows, s.native());
  return true;
#else
  (void)dst, (void)dpitch, (void)src, (void)spitch, (void)row_bytes, (void)rows, (void)s;
  return false;
#endif
}

#define TESSERA_ARANGE(T) template void arange_kernel<T>(T*, const IndexMap&, const Stream&);
#define TESSERA_REAL_FILLS(T)                                                                             \
  template void uniform_kernel<T>(T*, const IndexMap&, std::uint64_t, T, T, T, const Stream&);            \
  template void normal_kernel<T>(T*, const IndexMap&, std::uint64_t, T, T, const Stream&);                \
  template void scale_kernel<T>(T*, std::size_t, double, const Stream&);                                 \
  template void twiddle_kernel<T>(std::complex<T>*, const Twiddle&, const Stream&);
#define TESSERA_INTEGER_FILLS(T) \
  template void integers_kernel<T>(T*, const IndexMap&, std::uint64_t, T, std::uint64_t, const Stream&);
#define TESSERA_ARG_COMBINE(T) \
  template void arg_combine_kernel<T>(const T*, const index_t*, int, index_t, bool, index_t*, const Stream&);
TESSERA_FOR_EACH_NUMERIC(TESSERA_ARANGE)
TESSERA_FOR_EACH_REAL(TESSERA_REAL_FILLS)
TESSERA_FOR_EACH_INTEGER(TESSERA_INTEGER_FILLS)
TESSERA_FOR_EACH_ORDERED(TESSERA_ARG_COMBINE)
#define TESSERA_GEMM(T) template void gemm_kernel<T>(const GemmArgs&, const T*, const T*, T*, const Stream&);
TESSERA_FOR_EACH_FFT(TESSERA_GEMM)
#define TESSERA_SORT(T)                                                                                      \
  template int sort_kernel<T>(const T*, T*, T*, index_t*, index_t*, index_t, bool, const Stream&);                     \
  template void split_points_kernel<T>(const T*, index_t, const T*, const int*, const index_t*, int, int, index_t*, \
                                       const Stream&);
TESSERA_FOR_EACH_INTEGER(TESSERA_SORT)
TESSERA_FOR_EACH_REAL(TESSERA_SORT)
#define TESSERA_SCAN(T)                                                                                      \
  template void scan_kernel<T>(const T*, T*, index_t, index_t, index_t, bool, const Stream&);                         \
  template void scan_offset_kernel<T>(T*, const T*, index_t, index_t, index_t, bool, const Stream&);          \
  template void scan_fold_kernel<T>(const T*, int, index_t, bool, T*, const Stream&);
TESSERA_SCAN(std::int64_t)
TESSERA_FOR_EACH_FFT(TESSERA_SCAN)
#define TESSERA_INDEXING(T)                                                                          \
  template void gather_kernel<T>(const T*, const index_t*, index_t, T*, const Stream&);              \
  template void scatter_kernel<T>(T*, const index_t*, const T*, index_t, const Stream&);             \
  template void select_kernel<T>(const bool*, const T*, const T*, index_t, T*, const Stream&);       \
  template void nonzero_flags_kernel<T>(const T*, index_t, bool*, const Stream&);                     \
  template index_t compact_kernel<T>(const T*, const bool*, index_t, T*, const Stream&);
TESSERA_FOR_EACH_ELEMENT(TESSERA_INDEXING)
#define TESSERA_HISTOGRAM(T) \
  template void histogram_kernel<T>(const T*, index_t, double, double, index_t, index_t*, const Stream&);
TESSERA_FOR_EACH_INTEGER(TESSERA_HISTOGRAM)
TESSERA_FOR_EACH_REAL(TESSERA_HISTOGRAM)

}  // namespace tessera::distributed::detail
