// The pinned host block that device shards are staged through by save/load of every format
// (.npy, Zarr, checkpoints); defined with the Zarr pipeline (zarr.cpp).
#pragma once
#include <cstddef>

namespace tessera::io::detail {
// Pinned host memory of at least `bytes`, kept by the current Context between calls (pinned
// allocations cost about a second per GiB). Valid until the next call on this Context.
void* staging(std::size_t bytes);
}  // namespace tessera::io::detail
