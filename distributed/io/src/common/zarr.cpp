// Zarr v2 directory stores (tessera/io/zarr.hpp): metadata, chunk exchange and chunk files.
#include "tessera/io/zarr.hpp"

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "../detail/error_text.hpp"
#include "../detail/zarr_store.hpp"
#include "../detail/zarray_meta.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/element_types.hpp"
#if TESSERA_HAVE_ZLIB
#include <zlib.h>
#endif

namespace tessera::io {
namespace {

namespace fs = std::filesystem;
using Vec = std::vector<std::int64_t>;

const Stream& host_stream() { return Stream::default_for(Device::host()); }

// Every rank throws the same IoError if any rank failed: the lowest failing rank's message wins.
void agree(const comm::ProcessGroup& g, const std::string& err) {
  std::int32_t first = err.empty() ? g.size() : g.rank();
  g.all_reduce(&first, 1, comm::ReduceOp::min, host_stream());
  if (first == g.size()) return;
  std::int64_t len = static_cast<std::int64_t>(err.size());
  g.broadcast(&len, &len, 1, DType::int64, first, host_stream());
  std::vector<std::int64_t> chars(err.begin(), err.end());
  chars.resize(len);
  g.broadcast(chars.data(), chars.data(), chars.size(), DType::int64, first, host_stream());
  std::string msg(chars.begin(), chars.end());
  if (g.size() > 1) msg += " (found by rank " + std::to_string(first) + ")";
  throw IoError(msg);
}

std::int64_t product(const Vec& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

// Copies box [lo, hi) (global indices) from a row-major block at src_lo (shape src_shape) to one
// at dst_lo (shape dst_shape).
void copy_region(char* dst, const Vec& dst_lo, const Vec& dst_shape, const char* src, const Vec& src_lo,
                 const Vec& src_shape, const Vec& lo, const Vec& hi, std::size_t es) {
  const int n = static_cast<int>(lo.size());
  for (int a = 0; a < n; ++a)
    if (hi[a] <= lo[a]) return;
  const std::size_t row = static_cast<std::size_t>(hi[n - 1] - lo[n - 1]) * es;
  Vec i = lo;
  while (true) {
    std::int64_t so = 0, d = 0;
    for (int a = 0; a < n; ++a) so = so * src_shape[a] + (i[a] - src_lo[a]), d = d * dst_shape[a] + (i[a] - dst_lo[a]);
    std::memcpy(dst + d * es, src + so * es, row);
    int a = n - 2;
    for (; a >= 0; --a) {
      if (++i[a] < hi[a]) break;
      i[a] = lo[a];
    }
    if (a < 0) return;
  }
}

struct ChunkGrid {
  Vec shape, chunks, count;
  ChunkGrid(const Vec& s, const Vec& c) : shape(s), chunks(c), count(s.size()) {
    for (std::size_t a = 0; a < s.size(); ++a) count[a] = (s[a] + c[a] - 1) / c[a];
  }
  Vec lo(const Vec& idx) const {
    Vec l(idx.size());
    for (std::size_t a = 0; a < idx.size(); ++a) l[a] = idx[a] * chunks[a];
    return l;
  }
  Vec hi(const Vec& idx) const {  // clipped to the array
    Vec h(idx.size());
    for (std::size_t a = 0; a < idx.size(); ++a) h[a] = std::min(shape[a], (idx[a] + 1) * chunks[a]);
    return h;
  }
  // Calls f(idx) for the chunks overlapping [lo, hi) in C order.
  template <class F>
  void for_each(const Vec& blo, const Vec& bhi, F&& f) const {
    const std::size_t n = shape.size();
    Vec first(n), last(n);
    for (std::size_t a = 0; a < n; ++a) {
      if (bhi[a] <= blo[a]) return;
      first[a] = blo[a] / chunks[a], last[a] = (bhi[a] - 1) / chunks[a];
    }
    Vec i = first;
    while (true) {
      f(i);
      int a = static_cast<int>(n) - 1;
      for (; a >= 0; --a) {
        if (++i[a] <= last[a]) break;
        i[a] = first[a];
      }
      if (a < 0) return;
    }
  }
  std::string name(const Vec& idx, char sep) const {
    std::string s;
    for (std::size_t a = 0; a < idx.size(); ++a) s += (a ? std::string(1, sep) : "") + std::to_string(idx[a]);
    return s;
  }
};

Vec intersect_lo(const Vec& a, const Vec& b) {
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = std::max(a[i], b[i]);
  return r;
}
Vec intersect_hi(const Vec& a, const Vec& b) {
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = std::min(a[i], b[i]);
  return r;
}
Vec extent(const Vec& lo, const Vec& hi) {
  Vec r(lo.size());
  for (std::size_t i = 0; i < lo.size(); ++i) r[i] = std::max<std::int64_t>(0, hi[i] - lo[i]);
  return r;
}
bool contains(const Vec& lo, const Vec& hi, const Vec& i) {
  for (std::size_t a = 0; a < i.size(); ++a)
    if (i[a] < lo[a] || i[a] >= hi[a]) return false;
  return true;
}

// The rank writing chunk `idx`: the non-replica rank holding its first element.
int chunk_owner(const detail::ZarrShard& s, const Vec& first) {
  for (std::size_t r = 0; r < s.lo.size(); ++r)
    if (s.canonical[r] && contains(s.lo[r], s.hi[r], first)) return static_cast<int>(r);
  return 0;  // unreachable for a valid layout
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + p.string());
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw std::runtime_error("cannot read " + p.string());
  return ss.str();
}
// POSIX I/O rather than ofstream: errors carry errno, and `durable` can fsync before close.
void write_file(const fs::path& p, const char* data, std::size_t n, bool durable) {
  const auto fail = [&](const char* what) {
    throw std::runtime_error(std::string(what) + " " + p.string() + " (" + std::strerror(errno) + ")");
  };
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create");
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = errno;
      ::close(fd);
      errno = e;
      fail("cannot write");
    }
    data += w, n -= static_cast<std::size_t>(w);
  }
  if (durable && ::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    fail("cannot fsync");
  }
  if (::close(fd) != 0) fail("cannot close");
}

std::string fill_json(DType t) {
  switch (t) {
    case DType::boolean: return "false";
    case DType::int32: case DType::int64: return "0";
    case DType::complex64: case DType::complex128: return "[0.0, 0.0]";
    default: return "0.0";
  }
}

std::string compress(const char* data, std::size_t n, Compressor c) {
  if (c == Compressor::none) return std::string(data, n);
#if TESSERA_HAVE_ZLIB
  uLongf out_n = compressBound(static_cast<uLong>(n));
  std::string out(out_n, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &out_n, reinterpret_cast<const Bytef*>(data),
                static_cast<uLong>(n), 1) != Z_OK)
    throw std::runtime_error("zlib compression failed");
  out.resize(out_n);
  return out;
#else
  throw std::runtime_error("compressor zlib is not supported (built without zlib)");
#endif
}

// Decodes a chunk file's bytes into `out` (exactly out.size() bytes).
void decode(const std::string& in, std::string& out, const ZarrayMeta& m, const std::string& name) {
  if (!m.compressor) {
    if (in.size() != out.size())
      throw std::runtime_error("chunk " + name + " has " + std::to_string(in.size()) + " bytes, expected " +
                               std::to_string(out.size()) + " (truncated chunk)");
    out = in;
    return;
  }
#if TESSERA_HAVE_ZLIB
  uLongf n = static_cast<uLongf>(out.size());
  const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(in.data()),
                            static_cast<uLong>(in.size()));
  if (rc != Z_OK || n != out.size())
    throw std::runtime_error("chunk " + name + ": bad zlib data (" +
                             (rc == Z_OK ? std::to_string(n) + " bytes instead of " + std::to_string(out.size())
                                         : std::string(zError(rc))) + ")");
#else
  throw std::runtime_error("compressor zlib is not supported (built without zlib)");
#endif
}

// One element of the fill value in dtype t (a value the dtype cannot hold is an error, not UB).
std::string fill_bytes(const ZarrayMeta& m, DType t, std::size_t es) {
  const auto fits = [&](double v, double lo, double hi) {
    if (!(v >= lo && v <= hi)) throw std::runtime_error("fill_value " + std::to_string(v) + " does not fit dtype " + zarr_dtype(t));
  };
  if (t == DType::int32) fits(m.fill_real, -2147483648.0, 2147483647.0);
  if (t == DType::int64) fits(m.fill_real, -9223372036854775808.0, 9223372036854774784.0);
  if (t == DType::float32 || t == DType::complex64)
    for (double v : {m.fill_real, m.fill_imag})
      if (std::isfinite(v)) fits(v, -FLT_MAX, FLT_MAX);
  std::string b(es, '\0');
  auto put = [&](auto v, std::size_t off) { std::memcpy(b.data() + off, &v, sizeof v); };
  switch (t) {
    case DType::boolean: put(static_cast<bool>(m.fill_real != 0), 0); break;
    case DType::int32: put(static_cast<std::int32_t>(m.fill_real), 0); break;
    case DType::int64: put(static_cast<std::int64_t>(m.fill_real), 0); break;
    case DType::float32: put(static_cast<float>(m.fill_real), 0); break;
    case DType::float64: put(m.fill_real, 0); break;
    case DType::complex64: put(static_cast<float>(m.fill_real), 0), put(static_cast<float>(m.fill_imag), 4); break;
    case DType::complex128: put(m.fill_real, 0), put(m.fill_imag, 8); break;
  }
  return b;
}

}  // namespace

std::string zarr_dtype(DType t) {
  switch (t) {
    case DType::boolean: return "|b1";
    case DType::int32: return "<i4";
    case DType::int64: return "<i8";
    case DType::float32: return "<f4";
    case DType::float64: return "<f8";
    case DType::complex64: return "<c8";
    case DType::complex128: return "<c16";
  }
  return "?";
}

namespace detail {

void save_zarr_host(const std::string& dir, const ZarrShard& s, const Vec& chunks, Compressor c) {
  const auto& g = s.group;
  const std::size_t n = s.global.size(), es = s.elem;
  bool chunks_ok = chunks.size() == n;
  for (auto x : chunks) chunks_ok = chunks_ok && x >= 1;
  if (!chunks_ok) throw InvalidArgument("save_zarr: chunk extents must be >= 1 (" + dir + ")");
  const std::string where = "save_zarr: " + dir + ": ";

  std::string err;
  if (g.rank() == 0) {
    try {
#if !TESSERA_HAVE_ZLIB
      if (c == Compressor::zlib) throw std::runtime_error("compressor zlib is not supported (built without zlib)");
#endif
      fs::create_directories(dir);
      std::string shape, ch;
      for (std::size_t a = 0; a < n; ++a)
        shape += (a ? ", " : "") + std::to_string(s.global[a]), ch += (a ? ", " : "") + std::to_string(chunks[a]);
      const std::string meta =
          "{\n    \"chunks\": [" + ch + "],\n    \"compressor\": " +
          (c == Compressor::zlib ? std::string("{\n        \"id\": \"zlib\",\n        \"level\": 1\n    }") : "null") +
          ",\n    \"dimension_separator\": \".\",\n    \"dtype\": \"" + zarr_dtype(s.dtype) +
          "\",\n    \"fill_value\": " + fill_json(s.dtype) +
          ",\n    \"filters\": null,\n    \"order\": \"C\",\n    \"shape\": [" + shape + "],\n    \"zarr_format\": 2\n}";
      write_file(fs::path(dir) / ".zarray", meta.data(), meta.size(), s.durable);
      write_file(fs::path(dir) / ".zattrs", "{}", 2, s.durable);
    } catch (const std::exception& e) {
      err = where + tessera::detail::message_of(e);
    }
  }
  agree(g, err);

  // Exchange: every non-replica rank sends the part of each chunk it holds to the chunk's owner.
  const ChunkGrid grid(s.global, chunks);
  const int me = g.rank();
  struct Piece {
    Vec idx, lo, hi;
    std::vector<char> data;
  };
  std::vector<Piece> sends, recvs;
  std::vector<int> send_to, recv_from;
  if (s.canonical[me]) {
    grid.for_each(s.lo[me], s.hi[me], [&](const Vec& idx) {
      Piece p{idx, intersect_lo(grid.lo(idx), s.lo[me]), intersect_hi(grid.hi(idx), s.hi[me]), {}};
      const Vec ext = extent(p.lo, p.hi);
      p.data.resize(product(ext) * es);
      copy_region(p.data.data(), p.lo, ext, static_cast<const char*>(s.host), s.lo[me], extent(s.lo[me], s.hi[me]),
                  p.lo, p.hi, es);
      send_to.push_back(chunk_owner(s, grid.lo(idx)));
      sends.push_back(std::move(p));
    });
  }
  Vec all_lo(n, 0);
  grid.for_each(all_lo, s.global, [&](const Vec& idx) {
    if (chunk_owner(s, grid.lo(idx)) != me) return;
    for (int r = 0; r < g.size(); ++r) {
      if (r == me || !s.canonical[r]) continue;
      Piece p{idx, intersect_lo(grid.lo(idx), s.lo[r]), intersect_hi(grid.hi(idx), s.hi[r]), {}};
      const auto sz = product(extent(p.lo, p.hi));
      if (sz == 0) continue;
      p.data.resize(sz * es);
      recv_from.push_back(r);
      recvs.push_back(std::move(p));
    }
  });
  {
    comm::Group group;
    for (std::size_t i = 0; i < sends.size(); ++i)
      if (send_to[i] != me) g.send(sends[i].data.data(), sends[i].data.size() / es, s.dtype, send_to[i], host_stream());
    for (std::size_t i = 0; i < recvs.size(); ++i)
      g.recv(recvs[i].data.data(), recvs[i].data.size() / es, s.dtype, recv_from[i], host_stream());
    group.end();
  }

  // Assemble and write the chunks this rank owns (full chunk size; the edges keep the fill value 0).
  try {
    std::map<Vec, std::vector<char>> mine;
    auto place = [&](const Piece& p) {
      auto& buf = mine[p.idx];
      if (buf.empty()) buf.assign(product(chunks) * es, 0);
      copy_region(buf.data(), grid.lo(p.idx), chunks, p.data.data(), p.lo, extent(p.lo, p.hi), p.lo, p.hi, es);
    };
    for (std::size_t i = 0; i < sends.size(); ++i)
      if (send_to[i] == me) place(sends[i]);
    for (const auto& p : recvs) place(p);
    for (const auto& [idx, buf] : mine) {
      const std::string out = compress(buf.data(), buf.size(), c);
      write_file(fs::path(dir) / grid.name(idx, '.'), out.data(), out.size(), s.durable);
    }
  } catch (const std::exception& e) {
    err = where + tessera::detail::message_of(e);
  }
  agree(g, err);
}

void load_zarr_host(const std::string& dir, const ZarrShard& s) {
  const int me = s.group.rank();
  const std::size_t es = s.elem;
  std::string err;
  try {
    ZarrayMeta m;
    try {
      m = parse_zarray(read_file(fs::path(dir) / ".zarray"));
    } catch (const IoError& e) {
      throw std::runtime_error(e.message());
    }
    auto vec_str = [](const Vec& v) {
      std::string r = "[";
      for (std::size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + std::to_string(v[i]);
      return r + "]";
    };
    if (m.dtype != zarr_dtype(s.dtype))
      throw std::runtime_error("dtype " + m.dtype + " in the store, " + zarr_dtype(s.dtype) + " requested");
    if (m.shape != s.global)
      throw std::runtime_error("shape " + vec_str(m.shape) + " in the store, " + vec_str(s.global) + " in the layout");
    if (m.order != 'C') throw std::runtime_error("order F is not supported");
    if (m.compressor && *m.compressor != "zlib")
      throw std::runtime_error("compressor " + *m.compressor + " is not supported");
#if !TESSERA_HAVE_ZLIB
    if (m.compressor) throw std::runtime_error("compressor zlib is not supported (built without zlib)");
#endif
    const ChunkGrid grid(m.shape, m.chunks);
    const std::string fill = fill_bytes(m, s.dtype, es);
    const Vec my_ext = extent(s.lo[me], s.hi[me]);
    if (static_cast<double>(product(m.chunks)) * es > double(std::size_t(1) << 36))
      throw std::runtime_error("chunks " + vec_str(m.chunks) + " are too large to read (over 64 GiB each)");
    std::string buf(product(m.chunks) * es, '\0');
    grid.for_each(s.lo[me], s.hi[me], [&](const Vec& idx) {
      const std::string name = grid.name(idx, m.separator);
      const fs::path p = fs::path(dir) / name;
      if (fs::exists(p)) {
        decode(read_file(p), buf, m, name);
      } else if (s.require_chunks) {
        throw std::runtime_error("chunk " + name + " is missing");
      } else {
        for (std::size_t i = 0; i < buf.size(); i += es) std::memcpy(buf.data() + i, fill.data(), es);
      }
      copy_region(static_cast<char*>(s.host), s.lo[me], my_ext, buf.data(), grid.lo(idx), m.chunks,
                  intersect_lo(grid.lo(idx), s.lo[me]), intersect_hi(grid.hi(idx), s.hi[me]), es);
    });
  } catch (const std::exception& e) {
    err = "load_zarr: " + dir + ": " + tessera::detail::message_of(e);
  }
  agree(s.group, err);
}

}  // namespace detail

namespace {
template <class T, int R>
detail::ZarrShard make_shard(const distributed::Layout<R>& l, void* host) {
  detail::ZarrShard s{l.grid().group(), dtype_v<T>, sizeof(T), {}, {}, {}, {}, host};
  s.global.assign(l.global_shape().begin(), l.global_shape().end());
  const int n = l.grid().size();
  for (int r = 0; r < n; ++r) {
    const auto b = l.local_box(r);
    s.lo.emplace_back(b.lo.begin(), b.lo.end());
    s.hi.emplace_back(b.hi.begin(), b.hi.end());
    s.canonical.push_back(!b.empty() && l.owner(b.lo) == r);
  }
  return s;
}
}  // namespace

template <class T, int R>
void save_zarr(const std::string& dir, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
               const ZarrWriteOptions& o) {
  const auto agreed = distributed::check_call<T, R>("save_zarr", a.layout(), a.device(), "dir", dir, "chunks",
                                                    local::shape_str(chunks), "compressor", o.compressor, "durable", o.durable);
  a.stream().synchronize();  // work queued on an adopted stream finishes before the copy
  local::Array<T, R> h(a.layout().local_shape(), Device::host());
  local::copy(h, a.interior());
  auto s = make_shard<T, R>(a.layout(), h.data());
  s.durable = o.durable;
  detail::save_zarr_host(dir, s, Vec(chunks.begin(), chunks.end()), o.compressor);
}

template <class T, int R>
distributed::Array<T, R> load_zarr(const std::string& dir, const distributed::Layout<R>& layout, Device d,
                                   const ZarrReadOptions& o) {
  const auto agreed = distributed::check_call<T, R>("load_zarr", layout, d, "dir", dir, "require_chunks", o.require_chunks);
  distributed::Array<T, R> a(layout, d);
  local::Array<T, R> h(layout.local_shape(), Device::host());
  auto s = make_shard<T, R>(layout, h.data());
  s.require_chunks = o.require_chunks;
  detail::load_zarr_host(dir, s);
  local::copy(a.interior(), h);
  return a;
}

#define TESSERA_ZARR_INSTANTIATE(T, R)                                                                          \
  template void save_zarr<T, R>(const std::string&, const distributed::Array<T, R>&, distributed::Index<R>,    \
                                const ZarrWriteOptions&);                                                       \
  template distributed::Array<T, R> load_zarr<T, R>(const std::string&, const distributed::Layout<R>&, Device, \
                                                    const ZarrReadOptions&);
#define TESSERA_ZARR_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_ZARR_INSTANTIATE, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_ZARR_RANKS)
#undef TESSERA_ZARR_RANKS
#undef TESSERA_ZARR_INSTANTIATE

}  // namespace tessera::io
