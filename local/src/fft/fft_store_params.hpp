// Internal: StoreMultiply (public) flattened into StoreParams (device-friendly).
#pragma once
#include "fft_store.hpp"
#include "tessera/local/fft_plan.hpp"

namespace tessera::local::fft::detail {

inline StoreParams to_params(const StoreMultiply& m) {
  StoreParams p{};
  p.scale = m.scale;
  p.kind = static_cast<int>(m.spectral);
  p.dims = m.dims;
  for (int a = 0; a < 4; ++a) {
    p.block[a] = m.block[a] > 0 ? m.block[a] : 1;
    p.lo[a] = m.lo[a];
    p.n[a] = m.n[a];
    p.half[a] = m.half[a];
    p.k[a] = m.k[a];
  }
  p.offset = m.offset;
  set_fast_division(p);
  return p;
}

}  // namespace tessera::local::fft::detail
