// Halo exchange: fills every halo cell of every rank's shard with the value at its global index,
// taken from the rank that owns it: faces, edges and corners (all 3^d - 1 directions). Periodic
// axes (Layout::periodic) wrap, on split axes to the rank at the other end, on whole axes within
// the rank itself; halo cells beyond a non-periodic outer boundary are left untouched. Empty
// blocks are skipped over: a halo comes from the nearest non-empty block.
//
//   exchange_halos(u);                       // blocking (on the device: stream-ordered)
//   auto h = exchange_halos_begin(u);        // packs and starts the transfers
//   interior_update(u, v);                   // overlaps the transfers; must not write u
//   h.end();                                 // halos of u are valid (in u's stream order)
//
// On a GPU, begin packs the send regions into contiguous buffers (one strided copy kernel per
// direction) and posts the NCCL sends and receives, grouped, on a communication stream ordered
// after the packing by an event; end makes the array's stream wait for them and unpacks. Neither
// blocks the host. On the host the same steps run over MPI and begin returns when the messages
// have arrived. Buffers, events and the message plan are cached per (layout, device, type).
// While an exchange is pending, the array's interior may be read but not written.
#pragma once
#include "tessera/local/element_types.hpp"
#include <complex>
#include <cstdint>
#include <memory>

#include "tessera/distributed/array.hpp"

namespace tessera::distributed {

/// A halo exchange started by exchange_halos_begin(); end() completes it. Move-only.
template <class T, int Rank>
class HaloExchange {
 public:
  /// No exchange pending.
  HaloExchange() = default;
  /// Moves the pending exchange, if any.
  HaloExchange(HaloExchange&&) noexcept;
  HaloExchange& operator=(HaloExchange&&) noexcept;
  /// Ends a pending exchange (errors are swallowed only while an exception unwinds).
  ~HaloExchange() noexcept(false);

  /// Orders the array's stream after the transfers and unpacks the halos. Idempotent.
  void end();
  /// Whether an exchange is pending (begun and not ended).
  bool pending() const noexcept { return static_cast<bool>(impl_); }

  struct Impl;  // defined in halo.cpp

 private:
  template <class U, int R>
  friend HaloExchange<U, R> exchange_halos_begin(Array<U, R>& a);
  std::unique_ptr<Impl> impl_;
  int uncaught_ = 0;
};

/// Packs a's send regions and starts the transfers; the returned handle's end() completes them.
template <class T, int Rank>
HaloExchange<T, Rank> exchange_halos_begin(Array<T, Rank>& a);

/// Completes `h` (h.end()).
template <class T, int Rank>
void exchange_halos_end(HaloExchange<T, Rank>& h) {
  h.end();
}

/// Fills every halo cell of `a` (begin and end in one call).
template <class T, int Rank>
void exchange_halos(Array<T, Rank>& a) {
  exchange_halos_begin(a).end();
}

// Instantiated in halo.cpp for every element type and ranks 1..4 (element_types.hpp).
#define TESSERA_HALO_EXTERN(T, R)                                              \
  extern template class HaloExchange<T, R>;                                    \
  extern template HaloExchange<T, R> exchange_halos_begin<T, R>(Array<T, R>&);
#define TESSERA_HALO_EXTERN_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_HALO_EXTERN, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_HALO_EXTERN_RANKS)
#undef TESSERA_HALO_EXTERN_RANKS
#undef TESSERA_HALO_EXTERN

}  // namespace tessera::distributed
