// save_npy/load_npy (tessera/io/npy.hpp): staging of device shards and the collective MPI-IO
// (the header itself: npy_header.cpp).
#include "tessera/io/npy.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "../detail/error_text.hpp"
#include "../detail/npy_header.hpp"
#include "../detail/mpiio_policy.hpp"
#include "../detail/npy_mpiio.hpp"
#include "../detail/zarr_codecs.hpp"
#include "tessera/comm/parallel_file.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/settings.hpp"

namespace tessera::io {
namespace {

using detail::index_t;

using detail::collective_io;
std::size_t g_chunk_bytes = std::size_t(256) << 20;

std::string shape_text(const std::vector<index_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

// Rounds of whole leading-axis slabs: the same number of collective calls on every rank.
struct Rounds {
  index_t rows = 0, per_round = 1, slab = 0;  // slab: elements per leading-axis row
  int count = 0;                              // collective rounds (max over ranks)
};

Rounds plan_rounds(const detail::NpyPlan& p, std::string& err) {
  Rounds r;
  r.rows = p.count.empty() ? 0 : p.count[0];
  r.slab = 1;
  for (std::size_t a = 1; a < p.count.size(); ++a) r.slab *= p.count[a];
  if (r.rows > 0 && r.slab > 0) {
    const std::size_t slab_bytes = static_cast<std::size_t>(r.slab) * p.elem;
    r.per_round = std::max<index_t>(1, static_cast<index_t>(g_chunk_bytes / slab_bytes));
    r.per_round = std::min<index_t>(r.per_round, std::max<index_t>(1, INT_MAX / r.slab));
    if (r.slab > INT_MAX) err = p.path + ": one leading-axis slab of " + std::to_string(r.slab) + " elements is too large for one MPI call";
  } else {
    r.rows = 0;
  }
  const std::int64_t mine = r.rows == 0 ? 0 : (r.rows + r.per_round - 1) / r.per_round;
  r.count = static_cast<int>(p.group.all_reduce<std::int64_t>(mine, comm::ReduceOp::max));
  return r;
}

// The rounds of write_all/read_all; err is set (not thrown) so that every rank makes every call.
void run_rounds(const detail::NpyPlan& p, const Rounds& r, const detail::SlabFn& stage, bool writing,
                comm::ParallelFile& f, bool collective, std::string& err) {
  const std::size_t bytes = static_cast<std::size_t>(std::min(r.rows, r.per_round) * r.slab) * p.elem;
  // Pinned staging from the Context's pool (kept between calls).
  const auto block = r.rows > 0 ? take_pinned(bytes) : nullptr;
  char* const buf = block ? static_cast<char*>(block->data()) : nullptr;
  auto staged = [&](index_t row0, index_t rows) {
    try {
      stage(row0, rows, buf);
    } catch (const std::exception& e) {
      err = p.path + ": staging failed: " + tessera::detail::message_of(e);
    }
  };
  for (int k = 0; k < r.count; ++k) {
    const index_t row0 = k * r.per_round;
    const index_t rows = row0 < r.rows ? std::min(r.per_round, r.rows - row0) : 0;
    if (rows > 0 && writing && err.empty()) staged(row0, rows);
    const std::size_t n = err.empty() ? static_cast<std::size_t>(rows * r.slab) : 0;
    if (writing) {
      f.write(buf, n, collective, err);
    } else {
      const std::size_t got = f.read(buf, n, collective, err);
      if (rows > 0 && err.empty()) {
        if (got != n) err = p.path + ": short read (" + std::to_string(got * p.elem) + " of " + std::to_string(n * p.elem) + " bytes)";
        else staged(row0, rows);
      }
    }
  }
}

}  // namespace

namespace detail {

void set_npy_chunk_bytes(std::size_t bytes) { g_chunk_bytes = std::max<std::size_t>(bytes, 1); }
std::size_t npy_chunk_bytes() { return g_chunk_bytes; }

void write_npy(const NpyPlan& p, const SlabFn& fill) {
  const bool collective = collective_io();  // first (settings() may throw): before any collective call
  const int rank = p.group.rank();
  const std::string header = make_npy_header(p.descr, p.global);
  std::string err;
  // Rank 0 removes an old file first, so that a smaller array leaves no stale tail behind.
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::remove(p.path, ec);
    if (ec) err = p.path + ": cannot replace the existing file (" + ec.message() + ")";
  }
  p.group.agree<IoError>(err);
  comm::ParallelFile f(p.group, p.path, comm::ParallelFile::Mode::write, err);
  p.group.agree<IoError>(err);
  if (rank == 0) f.write_at(0, header.data(), header.size(), err);
  p.group.agree<IoError>(err);
  f.view_block(p.elem, p.global, p.lo, p.count, header.size(), err);
  p.group.agree<IoError>(err);
  std::string err2;
  const Rounds r = plan_rounds(p, err2);
  run_rounds(p, r, fill, true, f, collective, err2);
  p.group.agree<IoError>(err2);
}

void read_npy(const NpyPlan& p, const SlabFn& take) {
  const bool collective = collective_io();
  const int rank = p.group.rank();
  // Rank 0 reads the header; every rank parses the broadcast bytes (same result everywhere).
  std::string err, head;
  unsigned long long file_size = 0;
  if (rank == 0) {
    std::ifstream f(p.path, std::ios::binary | std::ios::ate);
    if (!f) {
      err = p.path + ": cannot open for reading";
    } else {
      file_size = static_cast<unsigned long long>(f.tellg());
      head.resize(static_cast<std::size_t>(std::min<unsigned long long>(file_size, 12)));
      f.seekg(0);
      f.read(head.data(), static_cast<std::streamsize>(head.size()));
      std::size_t want = head.size();
      if (head.size() >= 10 && head[6] == 1) want = 10 + (static_cast<unsigned char>(head[8]) | static_cast<unsigned char>(head[9]) << 8);
      else if (head.size() >= 12 && (head[6] == 2 || head[6] == 3))
        want = 12 + (std::size_t(static_cast<unsigned char>(head[8])) | std::size_t(static_cast<unsigned char>(head[9])) << 8 |
                     std::size_t(static_cast<unsigned char>(head[10])) << 16 | std::size_t(static_cast<unsigned char>(head[11])) << 24);
      // (a corrupt length cannot make us read more than the file, nor more than 64 MiB)
      want = static_cast<std::size_t>(std::min<unsigned long long>({want, file_size, 1ull << 26}));
      head.resize(want);
      f.seekg(0);
      if (!f.read(head.data(), static_cast<std::streamsize>(want))) err = p.path + ": cannot read the header";
    }
  }
  p.group.agree<IoError>(err);
  p.group.broadcast(&file_size, &file_size, 1, DType::int64, 0, Stream::default_for(Device::host()));
  p.group.broadcast(head, 0);

  NpyHeader h;
  bool swap = false;
  try {
    h = parse_npy_header(head);
    // A big-endian file of the same type is read and swapped ('>f8' for '<f8'; '|b1' has no order).
    swap = h.descr.size() == p.descr.size() && h.descr[0] == '>' && p.descr[0] == '<' && h.descr.substr(1) == p.descr.substr(1);
    if (h.descr != p.descr && !swap) throw IoError("dtype '" + h.descr + "' but '" + p.descr + "' was asked for");
    if (h.shape != p.global) throw IoError("shape " + shape_text(h.shape) + " but " + shape_text(p.global) + " was asked for");
    // (in elements, so that a huge shape in a corrupt header cannot overflow the byte count)
    unsigned long long n = 1;
    for (index_t x : h.shape) n *= static_cast<unsigned long long>(x);
    const unsigned long long have = file_size < h.data_offset ? 0 : (file_size - h.data_offset) / p.elem;
    if (file_size < h.data_offset || have < n)
      throw IoError("file of " + std::to_string(file_size) + " bytes is shorter than its header and data (" +
                    std::to_string(h.data_offset) + " + " + std::to_string(n) + " x " + std::to_string(p.elem) + " bytes)");
  } catch (const IoError& e) {
    err = p.path + ": " + e.message();  // the same on every rank: no agreement needed
  }
  if (!err.empty()) throw IoError(err);

  // A Fortran-order file is the C-order file of the reversed shape: each rank reads its block
  // reversed through the same subarray view, then transposes (and swaps) it in memory.
  NpyPlan q = p;
  const std::size_t unit = p.descr.size() > 1 && p.descr[1] == 'c' ? p.elem / 2 : p.elem;
  std::vector<char> whole;
  index_t slab = 1;
  if (h.fortran_order) {
    std::reverse(q.global.begin(), q.global.end());
    std::reverse(q.lo.begin(), q.lo.end());
    std::reverse(q.count.begin(), q.count.end());
    index_t n = 1;
    for (std::size_t a = 0; a < q.count.size(); ++a) n *= q.count[a], slab *= a ? q.count[a] : 1;
    whole.resize(static_cast<std::size_t>(n) * p.elem);
  }
  const SlabFn raw = [&](index_t row0, index_t rows, void* host) {
    if (swap)
      for (char *b = static_cast<char*>(host), *e = b + rows * slab * p.elem; b < e; b += unit) std::reverse(b, b + unit);
    if (h.fortran_order) std::memcpy(whole.data() + row0 * slab * p.elem, host, static_cast<std::size_t>(rows * slab) * p.elem);
    else take(row0, rows, host);
  };
  if (!h.fortran_order)
    for (std::size_t a = 1; a < p.count.size(); ++a) slab *= p.count[a];

  comm::ParallelFile f(p.group, p.path, comm::ParallelFile::Mode::read, err);
  p.group.agree<IoError>(err);
  f.view_block(q.elem, q.global, q.lo, q.count, h.data_offset, err);
  p.group.agree<IoError>(err);
  const Rounds r = plan_rounds(q, err);
  run_rounds(q, r, raw, false, f, collective, err);
  if (h.fortran_order && err.empty() && !whole.empty()) {
    try {
      std::vector<char> c(whole.size());
      std::vector<int> order;
      for (std::size_t a = q.count.size(); a-- > 0;) order.push_back(static_cast<int>(a));
      permute(whole.data(), q.count, order, p.elem, c.data());
      take(0, p.count[0], c.data());
    } catch (const std::exception& e) {
      err = p.path + ": staging failed: " + tessera::detail::message_of(e);
    }
  }
  p.group.agree<IoError>(err);
}

}  // namespace detail

namespace {

template <class T, int R>
detail::NpyPlan npy_plan(const std::string& path, const distributed::Layout<R>& l, bool writes) {
  detail::NpyPlan p{path, l.grid().group(), npy_descr<T>(), sizeof(T), {}, {}, {}};
  const auto box = l.local_box();
  const auto shape = box.shape();
  for (int a = 0; a < R; ++a) {
    p.global.push_back(l.global_shape()[a]);
    p.lo.push_back(box.lo[a]);
    p.count.push_back(writes ? shape[a] : 0);
  }
  return p;
}

// Only ranks at coordinate 0 of the grid axes that split nothing write (the others hold copies).
template <int R> bool npy_writer(const distributed::Layout<R>& l) {
  const auto& g = l.grid();
  for (int ga = 0; ga < g.ndims(); ++ga) {
    bool used = false;
    for (int a = 0; a < R; ++a) used = used || l.split()[a] == ga;
    if (!used && g.coords()[ga] != 0) return false;
  }
  return true;
}

}  // namespace

template <class T, int R>
void save_npy(const std::string& path, const distributed::Array<T, R>& a) {
  static_assert(R >= 1, "save_npy: arrays of rank >= 1");
  const auto agreed = distributed::check_call<T, R>("save_npy", a.layout(), a.device(), "path", path);
  const auto& l = a.layout();
  const bool writes = npy_writer(l) && l.local_box().size() > 0;
  const auto plan = npy_plan<T, R>(path, l, writes);
  local::Array<T, R> packed;  // a contiguous copy of the interior on a's device
  if (writes) {
    a.stream().synchronize();  // work queued on an adopted stream finishes before the copy
    packed = local::Array<T, R>(a.interior().shape(), a.device());
    local::copy(packed, a.interior());
  }
  detail::write_npy(plan, [&](index_t row0, index_t rows, void* host) {
    auto s = packed.shape();
    s[0] = rows;
    local::copy(local::Array<T, R>::view(static_cast<T*>(host), s, Device::host()), packed.slice(0, row0, row0 + rows));
  });
}

template <class T, int R>
distributed::Array<T, R> load_npy(const std::string& path, const distributed::Layout<R>& layout, Device d) {
  static_assert(R >= 1, "load_npy: arrays of rank >= 1");
  const auto agreed = distributed::check_call<T, R>("load_npy", layout, d, "path", path);
  const bool reads = layout.local_box().size() > 0;
  const auto plan = npy_plan<T, R>(path, layout, reads);
  local::Array<T, R> packed;
  if (reads) packed = local::Array<T, R>(layout.local_shape(), d);
  detail::read_npy(plan, [&](index_t row0, index_t rows, void* host) {
    auto s = packed.shape();
    s[0] = rows;
    local::copy(packed.slice(0, row0, row0 + rows), local::Array<T, R>::view(static_cast<T*>(host), s, Device::host()));
  });
  distributed::Array<T, R> out(layout, d);
  if (reads) local::copy(out.interior(), packed);
  return out;  // on d's default stream, which `out` uses
}

#define TESSERA_NPY_INSTANTIATE(T, R)                                                 \
  template void save_npy<T, R>(const std::string&, const distributed::Array<T, R>&); \
  template distributed::Array<T, R> load_npy<T, R>(const std::string&, const distributed::Layout<R>&, Device);
#define TESSERA_NPY_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_NPY_INSTANTIATE, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_NPY_RANKS)
#undef TESSERA_NPY_RANKS
#undef TESSERA_NPY_INSTANTIATE

}  // namespace tessera::io
