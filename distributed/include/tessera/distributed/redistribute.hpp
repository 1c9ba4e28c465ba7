// Moving sharded data between layouts: redistribute (any layout to any other of the same global
// shape and process group), gather / allgather to whole local arrays, scatter from one, and slice
// (a global sub-box as a new distributed array). All are collective over the layout's group.
//
// How data moves: every rank intersects its block with every peer's block in the other layout
// and exchanges the overlaps with grouped send/recv on the device's transport (NCCL on GPUs, MPI
// on the host). A piece that is contiguous in the source (destination) is sent from (received
// into) the array itself; others are packed (unpacked) by one strided copy each. On GPUs, large
// pieces travel in chunks so that packing chunk k+1 overlaps the transfer of chunk k (packing on
// the device's default stream, transfers on an internal stream, joined by events); nothing
// waits on the host. Where a source block is held by several ranks (grid axes that split
// nothing), each destination rank takes it from one holder: itself if it is one.
//
// Results live on the device's default stream, which is made to wait for the whole exchange; the
// source's stream is made to wait too, so it may be overwritten right away. Halos of results are
// not filled (exchange them if needed).
//
// All of them run on the exchange engine (exchange.hpp), whose chunking defaults come from the
// settings: TESSERA_EXCHANGE_CHUNKS (most chunks per piece; 4 on GPUs, 1 on the host; 1 turns
// pipelining off) and TESSERA_EXCHANGE_CHUNK_MIB (least chunk size, default 16 MiB).
#pragma once
#include "tessera/distributed/array.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/local/array.hpp"

namespace tessera::distributed {

/// `a`'s data on layout `to` (interior only), on a's device. Throws ShapeMismatch if the global
/// shapes differ, LayoutMismatch if the layouts' grids are over different process groups (the
/// grids' shapes may differ; their groups must hold the same ranks in the same order).
template <class T, int Rank>
Array<T, Rank> redistribute(const Array<T, Rank>& a, const Layout<Rank>& to);
struct ExchangeOptions;
/// The same with the exchange's options. What they leave automatic (transport where
/// TESSERA_TRANSPORT is auto, chunks where TESSERA_EXCHANGE_CHUNKS is 0) is chosen as
/// options.tune (else TESSERA_TUNE) says: the fixed rule, wisdom, or measured on this redistribute's
/// buffers the first time (docs/tuning.md); the plain call above does the same with default options.
template <class T, int Rank>
Array<T, Rank> redistribute(const Array<T, Rank>& a, const Layout<Rank>& to, const ExchangeOptions& options);

/// The whole global array on rank `root` (of a's group), on a's device; an empty array (shape
/// zeros, no memory) on the other ranks.
template <class T, int Rank>
local::Array<T, Rank> gather(const Array<T, Rank>& a, int root = 0);

/// The whole global array on every rank, on a's device.
template <class T, int Rank>
local::Array<T, Rank> allgather(const Array<T, Rank>& a);

/// A distributed array on `layout` and device `d` holding `global` (read on root only; any device,
/// any strides; other ranks may pass an empty array). Throws ShapeMismatch on every rank if root's
/// array does not have the layout's global shape.
template <class T, int Rank>
Array<T, Rank> scatter(int root, const local::Array<T, Rank>& global, const Layout<Rank>& layout, Device d);

/// The global sub-box `ranges` of `a` as a new distributed array on a balanced layout of the same
/// grid and splits, halo 0 (element i of the result is element ranges.lo + i of a). Throws
/// InvalidArgument if the box is not inside a's global shape.
template <class T, int Rank>
Array<T, Rank> slice(const Array<T, Rank>& a, const Box<Rank>& ranges);

}  // namespace tessera::distributed
