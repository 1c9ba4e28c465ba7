// Zarr chunk codecs (detail/zarr_codecs.hpp): no MPI, no CUDA, fuzzed by tests/fuzz.
#include "../detail/zarr_codecs.hpp"

#include "../detail/io_threads.hpp"

#include <blosc.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#if TESSERA_HAVE_ZLIB
#include <zlib.h>
#endif

namespace tessera::io::detail {
namespace {

constexpr std::uint64_t kEmpty = ~std::uint64_t(0);

std::int64_t product(const Vec& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

void byteswap(char* p, std::size_t bytes, std::size_t unit) {
  if (unit <= 1) return;
  for (std::size_t i = 0; i + unit <= bytes; i += unit) std::reverse(p + i, p + i + unit);
}

}  // namespace

void permute(const char* src, const Vec& src_shape, const std::vector<int>& order, std::size_t es, char* dst) {
  const std::size_t n = src_shape.size();
  Vec stride(n, 1), shape(n), idx(n, 0), step(n);
  for (std::size_t a = n - 1; a-- > 0;) stride[a] = stride[a + 1] * src_shape[a + 1];
  for (std::size_t k = 0; k < n; ++k) shape[k] = src_shape[order[k]], step[k] = stride[order[k]];
  const std::int64_t total = product(shape);
  if (total == 0) return;
  const std::int64_t inner = shape[n - 1], s = step[n - 1] * static_cast<std::int64_t>(es);
  std::int64_t off = 0;
  for (std::int64_t done = 0; done < total; done += inner) {
    const char* p = src + off * static_cast<std::int64_t>(es);
    for (std::int64_t i = 0; i < inner; ++i, p += s, dst += es) std::memcpy(dst, p, es);
    for (std::size_t k = n - 1; k-- > 0;) {
      off += step[k];
      if (++idx[k] < shape[k]) break;
      off -= step[k] * shape[k], idx[k] = 0;
    }
  }
}

namespace {

std::vector<int> inverse(const std::vector<int>& order) {
  std::vector<int> inv(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) inv[order[k]] = static_cast<int>(k);
  return inv;
}

Vec permuted(const Vec& shape, const std::vector<int>& order) {
  if (order.empty()) return shape;
  Vec r(shape.size());
  for (std::size_t k = 0; k < order.size(); ++k) r[k] = shape[order[k]];
  return r;
}

void fill_elems(char* out, std::int64_t count, const std::string& fill) {
  const std::size_t es = fill.size();
  bool zero = true;
  for (char c : fill) zero = zero && c == 0;
  if (zero) return std::memset(out, 0, count * es), void();
  for (std::int64_t i = 0; i < count; ++i) std::memcpy(out + i * es, fill.data(), es);
}

// The grid of inner chunks of a shard, in C order.
struct InnerGrid {
  Vec count;
  std::int64_t n = 1;
  InnerGrid(const Vec& shard, const Vec& inner) : count(shard.size()) {
    for (std::size_t a = 0; a < shard.size(); ++a) count[a] = shard[a] / inner[a], n *= count[a];
  }
  Vec lo(std::int64_t k, const Vec& inner) const {
    Vec l(count.size());
    for (std::size_t a = count.size(); a-- > 0;) l[a] = (k % count[a]) * inner[a], k /= count[a];
    return l;
  }
};

std::size_t index_bytes(const ShardSpec& s, std::size_t n) {
  std::size_t crcs = 0;
  for (const auto& c : s.index_codecs.bytes) crcs += c.id == "crc32c";
  return n * 16 + 4 * crcs;
}

// Inner chunk k of a shard of shape `shard`, when it is one contiguous run of it (else null).
const char* inner_run(const char* data, const Vec& shard, const Vec& lo, const Vec& inner, std::size_t es) {
  std::size_t a = 0;
  while (a < inner.size() && inner[a] == 1) ++a;
  for (std::size_t b = a + 1; b < inner.size(); ++b)
    if (inner[b] != shard[b]) return nullptr;
  std::int64_t off = 0;
  for (std::size_t b = 0; b < shard.size(); ++b) off = off * shard[b] + lo[b];
  return data + off * static_cast<std::int64_t>(es);
}

}  // namespace

// The inner chunks are encoded (decoded) on `threads` threads, each with a single-threaded codec.
ShardPieces encode_shard_pieces(const ShardSpec& s, const char* data, const ChunkType& t, int threads) {
  const InnerGrid grid(t.shape, s.inner);
  const ChunkType it{s.inner, t.elem, t.swap_unit, t.fill};
  const std::size_t inner_bytes = static_cast<std::size_t>(it.count()) * t.elem;
  const auto n = static_cast<std::size_t>(grid.n);
  ShardPieces out;
  out.owned.resize(n + 1);  // the inner chunks that needed encoding, then the index
  std::vector<std::string_view> parts(n);
  const int per = threads_each(threads, n);
  const std::string err = parallel_for(n, threads, [&](std::size_t k) {
    const Vec lo = grid.lo(static_cast<std::int64_t>(k), s.inner);
    const char* run = inner_run(data, t.shape, lo, s.inner, t.elem);
    if (run && s.codecs.trivial()) {  // stored as it lies: a view, no copy
      parts[k] = std::string_view(run, inner_bytes);
      return;
    }
    PooledBytes inner;
    if (!run) {
      Vec hi(lo.size());
      for (std::size_t a = 0; a < lo.size(); ++a) hi[a] = lo[a] + s.inner[a];
      inner = PooledBytes(inner_bytes);
      copy_region(inner.data(), lo, s.inner, data, Vec(lo.size(), 0), t.shape, lo, hi, t.elem);
    }
    Encoded e = encode_chunk(s.codecs, run ? run : inner.data(), it, per);
    parts[k] = e.bytes;  // a view of e.buf, of `inner` or of the shard's data: kept, whichever it is
    out.owned[k] = e.bytes.data() == e.buf.data() ? std::move(e.buf) : std::move(inner);
  });
  if (!err.empty()) throw IoError(err);
  std::vector<std::uint64_t> index(2 * n);
  std::size_t at = s.index_at_end ? 0 : index_bytes(s, n);
  for (std::size_t k = 0; k < n; ++k) index[2 * k] = at, index[2 * k + 1] = parts[k].size(), at += parts[k].size();
  PooledBytes ix(index.size() * 8);
  if (n > 0) std::memcpy(ix.data(), index.data(), ix.size());  // little-endian hosts
  for (const auto& c : s.index_codecs.bytes) ix = encode_bytes(c, ix.view(), 8, 1);
  out.owned[n] = std::move(ix);
  if (!s.index_at_end) out.pieces.push_back(out.owned[n].view());
  out.pieces.insert(out.pieces.end(), parts.begin(), parts.end());
  if (s.index_at_end) out.pieces.push_back(out.owned[n].view());
  return out;
}

namespace {

PooledBytes encode_shard(const ShardSpec& s, const char* data, const ChunkType& t, int threads) {
  const ShardPieces p = encode_shard_pieces(s, data, t, threads);
  PooledBytes out(p.size());
  std::size_t at = 0;
  for (const auto v : p.pieces)
    if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size()), at += v.size();
  return out;
}

void decode_shard(const ShardSpec& s, std::string_view in, char* out, const ChunkType& t, int threads) {
  const InnerGrid grid(t.shape, s.inner);
  const auto index = shard_index(s, in, grid.n);
  const ChunkType it{s.inner, t.elem, t.swap_unit, t.fill};
  const int per = threads_each(threads, static_cast<std::size_t>(grid.n));
  const std::string err = parallel_for(grid.n, threads, [&](std::size_t k) {
    const Vec lo = grid.lo(static_cast<std::int64_t>(k), s.inner);
    char* run = const_cast<char*>(inner_run(out, t.shape, lo, s.inner, t.elem));
    PooledBytes inner(run ? 0 : static_cast<std::size_t>(it.count()) * t.elem);
    char* dst = run ? run : inner.data();
    if (index[2 * k] == kEmpty) fill_elems(dst, it.count(), t.fill);
    else decode_chunk(s.codecs, in.substr(index[2 * k], index[2 * k + 1]), dst, it, per);
    if (run) return;
    Vec hi(lo.size());
    for (std::size_t a = 0; a < lo.size(); ++a) hi[a] = lo[a] + s.inner[a];
    copy_region(out, Vec(lo.size(), 0), t.shape, inner.data(), lo, s.inner, lo, hi, t.elem);
  });
  if (!err.empty()) throw IoError(err);
}

std::uint32_t crc_table(std::uint32_t i) {
  for (int k = 0; k < 8; ++k) i = i & 1 ? (i >> 1) ^ 0x82F63B78u : i >> 1;
  return i;
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t n) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) t[i] = crc_table(i);
    return t;
  }();
  std::uint32_t c = ~0u;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return ~c;
}

void copy_region(char* dst, const Vec& dst_lo, const Vec& dst_shape, const char* src, const Vec& src_lo,
                 const Vec& src_shape, const Vec& lo, const Vec& hi, std::size_t es) {
  const int n = static_cast<int>(lo.size());
  for (int a = 0; a < n; ++a)
    if (hi[a] <= lo[a]) return;
  if (n == 0) return std::memcpy(dst, src, es), void();
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

PooledBytes encode_bytes(const BytesCodec& c, std::string_view in, std::size_t elem, int threads) {
  if (c.id == "crc32c") {
    const std::uint32_t v = crc32c(in.data(), in.size());
    PooledBytes out(in.size() + 4);
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    std::memcpy(out.data() + in.size(), &v, 4);
    return out;
  }
  if (c.id == "blosc") {
    if (in.size() > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE))
      throw IoError("blosc: a chunk of " + std::to_string(in.size()) + " bytes is over Blosc's 2 GB limit");
    PooledBytes out(in.size() + BLOSC_MAX_OVERHEAD);
    const int ts = c.typesize ? c.typesize : static_cast<int>(elem);
    const int sh = c.shuffle < 0 ? (ts == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE) : c.shuffle;
    const int n = blosc_compress_ctx(c.level, sh, static_cast<std::size_t>(ts), in.size(), in.data(), out.data(), out.size(),
                                     c.cname.c_str(), static_cast<std::size_t>(c.blocksize), std::max(1, threads));
    if (n <= 0) throw IoError("blosc compression failed (cname " + c.cname + ")");
    out.shrink(static_cast<std::size_t>(n));
    return out;
  }
  if (c.id == "zstd") {
    PooledBytes out(ZSTD_compressBound(in.size()));
    const std::size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), c.level);
    if (ZSTD_isError(n)) throw IoError(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    out.shrink(n);
    return out;
  }
#if TESSERA_HAVE_ZLIB
  if (c.id == "zlib" || c.id == "gzip") {
    z_stream z{};
    if (deflateInit2(&z, c.level, Z_DEFLATED, c.id == "gzip" ? 15 + 16 : 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw IoError(c.id + ": cannot initialise");
    PooledBytes out(deflateBound(&z, static_cast<uLong>(in.size())) + 32);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = in.size() > UINT_MAX || out.size() > UINT_MAX ? Z_BUF_ERROR : deflate(&z, Z_FINISH);
    out.shrink(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) throw IoError(c.id + " compression failed (chunks over 4 GB?)");
    return out;
  }
#endif
  throw IoError("compressor " + c.id + " is not supported" + (c.id == "zlib" || c.id == "gzip" ? " (built without zlib)" : ""));
}

// Decodes into out[0, n) when the codec can (blosc, zstd, zlib, gzip): exactly n bytes or IoError.
// False for the others (crc32c), which go through decode_bytes.
bool decode_bytes_to(const BytesCodec& c, std::string_view in, char* out, std::size_t n, int threads) {
  const auto wrong = [&](std::size_t got) {
    throw IoError(c.id + " data of " + std::to_string(got) + " bytes, " + std::to_string(n) + " expected (truncated chunk?)");
  };
  if (c.id == "blosc") {
    std::size_t nbytes = 0;
    if (in.size() < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0)
      throw IoError("bad blosc data (truncated or corrupt)");
    if (nbytes != n) wrong(nbytes);
    if (n > 0 && blosc_decompress_ctx(in.data(), out, n, std::max(1, threads)) != static_cast<int>(n))
      throw IoError("bad blosc data (decompression failed)");
    return true;
  }
  if (c.id == "zstd") {
    const auto size = ZSTD_getFrameContentSize(in.data(), in.size());
    if (size == ZSTD_CONTENTSIZE_ERROR) throw IoError("bad zstd data (not a zstd frame)");
    if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != n) wrong(size);
    const std::size_t got = ZSTD_decompress(out, n, in.data(), in.size());
    if (ZSTD_isError(got)) throw IoError(std::string("bad zstd data (") + ZSTD_getErrorName(got) + ")");
    if (got != n) wrong(got);
    return true;
  }
#if TESSERA_HAVE_ZLIB
  if ((c.id == "zlib" || c.id == "gzip") && in.size() <= UINT_MAX && n <= UINT_MAX) {
    z_stream z{};
    if (inflateInit2(&z, c.id == "gzip" ? 15 + 32 : 15) != Z_OK) throw IoError(c.id + ": cannot initialise");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = static_cast<uInt>(n);
    const int rc = inflate(&z, Z_FINISH);
    const std::size_t got = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
      throw IoError("bad " + c.id + " data (" + (rc == Z_BUF_ERROR ? std::string("truncated, or larger than expected") : std::to_string(rc)) + ")");
    if (got != n) wrong(got);
    return true;
  }
#endif
  return false;
}

namespace {

// crc32c decoded: `in` without its checksum, once checked.
std::string_view checked_crc32c(std::string_view in) {
  if (in.size() < 4) throw IoError("crc32c: fewer than 4 bytes");
  std::uint32_t want;
  std::memcpy(&want, in.data() + in.size() - 4, 4);
  if (crc32c(in.data(), in.size() - 4) != want) throw IoError("crc32c checksum mismatch (corrupt data)");
  return in.substr(0, in.size() - 4);
}

// Undoes the bytes codecs `bs` (the last first) on `in`: a view of `in` or of `buf`. The decoder
// of bs[i] refuses output over cap(i) bytes.
template <class Cap>
std::string_view undo_bytes(const std::vector<BytesCodec>& bs, std::string_view in, Cap&& cap, PooledBytes& buf, int threads) {
  for (std::size_t i = bs.size(); i-- > 0;) {
    if (bs[i].id == "crc32c") {
      in = checked_crc32c(in);  // a view: no copy
      continue;
    }
    buf = decode_bytes(bs[i], in, cap(i), threads);  // `in` (maybe in buf) is read before buf is replaced
    in = buf.view();
  }
  return in;
}

}  // namespace

PooledBytes decode_bytes(const BytesCodec& c, std::string_view in, std::size_t cap, int threads) {
  if (c.id == "crc32c") {
    const std::string_view v = checked_crc32c(in);
    PooledBytes out(v.size());
    if (!v.empty()) std::memcpy(out.data(), v.data(), v.size());
    return out;
  }
  if (c.id == "blosc") {
    std::size_t nbytes = 0;
    if (in.size() < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0)
      throw IoError("bad blosc data (truncated or corrupt)");
    if (nbytes > cap) throw IoError("blosc data of " + std::to_string(nbytes) + " bytes, at most " + std::to_string(cap) + " expected");
    PooledBytes out(nbytes);
    if (nbytes > 0 && blosc_decompress_ctx(in.data(), out.data(), nbytes, std::max(1, threads)) != static_cast<int>(nbytes))
      throw IoError("bad blosc data (decompression failed)");
    return out;
  }
  if (c.id == "zstd") {
    const auto size = ZSTD_getFrameContentSize(in.data(), in.size());
    if (size == ZSTD_CONTENTSIZE_ERROR) throw IoError("bad zstd data (not a zstd frame)");
    if (size != ZSTD_CONTENTSIZE_UNKNOWN && size > cap)
      throw IoError("zstd data of " + std::to_string(size) + " bytes, at most " + std::to_string(cap) + " expected");
    PooledBytes out(size != ZSTD_CONTENTSIZE_UNKNOWN ? size : cap);
    const std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) throw IoError(std::string("bad zstd data (") + ZSTD_getErrorName(n) + ")");
    out.shrink(n);
    return out;
  }
#if TESSERA_HAVE_ZLIB
  if (c.id == "zlib" || c.id == "gzip") {
    if (in.size() > UINT_MAX || cap > UINT_MAX) throw IoError(c.id + ": chunks over 4 GB are not supported");
    z_stream z{};
    if (inflateInit2(&z, c.id == "gzip" ? 15 + 32 : 15) != Z_OK) throw IoError(c.id + ": cannot initialise");
    PooledBytes out(cap);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&z, Z_FINISH);
    out.shrink(z.total_out);
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
      throw IoError("bad " + c.id + " data (" + (rc == Z_BUF_ERROR ? std::string("truncated, or larger than expected") : std::to_string(rc)) + ")");
    return out;
  }
#endif
  throw IoError("compressor " + c.id + " is not supported" + (c.id == "zlib" || c.id == "gzip" ? " (built without zlib)" : ""));
}

std::size_t shard_index_bytes(const ShardSpec& s, std::size_t n) { return index_bytes(s, n); }

std::vector<std::uint64_t> shard_index(const ShardSpec& s, std::string_view shard, std::size_t n) {
  const std::size_t ib = index_bytes(s, n);
  if (shard.size() < ib)
    throw IoError("shard of " + std::to_string(shard.size()) + " bytes is shorter than its index (" + std::to_string(ib) + " bytes)");
  return parse_shard_index(s, s.index_at_end ? shard.substr(shard.size() - ib) : shard.substr(0, ib), shard.size(), n);
}

std::vector<std::uint64_t> parse_shard_index(const ShardSpec& s, std::string_view index, std::size_t shard_size, std::size_t n) {
  PooledBytes buf;
  const std::string_view ix = undo_bytes(s.index_codecs.bytes, index, [&](std::size_t) { return index.size(); }, buf, 1);
  if (ix.size() != n * 16) throw IoError("shard index of " + std::to_string(ix.size()) + " bytes, " + std::to_string(n * 16) + " expected");
  std::vector<std::uint64_t> v(2 * n);
  if (n > 0) std::memcpy(v.data(), ix.data(), ix.size());
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t off = v[2 * k], nb = v[2 * k + 1];
    if (off == kEmpty && nb == kEmpty) continue;
    if (off > shard_size || nb > shard_size - off)
      throw IoError("shard index entry " + std::to_string(k) + " (offset " + std::to_string(off) + ", " + std::to_string(nb) +
                    " bytes) lies outside the shard of " + std::to_string(shard_size) + " bytes");
  }
  return v;
}

Encoded encode_chunk(const ChunkCodecs& c, const char* chunk, const ChunkType& t, int threads) {
  const std::size_t bytes = static_cast<std::size_t>(t.count()) * t.elem;
  Encoded e{PooledBytes(), std::string_view(chunk, bytes)};  // the chunk as it is until a codec changes it
  const Vec shape = permuted(t.shape, c.transpose);
  if (!c.transpose.empty()) {
    e.buf = PooledBytes(bytes);
    permute(chunk, t.shape, c.transpose, t.elem, e.buf.data());
    e.bytes = e.buf.view();
  }
  if (c.shard) {
    e.buf = encode_shard(*c.shard, e.bytes.data(), ChunkType{shape, t.elem, t.swap_unit, t.fill}, threads);
    e.bytes = e.buf.view();
  } else if (c.big_endian && t.swap_unit > 1) {
    if (c.transpose.empty()) {
      e.buf = PooledBytes(bytes);
      if (bytes > 0) std::memcpy(e.buf.data(), chunk, bytes);
      e.bytes = e.buf.view();
    }
    byteswap(e.buf.data(), bytes, t.swap_unit);
  }
  for (const auto& b : c.bytes) {
    e.buf = encode_bytes(b, e.bytes, t.elem, threads);  // e.bytes (maybe in e.buf) is read before e.buf is replaced
    e.bytes = e.buf.view();
  }
  return e;
}

void decode_chunk(const ChunkCodecs& c, std::string_view in, char* out, const ChunkType& t, int threads) {
  const std::size_t bytes = static_cast<std::size_t>(t.count()) * t.elem;
  // One compressor and no transpose or shard (the usual chunk): decoded straight into `out`.
  if (c.bytes.size() == 1 && !c.shard && c.transpose.empty() && decode_bytes_to(c.bytes[0], in, out, bytes, threads)) {
    if (c.big_endian) byteswap(out, bytes, t.swap_unit);
    return;
  }
  PooledBytes data, stored;
  const auto cap = [&](std::size_t i) { return i == 0 && !c.shard ? bytes : bytes + bytes / 8 + (1 << 16); };
  const std::string_view cur = undo_bytes(c.bytes, in, cap, data, threads);
  if (!c.transpose.empty()) stored = PooledBytes(bytes);
  char* dst = c.transpose.empty() ? out : stored.data();
  const ChunkType st{permuted(t.shape, c.transpose), t.elem, t.swap_unit, t.fill};
  if (c.shard) {
    decode_shard(*c.shard, cur, dst, st, threads);
  } else {
    if (cur.size() != bytes)
      throw IoError("chunk of " + std::to_string(cur.size()) + " bytes, " + std::to_string(bytes) + " expected (truncated chunk)");
    std::memcpy(dst, cur.data(), bytes);
    if (c.big_endian) byteswap(dst, bytes, t.swap_unit);
  }
  if (!c.transpose.empty()) permute(stored.data(), st.shape, inverse(c.transpose), t.elem, out);
}

}  // namespace tessera::io::detail
