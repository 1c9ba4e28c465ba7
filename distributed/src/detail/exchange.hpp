// The exchange engine behind redistribute, gather, scatter, slice and the distributed FFT's
// transposes: both sides described as one box per rank in common coordinates; overlaps move as
// grouped send/recv, packed in chunks so that packing overlaps the transfers.
#pragma once
#include <functional>
#include <vector>

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed::detail {

// One side of an exchange: every rank's box, and this rank's data covering exactly its own box.
template <class T, int R>
struct Side {
  std::vector<Box<R>> boxes;
  local::Array<T, R> data;
  local::Array<T, R> view(const Box<R>& b, int me) const {
    local::Array<T, R> v = data;
    for (int a = 0; a < R; ++a) v = v.slice(a, b.lo[a] - boxes[me].lo[a], b.hi[a] - boxes[me].lo[a]);
    return v;
  }
};

// Fixed chunking with a producer: every piece is cut along `axis` into min(count, extent) parts,
// and before step s is packed, produce(s, n, stream) writes part s of this rank's source box,
// i.e. local range [extent*s/n, extent*(s+1)/n) along `axis` (n = min(count, own extent), at
// least 1), on `stream`. Lets a computation (an FFT stage) overlap the previous part's transfer.
// Every destination box must span the source box's whole extent along `axis`.
struct Chunking {
  int axis = 0;
  int count = 1;
  std::function<void(int s, int n, const Stream& stream)> produce;
};

// Moves src to dst. `user` is the stream the source was written on; results are ordered on d's
// default stream. Collective over g (every rank calls it with the same boxes).
template <class T, int R>
void exchange(const comm::ProcessGroup& g, const Side<T, R>& src, const Side<T, R>& dst, const Stream& user, Device d,
              const Chunking* chunking = nullptr);

}  // namespace tessera::distributed::detail
