// Fast copies of "row" views: a view whose elements form `rows` equal runs at a constant pitch
// (a box of a row-major array usually does). Packing for redistribution and halos is such a copy;
// on CUDA one 16-byte-vectorised kernel does it at HBM speed, where the generic strided copy
// pays index arithmetic per element.
#pragma once
#include <cstddef>

#include "kernels.hpp"
#include "tessera/local/basic_ops.hpp"

namespace tessera::distributed::detail {

using local::index_t;

struct Rows {
  index_t rows = 0, run = 0, pitch = 0;  // elements
};
// The row form of a view, if it has one.
template <class T, int R>
bool as_rows(const local::Array<T, R>& a, Rows* out) {
  int d = R - 1;
  while (d >= 0 && a.shape(d) == 1) --d;
  if (d < 0) { *out = {1, 1, 1}; return true; }
  index_t run = 1;
  for (; d >= 0; --d) {  // the contiguous inner run
    if (a.shape(d) == 1) continue;
    if (a.strides()[d] != run) break;
    run *= a.shape(d);
  }
  index_t rows = 1, pitch = 0, next = 0;
  for (; d >= 0; --d) {  // the rest must be one dimension of rows at a constant pitch
    if (a.shape(d) == 1) continue;
    if (pitch == 0) pitch = a.strides()[d], next = pitch * a.shape(d);
    else if (a.strides()[d] != next) return false;
    else next *= a.shape(d);
    rows *= a.shape(d);
  }
  *out = {rows, run, pitch ? pitch : run};
  return true;
}

// dst = src (same shape, same device); row views take the device's row-copy kernel where it has
// one (CUDA), anything else the generic copy.
template <class T, int R>
void copy_view(const local::Array<T, R>& dst, const local::Array<T, R>& src) {
  Rows rd, rs;
  if (!dst.device().is_host() && src.device() == dst.device() && dst.shape() == src.shape() && dst.size() > 0 &&
      as_rows(dst, &rd) && as_rows(src, &rs) && rd.run == rs.run && rd.rows == rs.rows &&
      copy_rows_kernel(dst.data(), rd.pitch * sizeof(T), src.data(), rs.pitch * sizeof(T), rd.run * sizeof(T), rd.rows,
                       Stream::default_for(dst.device())))
    return;
  local::copy(dst, src);
}

}  // namespace tessera::distributed::detail
