// take / put of algorithms.hpp: indices routed to their holders with all-to-all-v. The routing
// (owner of each index, counts) is computed on the host; values move on the device.
#include <cstdint>
#include <string>
#include <vector>

#include "../detail/algo_common.hpp"
#include "../detail/algo_kernels.hpp"
#include "tessera/distributed/algorithms.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::distributed {
namespace {
using Counts = std::vector<std::size_t>;

// The requests of this rank's indices, grouped by destination rank.
struct Route {
  std::vector<std::int64_t> flat;  // global flat indices, by destination
  std::vector<index_t> pos;        // their positions in this rank's idx block
  Counts sc, sd, rc, rd;           // send / receive counts and displacements
  std::vector<std::int64_t> recv;  // the indices this rank holds and was asked for
};

// Every rank checks its indices; if any is out of range, every rank throws the first one's story.
void check_range(const comm::ProcessGroup& group, const std::vector<std::int64_t>& idx, index_t lo, index_t n,
                 const char* fn, const Device& d) {
  std::int64_t bad[3] = {0, 0, 0};  // flag, value, global position
  for (std::size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < -n || idx[i] >= n) {
      bad[0] = 1, bad[1] = idx[i], bad[2] = lo + static_cast<index_t>(i);
      break;
    }
  std::vector<std::int64_t> all(3 * group.size());
  group.all_gather(bad, all.data(), 3, DType::int64, Stream::default_for(Device::host()));
  for (int r = 0; r < group.size(); ++r)
    if (all[3 * r])
      throw IndexError(std::string("distributed::") + fn + ": index " + std::to_string(all[3 * r + 1]) +
                           " at position " + std::to_string(all[3 * r + 2]) + " (held by rank " + std::to_string(r) +
                           ") is out of range for an array of " + std::to_string(n) + " elements",
                       d);
}

// Holders: the owner of each index, or (all_copies) every rank holding it on replicated grids.
template <int R>
Route route(const Layout<R>& l, const comm::ProcessGroup& group, const std::vector<std::int64_t>& idx, bool all_copies) {
  const int p = group.size();
  const index_t n = l.global_size();
  const auto gs = local::row_major_strides(l.global_shape());
  std::vector<std::vector<int>> copies(p);  // owner rank -> the ranks with its block
  for (int r = 0; r < p; ++r)
    for (int q = 0; q < p; ++q)
      if (all_copies ? l.local_box(q) == l.local_box(r) : q == r) copies[r].push_back(q);
  std::vector<std::vector<std::pair<std::int64_t, index_t>>> by(p);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const std::int64_t g = idx[i] < 0 ? idx[i] + n : idx[i];
    Index<R> m{};
    for (int a = 0; a < R; ++a) m[a] = (g / gs[a]) % l.global_shape()[a];
    for (int q : copies[l.owner(m)]) by[q].emplace_back(g, static_cast<index_t>(i));
  }
  Route rt;
  rt.sc.resize(p), rt.sd.resize(p), rt.rc.resize(p), rt.rd.resize(p);
  for (int q = 0; q < p; ++q) {
    rt.sd[q] = rt.flat.size(), rt.sc[q] = by[q].size();
    for (auto [g, i] : by[q]) rt.flat.push_back(g), rt.pos.push_back(i);
  }
  const Stream& hs = Stream::default_for(Device::host());
  group.all_to_all(rt.sc.data(), rt.rc.data(), 1, DType::int64, hs);
  std::size_t got = 0;
  for (int q = 0; q < p; ++q) rt.rd[q] = got, got += rt.rc[q];
  rt.recv.resize(got);
  group.all_to_allv(rt.flat.data(), rt.sc, rt.sd, rt.recv.data(), rt.rc, rt.rd, DType::int64, hs);
  return rt;
}

// Offsets in this rank's shard (halos and strides included) of global flat indices it holds.
template <class T, int R>
std::vector<index_t> shard_offsets(const Array<T, R>& a, const std::vector<std::int64_t>& flat) {
  const auto& l = a.layout();
  const auto box = l.local_box();
  const auto gs = local::row_major_strides(l.global_shape());
  const auto& st = a.local().strides();
  std::vector<index_t> off(flat.size());
  for (std::size_t i = 0; i < flat.size(); ++i) {
    index_t o = 0;
    for (int ax = 0; ax < R; ++ax) o += ((flat[i] / gs[ax]) % l.global_shape()[ax] - box.lo[ax] + l.halo()[ax]) * st[ax];
    off[i] = o;
  }
  return off;
}

template <class T>
local::Array<T, 1> on(const std::vector<T>& v, Device d) {
  return local::from_host(v, Index<1>{static_cast<index_t>(v.size())}, d);
}

template <class T, int R>
std::vector<std::int64_t> host_indices(const Array<T, R>& a, const Array<std::int64_t, 1>& idx, const char* fn) {
  if (idx.device() != a.device())
    throw DeviceMismatch(std::string("device mismatch in distributed::") + fn + ": " + a.device().str() + " vs " +
                             idx.device().str(),
                         a.device());
  if (idx.layout().grid().size() != a.layout().grid().size())
    throw LayoutMismatch(std::string("distributed::") + fn + ": indices on " + idx.layout().grid().str() +
                         ", array on " + a.layout().grid().str());
  Stream::default_for(a.device()).wait_for(idx.stream());
  auto h = local::to_host(local::to(idx.interior(), Device::host()));
  check_range(a.layout().grid().group(), h, idx.layout().local_box().lo[0], a.global_size(), fn, a.device());
  return h;
}
}  // namespace

template <class T, int R> Array<T, 1> take(const Array<T, R>& a, const Array<std::int64_t, 1>& idx) {
  const Device d = a.device();
  const auto agreed = check_call<T, R>("take", a.layout(), d, "idx", idx.layout());
  const auto hidx = host_indices(a, idx, "take");
  const auto& group = a.layout().grid().group();
  const Stream& s = Stream::default_for(d);
  s.wait_for(a.stream());
  const Route rt = route(a.layout(), group, hidx, false);
  // Reply with the values asked for, in request order.
  local::Array<T, 1> reply({static_cast<index_t>(rt.recv.size())}, d), back({static_cast<index_t>(rt.flat.size())}, d);
  if (!rt.recv.empty()) detail::gather_kernel(a.local().data(), on(shard_offsets(a, rt.recv), d).data(),
                                              reply.size(), reply.data(), s);
  group.all_to_allv(reply.data(), rt.rc, rt.rd, back.data(), rt.sc, rt.sd, dtype_v<T>, s);
  Array<T, 1> out(idx.layout().with_halo({}), d);
  if (!rt.pos.empty()) detail::scatter_kernel(out.local().data(), on(rt.pos, d).data(), back.data(), back.size(), s);
  a.stream().wait_for(s);
  return out;
}

template <class T, int R> void put(Array<T, R>& a, const Array<std::int64_t, 1>& idx, const Array<T, 1>& v) {
  const Device d = a.device();
  const auto agreed = check_call<T, R>("put", a.layout(), d, "idx", idx.layout(), "v", v.layout());
  if (!v.layout().same_blocks(idx.layout()))
    throw LayoutMismatch("layout mismatch in distributed::put: values " + v.layout().str() + " vs indices " +
                         idx.layout().str());
  const auto hidx = host_indices(a, idx, "put");
  const auto& group = a.layout().grid().group();
  const Stream& s = Stream::default_for(d);
  s.wait_for(a.stream());
  s.wait_for(v.stream());
  const Route rt = route(a.layout(), group, hidx, true);
  // Values in request order (by destination), sent along with the indices.
  local::Array<T, 1> vals(v.interior().shape(), d);
  local::copy(vals, v.interior());
  local::Array<T, 1> send({static_cast<index_t>(rt.flat.size())}, d), recv({static_cast<index_t>(rt.recv.size())}, d);
  if (!rt.pos.empty()) detail::gather_kernel(vals.data(), on(rt.pos, d).data(), send.size(), send.data(), s);
  group.all_to_allv(send.data(), rt.sc, rt.sd, recv.data(), rt.rc, rt.rd, dtype_v<T>, s);
  if (!rt.recv.empty())
    detail::scatter_kernel(a.local().data(), on(shard_offsets(a, rt.recv), d).data(), recv.data(), recv.size(), s);
  a.stream().wait_for(s);
}

#define TESSERA_INDEX_RANK(T, R)                                                                      \
  template Array<T, 1> take<T, R>(const Array<T, R>&, const Array<std::int64_t, 1>&);                 \
  template void put<T, R>(Array<T, R>&, const Array<std::int64_t, 1>&, const Array<T, 1>&);
#define TESSERA_INDEX(T) TESSERA_FOR_EACH_RANK(TESSERA_INDEX_RANK, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_INDEX)

}  // namespace tessera::distributed
