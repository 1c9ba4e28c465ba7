// Zarr v2/v3 directory stores (tessera/io/zarr.hpp): metadata, chunk exchange and the parallel
// chunk pipeline (codecs: zarr_codecs.cpp, metadata: zarr_meta.cpp).
#include "tessera/io/settings.hpp"
#include "tessera/io/zarr.hpp"

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../detail/error_text.hpp"
#include "../detail/files.hpp"
#include "../detail/io_threads.hpp"
#include "../detail/zarr_codecs.hpp"
#include "../detail/zarr_meta.hpp"
#include "../detail/zarr_store.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/settings.hpp"

namespace tessera::io {
namespace {

namespace fs = std::filesystem;
using detail::copy_region;
using Vec = std::vector<std::int64_t>;
using distributed::DynBox;

const Stream& host_stream() { return Stream::default_for(Device::host()); }

// The chunk pipeline's thread count: the setting, else the cores this process may run on. A rank
// bound by its launcher (Open MPI binds 1-2 rank jobs to one core each) gets its own cores; an
// unbound one shares the node's with the node's other ranks.
int io_threads(const comm::ProcessGroup& g) {
  if (io::settings().io_threads > 0) return io::settings().io_threads;
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t set;
  CPU_ZERO(&set);
  const int bound = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : hw;
  if (bound > 0 && bound < hw) return bound;
  return std::max(1, hw / std::max(1, g.local_size()));
}

std::int64_t product(const Vec& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

struct ChunkGrid {
  Vec shape, chunks;
  ChunkGrid(const Vec& s, const Vec& c) : shape(s), chunks(c) {}
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
  // Chunk idx's box, clipped to the array.
  DynBox box(const Vec& idx) const { return {lo(idx), hi(idx)}; }
  // Calls f(idx) for the chunks overlapping box b in C order.
  template <class F>
  void for_each(const DynBox& b, F&& f) const {
    const std::size_t n = shape.size();
    Vec first(n), last(n);
    for (std::size_t a = 0; a < n; ++a) {
      if (b.hi[a] <= b.lo[a]) return;
      first[a] = b.lo[a] / chunks[a], last[a] = (b.hi[a] - 1) / chunks[a];
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
};

// The rank writing chunk `idx`: the non-replica rank holding its first element.
int chunk_owner(const detail::ZarrShard& s, const Vec& first) {
  for (std::size_t r = 0; r < s.boxes.size(); ++r)
    if (s.canonical[r] && s.boxes[r].contains(first)) return static_cast<int>(r);
  return 0;  // unreachable for a valid layout
}

using detail::write_file;
using detail::write_text;

using detail::PooledBytes;

// Closes a file descriptor when it leaves scope.
struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

// Opens `p` to read and gives its size; -1 if the file does not exist.
int open_read(const fs::path& p, std::size_t& size) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    detail::fail_errno("cannot open", p);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd), errno = e;
    detail::fail_errno("cannot stat", p);
  }
  size = static_cast<std::size_t>(st.st_size);
  return fd;
}

// Reads `n` bytes at `off` of an open file.
void pread_all(int fd, char* dst, std::size_t n, std::uint64_t off, const fs::path& p) {
  for (std::size_t done = 0; done < n;) {
    const ssize_t r = ::pread(fd, dst + done, n - done, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) detail::fail_errno("cannot read", p);
    done += static_cast<std::size_t>(r);
  }
}

// The whole file at `p` (in a pooled buffer: chunk files are read again and again), or false if
// it does not exist.
bool read_file(const fs::path& p, PooledBytes& out) {
  std::size_t n = 0;
  const int fd = open_read(p, n);
  if (fd < 0) return false;
  const Fd closer{fd};
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // whole files: twice the readahead
  out = PooledBytes(n);
  pread_all(fd, out.data(), n, 0, p);
  return true;
}
// Reads exactly n bytes of `p` into dst; false if the file does not exist.
bool read_exact(const fs::path& p, char* dst, std::size_t n) {
  std::size_t size = 0;
  const int fd = open_read(p, size);
  if (fd < 0) return false;
  const Fd closer{fd};
  if (size != n)
    throw IoError("chunk of " + std::to_string(size) + " bytes, " + std::to_string(n) + " expected (truncated chunk): " + p.string());
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  pread_all(fd, dst, n, 0, p);
  return true;
}

// The part `part` (global indices) of the shard at `lo` (file `p`) into the row-major `block` at
// `host`: the shard's index, then only the inner chunks overlapping that part, decoded on
// `threads` threads (straight into the block where an inner chunk is one run of it). False if the
// file is missing.
bool read_shard_part(const fs::path& p, const ShardSpec& s, const detail::ChunkType& t, const Vec& lo, const DynBox& part,
                     char* host, const DynBox& block, int threads) {
  std::size_t size = 0;
  const int fd = open_read(p, size);
  if (fd < 0) return false;
  const Fd closer{fd};
  const std::size_t n0 = t.shape.size();
  Vec count(n0);
  std::size_t n = 1;
  for (std::size_t a = 0; a < n0; ++a) count[a] = t.shape[a] / s.inner[a], n *= static_cast<std::size_t>(count[a]);
  const std::size_t ib = detail::shard_index_bytes(s, n);
  if (size < ib) throw IoError("shard of " + std::to_string(size) + " bytes is shorter than its index (" + std::to_string(ib) + " bytes)");
  std::string ix(ib, '\0');
  pread_all(fd, ix.data(), ib, s.index_at_end ? size - ib : 0, p);
  const auto index = detail::parse_shard_index(s, ix, size, n);
  const auto inner_lo = [&](std::size_t k) {  // global first element of inner chunk k (C order)
    Vec ilo(n0);
    for (std::size_t a = n0; a-- > 0;) ilo[a] = lo[a] + static_cast<std::int64_t>(k % count[a]) * s.inner[a], k /= count[a];
    return ilo;
  };
  const auto inner_box = [&](std::size_t k) {
    DynBox b{inner_lo(k), Vec(n0)};
    for (std::size_t a = 0; a < n0; ++a) b.hi[a] = b.lo[a] + s.inner[a];
    return b;
  };
  std::vector<std::size_t> wanted;  // inner chunks overlapping the part
  for (std::size_t k = 0; k < n; ++k)
    if (!inner_box(k).intersect(part).empty()) wanted.push_back(k);
  const detail::ChunkType it{s.inner, t.elem, t.swap_unit, t.fill};
  const std::size_t inner_bytes = static_cast<std::size_t>(it.count()) * t.elem;
  const int per = detail::threads_each(threads, wanted.size());
  const std::string err = detail::parallel_for(wanted.size(), threads, [&](std::size_t w) {
    const std::size_t k = wanted[w];
    const DynBox inner = inner_box(k), wanted_part = inner.intersect(part);
    const bool inside = wanted_part == inner;  // the whole inner chunk is wanted
    // A raw inner chunk that is one run of the block: read straight into it.
    if (inside && s.codecs.trivial() && index[2 * k] != ~std::uint64_t(0) && index[2 * k + 1] == inner_bytes &&
        block.has_run(inner)) {
      pread_all(fd, host + block.offset_of(inner.lo) * static_cast<std::int64_t>(t.elem), inner_bytes, index[2 * k], p);
      return;
    }
    if (inside && index[2 * k] != ~std::uint64_t(0) && block.has_run(inner)) {  // decoded into the block itself
      PooledBytes bytes(index[2 * k + 1]);
      pread_all(fd, bytes.data(), bytes.size(), index[2 * k], p);
      detail::decode_chunk(s.codecs, bytes.view(), host + block.offset_of(inner.lo) * static_cast<std::int64_t>(t.elem),
                           it, per);
      return;
    }
    PooledBytes buf(inner_bytes);
    if (index[2 * k] == ~std::uint64_t(0)) {
      for (std::size_t b = 0; b < buf.size(); b += t.elem) std::memcpy(buf.data() + b, t.fill.data(), t.elem);
    } else {
      PooledBytes bytes(index[2 * k + 1]);
      pread_all(fd, bytes.data(), bytes.size(), index[2 * k], p);
      detail::decode_chunk(s.codecs, bytes.view(), buf.data(), it, per);
    }
    copy_region(host, block.lo, block.shape(), buf.data(), inner.lo, s.inner, wanted_part.lo, wanted_part.hi, t.elem);
  });
  if (!err.empty()) throw IoError(err);
  return true;
}


// One element of the fill value in dtype t (a value the dtype cannot hold is an error, not UB).
std::string fill_bytes(const ZarrayMeta& m, DType t, std::size_t es) {
  const auto fits = [&](double v, double lo, double hi) {
    if (!(v >= lo && v <= hi)) throw IoError("fill_value " + std::to_string(v) + " does not fit dtype " + zarr_dtype(t));
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

// Zarr v3 has no zlib codec (zarr-python 3 and tensorstore refuse one): there zlib is written as
// the standard gzip codec, whose bytes are gzip-framed. v2 keeps numcodecs' zlib id, zlib-framed.
BytesCodec bytes_codec(const Codec& c, int format) {
  static const char* ids[] = {"", "zlib", "gzip", "zstd", "blosc"};
  static const char* cnames[] = {"lz4", "lz4hc", "blosclz", "zstd", "zlib"};
  BytesCodec b{format == 3 && c.id == Compressor::zlib ? "gzip" : ids[static_cast<int>(c.id)], c.level};
  b.cname = cnames[static_cast<int>(c.blosc)];
  b.shuffle = static_cast<int>(c.shuffle);
  return b;
}

std::string vec_str(const Vec& v) {
  std::string r = "[";
  for (std::size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + std::to_string(v[i]);
  return r + "]";
}

// The metadata save_zarr writes.
ZarrayMeta write_meta(const detail::ZarrShard& s, const Vec& chunks, const ZarrWriteOptions& o) {
  const std::size_t n = s.global.size();
  bool ok = chunks.size() == n;
  for (auto x : chunks) ok = ok && x >= 1;
  if (!ok) throw InvalidArgument("save_zarr: chunk extents must be >= 1");
  if (o.format != 2 && o.format != 3) throw InvalidArgument("save_zarr: format " + std::to_string(o.format) + " (2 or 3)");
  if (!o.shard.empty()) {
    ok = o.format == 3 && o.shard.size() == n;
    for (std::size_t a = 0; ok && a < n; ++a) ok = o.shard[a] >= chunks[a] && o.shard[a] % chunks[a] == 0;
    if (!ok) throw InvalidArgument("save_zarr: shard " + vec_str(o.shard) + " must be a multiple of the chunks " + vec_str(chunks) + " (format 3)");
  }
  ZarrayMeta m;
  m.format = o.format;
  m.shape = s.global;
  m.dtype = zarr_dtype(s.dtype);
  m.separator = o.format == 3 ? '/' : '.';
  m.key_prefix = o.format == 3;
  m.attributes = o.attributes;
  ChunkCodecs c;
  if (o.fortran_order && n > 1)
    for (std::size_t a = n; a-- > 0;) c.transpose.push_back(static_cast<int>(a));
  c.big_endian = o.big_endian && dtype_size(m.dtype) > 1;
  if (o.compressor.id != Compressor::none) c.bytes.push_back(bytes_codec(o.compressor, o.format));
  if (o.shard.empty()) {
    m.chunks = chunks, m.codecs = c;
  } else {
    auto sh = std::make_shared<ShardSpec>();
    sh->inner = chunks, sh->codecs = c;
    sh->index_codecs.bytes.push_back(BytesCodec{"crc32c"});
    m.chunks = o.shard, m.codecs.shard = sh;
  }
  return m;
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

namespace {
std::size_t g_stage_bytes = std::size_t(64) << 20;
}
void set_zarr_stage_bytes(std::size_t bytes) { g_stage_bytes = std::max<std::size_t>(bytes, 1); }
std::size_t zarr_stage_bytes() { return g_stage_bytes; }

namespace {

// Rank 0 writes a store's metadata; all ranks agree on its failure before any chunk is written.
void write_store_metadata(const std::string& dir, const ZarrayMeta& meta, const ZarrWriteOptions& o,
                          const comm::ProcessGroup& g, const std::string& where) {
  std::string err;
  if (g.rank() == 0) {
    try {
      fs::create_directories(dir);
      const fs::path d(dir);
      // The other format's metadata goes first: load_zarr prefers zarr.json.
      for (const char* old : {"zarr.json", ".zarray", ".zattrs"}) fs::remove(d / old);
      if (meta.format == 3) {
        write_text(d / "zarr.json", make_zarr_json(meta), o.durable);
      } else {
        write_text(d / ".zarray", make_zarray(meta), o.durable);
        write_text(d / ".zattrs", meta.attributes, o.durable);
      }
    } catch (const std::exception& e) {
      err = where + tessera::detail::message_of(e);
    }
  }
  g.agree<IoError>(err);
}

// What every save holds: where, what, how, and the metadata it writes.
struct SaveParts {
  SaveParts(const std::string& dir, const ZarrShard& s, const ZarrWriteOptions& o, ZarrayMeta meta)
      : dir_(dir), s_(s), o_(o), g_(s.group), es_(s.elem), meta_(std::move(meta)), where_("save_zarr: " + dir + ": "),
        me_(g_.rank()), block_(s.boxes[me_]) {}
  const std::string& dir_;
  const ZarrShard& s_;
  const ZarrWriteOptions& o_;
  const comm::ProcessGroup& g_;
  const std::size_t es_;
  const ZarrayMeta meta_;
  const std::string where_;
  const int me_;
  const DynBox& block_;
};

// One rank's part of a save, in phases: rank 0 writes the metadata; every chunk is then written
// by its owner (chunk_owner), which gathers the chunk's pieces from the other non-replica ranks
// holding part of it (a chunk file has one writer). Chunks an owner holds whole are written while
// its block is still being staged to the host; the others once their pieces have arrived.
class ZarrSave : SaveParts {
 public:
  ZarrSave(const std::string& dir, const ZarrShard& s, ZarrayMeta meta, const ZarrWriteOptions& o)
      : SaveParts(dir, s, o, std::move(meta)), grid_(s.global, meta_.chunks), my_ext_(block_.shape()),
        type_{meta_.chunks, es_, dtype_swap_unit(meta_.dtype), std::string(es_, '\0')},
        chunk_bytes_(static_cast<std::size_t>(type_.count()) * es_),
        // A shard with nothing after it is written piece by piece, raw inner chunks straight from the data.
        by_pieces_(meta_.codecs.shard && meta_.codecs.transpose.empty() && !meta_.codecs.big_endian &&
                   meta_.codecs.bytes.empty()) {}
  ZarrSave(const ZarrSave&) = delete;
  ZarrSave& operator=(const ZarrSave&) = delete;
  // Also when an exception leaves (a failed exchange of pieces): never a joinable thread's destructor.
  ~ZarrSave() {
    if (early_pool_.joinable()) early_pool_.join();
  }

  void operator()() {
    write_metadata();
    plan_pieces();
    split_early_late();
    write_early_while_staging();
    send_pieces();
    const std::string late_err = write_late();
    agree_on_errors(late_err);
  }

 private:
  // The part of chunk idx that one non-replica rank holds, on its way to the chunk's owner.
  struct Piece {
    Vec idx;
    DynBox box;
    PooledBytes data;
  };
  using Pieces = std::vector<const Piece*>;

  void write_metadata() { write_store_metadata(dir_, meta_, o_, g_, where_); }

  // Which chunks this rank writes (mine_), which pieces it sends and which it receives.
  void plan_pieces() {
    plan_sends();
    plan_receives();
    for (const auto& p : recvs_) mine_[p.idx].push_back(&p);
  }

  // A non-replica rank walks the chunks its block overlaps: its own, and a piece for every other owner.
  void plan_sends() {
    if (!s_.canonical[me_]) return;
    grid_.for_each(block_, [&](const Vec& idx) {
      const int owner = chunk_owner(s_, grid_.lo(idx));
      if (owner == me_) return void(mine_[idx]);
      sends_.push_back(Piece{idx, grid_.box(idx).intersect(block_), {}});
      send_to_.push_back(owner);
    });
  }

  // For each chunk this rank owns, a receive buffer per other non-replica rank holding part of it.
  void plan_receives() {
    grid_.for_each(DynBox{Vec(s_.global.size(), 0), s_.global}, [&](const Vec& idx) {
      if (chunk_owner(s_, grid_.lo(idx)) != me_) return;
      for (int r = 0; r < g_.size(); ++r) {
        if (r == me_ || !s_.canonical[r]) continue;
        Piece p{idx, grid_.box(idx).intersect(s_.boxes[r]), {}};
        const auto sz = p.box.size();
        if (sz == 0) continue;
        p.data = PooledBytes(static_cast<std::size_t>(sz) * es_);
        recv_from_.push_back(r);
        recvs_.push_back(std::move(p));
      }
    });
  }

  // Chunks of this rank's rows alone are written while the block is staged and the pieces travel;
  // those with pieces from other ranks after the exchange of pieces.
  void split_early_late() {
    for (auto& [idx, pieces] : mine_) (pieces.empty() ? early_ : late_).emplace_back(idx, pieces);
    threads_ = io_threads(g_);
    inner_threads_ = detail::threads_each(threads_, mine_.size());
  }

  // The early chunks go to a pool, each as soon as staging has brought its rows to the host, while
  // this thread stages the block (stage() copies from the device: they stay on the calling thread).
  void write_early_while_staging() {
    const std::int64_t rows = s_.canonical[me_] && !my_ext_.empty() ? my_ext_[0] : 0;
    staged_ = s_.stage ? 0 : rows;
    early_pool_ = std::thread([this] {
      early_err_ = parallel_for(early_.size(), threads_, [this](std::size_t i) { write_early(i); });
    });
    stage_block(rows);
  }

  // Early chunk i once rows [0, its last row) of the block are staged; nothing if staging failed.
  void write_early(std::size_t i) {
    const Vec& idx = early_[i].first;
    const std::int64_t need = block_.lo.empty() ? 0 : std::min(grid_.hi(idx)[0], block_.hi[0]) - block_.lo[0];
    {
      std::unique_lock<std::mutex> lock(stage_mutex_);
      stage_cv_.wait(lock, [&] { return staged_ >= need || stage_failed_; });
      if (stage_failed_) return;
    }
    write_chunk(idx, early_[i].second);
  }

  // Rows [0, staged_) of the block are in `s.host`; a failure wakes the early workers to give up.
  void stage_block(std::int64_t rows) {
    try {
      for (std::int64_t r0 = 0; s_.stage && r0 < rows; r0 += s_.stage_rows) {
        const std::int64_t n = std::min(s_.stage_rows, rows - r0);
        s_.stage(r0, n);
        std::lock_guard<std::mutex> lock(stage_mutex_);
        staged_ = r0 + n;
        stage_cv_.notify_all();
      }
    } catch (const std::exception& e) {
      stage_err_ = "staging failed: " + tessera::detail::message_of(e);
      std::lock_guard<std::mutex> lock(stage_mutex_);
      stage_failed_ = true;
      stage_cv_.notify_all();
    }
  }

  // Packs the outgoing pieces from the staged block and trades them for the incoming ones in one
  // group of sends and receives, while the early chunks are still being written.
  void send_pieces() {
    pack_pieces();
    comm::Group group;
    for (std::size_t i = 0; i < sends_.size(); ++i)
      g_.send(sends_[i].data.data(), sends_[i].data.size() / es_, s_.dtype, send_to_[i], host_stream());
    for (std::size_t i = 0; i < recvs_.size(); ++i)
      g_.recv(recvs_[i].data.data(), recvs_[i].data.size() / es_, s_.dtype, recv_from_[i], host_stream());
    group.end();
  }

  void pack_pieces() {
    if (stage_err_.empty()) {
      parallel_for(sends_.size(), threads_, [this](std::size_t i) {
        Piece& p = sends_[i];
        p.data = PooledBytes(static_cast<std::size_t>(p.box.size()) * es_);
        copy_region(p.data.data(), p.box.lo, p.box.shape(), static_cast<const char*>(s_.host), block_.lo, my_ext_,
                    p.box.lo, p.box.hi, es_);
      });
      return;
    }
    for (auto& p : sends_) {  // sent anyway (zeros): the receivers wait for them
      p.data = PooledBytes(static_cast<std::size_t>(p.box.size()) * es_);
      if (p.data.size() > 0) std::memset(p.data.data(), 0, p.data.size());
    }
  }

  // The chunks with received pieces; none if staging failed. Returns the first failure's message.
  std::string write_late() {
    if (!stage_err_.empty()) return "";
    return parallel_for(late_.size(), threads_, [this](std::size_t i) { write_chunk(late_[i].first, late_[i].second); });
  }

  // Waits for the early writes; every rank then throws the lowest failing rank's error (late
  // writes first, then staging, then early writes), or none.
  void agree_on_errors(std::string err) {
    early_pool_.join();
    if (err.empty()) err = stage_err_.empty() ? early_err_ : stage_err_;
    g_.agree<IoError>(err.empty() ? err : where_ + err);
  }

  // Chunk idx from this rank's block and the pieces received for it, encoded and written.
  void write_chunk(const Vec& idx, const Pieces& pieces) {
    const fs::path path = fs::path(dir_) / chunk_key(meta_, idx);
    if (meta_.separator == '/' && path.has_parent_path()) {
      std::lock_guard<std::mutex> lock(dirs_mutex_);  // create_directories races with itself
      fs::create_directories(path.parent_path());
    }
    const DynBox chunk = grid_.box(idx), held = chunk.intersect(block_);
    const bool whole = chunk.shape() == meta_.chunks && pieces.empty() && s_.canonical[me_] && held == chunk;
    if (whole && block_.has_run(chunk))  // one run of this rank's block: from the block
      return encode_to(path, static_cast<const char*>(s_.host) + block_.offset_of(chunk.lo) * es_);
    PooledBytes buf(chunk_bytes_);
    std::memset(buf.data(), 0, chunk_bytes_);  // the edges keep the fill value 0
    if (s_.canonical[me_])
      copy_region(buf.data(), chunk.lo, meta_.chunks, static_cast<const char*>(s_.host), block_.lo, my_ext_, held.lo,
                  held.hi, es_);
    for (const Piece* p : pieces)
      copy_region(buf.data(), chunk.lo, meta_.chunks, p->data.data(), p->box.lo, p->box.shape(), p->box.lo, p->box.hi, es_);
    encode_to(path, buf.data());
  }

  // The chunk at `data` (chunk_bytes_, C order) encoded and written to `path`.
  void encode_to(const fs::path& path, const char* data) {
    if (by_pieces_)
      return write_file(path, detail::encode_shard_pieces(*meta_.codecs.shard, data, type_, inner_threads_).pieces,
                        o_.durable);
    const auto e = encode_chunk(meta_.codecs, data, type_, inner_threads_);  // raw: `data` itself
    write_file(path, e.bytes.data(), e.bytes.size(), o_.durable);
  }

  const ChunkGrid grid_;
  const Vec my_ext_;
  const detail::ChunkType type_;
  const std::size_t chunk_bytes_;
  const bool by_pieces_;

  // The plan. mine_ points into recvs_, which does not change once planned.
  std::vector<Piece> sends_, recvs_;
  std::vector<int> send_to_, recv_from_;
  std::map<Vec, Pieces> mine_;  // chunks this rank writes, with the pieces it receives
  std::vector<std::pair<Vec, Pieces>> early_, late_;
  int threads_ = 1, inner_threads_ = 1;
  std::mutex dirs_mutex_;

  // Staging, shared with the early pool.
  std::int64_t staged_ = 0;
  bool stage_failed_ = false;
  std::mutex stage_mutex_;
  std::condition_variable stage_cv_;
  std::string early_err_, stage_err_;
  std::thread early_pool_;
};

// A sharded (v3) save whose inner chunks each lie in one rank's block (every block boundary on the
// inner-chunk grid): no shard is assembled on one rank. Each rank encodes the inner chunks of its
// own block (on its threads), one all-gather trades their encoded sizes, and every rank lays out
// each shard file from them; the shard's owner creates the file at its full size and writes the
// index (and the inner chunks that lie wholly outside the array), every rank then writes its
// inner chunks at their offsets in place (the ranks of a shard write its file at once), and the
// owner renames the file into place. The files are those ZarrSave writes, byte for byte.
class ShardedSave : SaveParts {
 public:
  // Whether the save of `m` over blocks `s` can go this way.
  static bool applies(const ZarrShard& s, const ZarrayMeta& m) {
    const auto& sh = m.codecs.shard;
    if (!sh || !m.codecs.transpose.empty() || m.codecs.big_endian || !m.codecs.bytes.empty()) return false;
    for (std::size_t r = 0; r < s.boxes.size(); ++r) {
      if (!s.canonical[r] || s.boxes[r].empty()) continue;
      for (std::size_t a = 0; a < s.global.size(); ++a) {
        const auto lo = s.boxes[r].lo[a], hi = s.boxes[r].hi[a];
        if (lo % sh->inner[a] != 0 || (hi % sh->inner[a] != 0 && hi != s.global[a])) return false;
      }
    }
    return true;
  }

  ShardedSave(const std::string& dir, const ZarrShard& s, ZarrayMeta meta, const ZarrWriteOptions& o)
      : SaveParts(dir, s, o, std::move(meta)), spec_(*meta_.codecs.shard), shards_(s.global, meta_.chunks),
        inner_type_{spec_.inner, es_, dtype_swap_unit(meta_.dtype), std::string(es_, '\0')},
        inner_bytes_(static_cast<std::size_t>(inner_type_.count()) * es_), per_shard_(1), threads_(io_threads(g_)) {
    for (std::size_t a = 0; a < spec_.inner.size(); ++a) per_shard_ *= meta_.chunks[a] / spec_.inner[a];
  }

  void operator()() {
    write_store_metadata(dir_, meta_, o_, g_, where_);
    std::string err = stage_and_encode();
    g_.agree<IoError>(err.empty() ? err : where_ + err);
    trade_sizes();
    err = create_owned_files();
    g_.agree<IoError>(err.empty() ? err : where_ + err);
    err = write_my_chunks();
    g_.agree<IoError>(err.empty() ? err : where_ + err);
    err = rename_owned_files();
    g_.agree<IoError>(err.empty() ? err : where_ + err);
  }

 private:
  // One inner chunk of this rank's block: its shard, its place in the shard, its encoded bytes.
  struct Inner {
    Vec shard;
    std::int64_t k = 0;
    Encoded bytes;
    PooledBytes region;  // the chunk gathered from the block, where it is not one run of it
  };

  std::int64_t linear(const Vec& shard) const {
    std::int64_t l = 0;
    for (std::size_t a = 0; a < shard.size(); ++a)
      l = l * ((s_.global[a] + meta_.chunks[a] - 1) / meta_.chunks[a]) + shard[a];
    return l;
  }
  Vec inner_lo(const Vec& shard, std::int64_t k) const {  // global first element of inner chunk k
    Vec lo(shard.size());
    for (std::size_t a = shard.size(); a-- > 0;) {
      const std::int64_t count = meta_.chunks[a] / spec_.inner[a];
      lo[a] = shard[a] * meta_.chunks[a] + (k % count) * spec_.inner[a];
      k /= count;
    }
    return lo;
  }
  DynBox inner_box(const Vec& lo) const {  // clipped to the array
    Vec hi(lo.size());
    for (std::size_t a = 0; a < lo.size(); ++a) hi[a] = std::min(s_.global[a], lo[a] + spec_.inner[a]);
    return DynBox{lo, hi};
  }

  // The block comes to the host, then its inner chunks are encoded on the pool.
  std::string stage_and_encode() {
    try {
      const std::int64_t rows = s_.canonical[me_] && !block_.empty() ? block_.shape()[0] : 0;
      for (std::int64_t r0 = 0; s_.stage && r0 < rows; r0 += s_.stage_rows) s_.stage(r0, std::min(s_.stage_rows, rows - r0));
      // The fill chunk (its size lays out every shard; owners write it where no rank holds one).
      zero_buf_ = PooledBytes(inner_bytes_);
      if (inner_bytes_) std::memset(zero_buf_.data(), 0, inner_bytes_);
      zero_ = encode_chunk(spec_.codecs, zero_buf_.data(), inner_type_, 1);  // (may view zero_buf_)
      if (!s_.canonical[me_] || block_.empty()) return "";
      shards_.for_each(block_, [&](const Vec& shard) {
        for (std::int64_t k = 0; k < per_shard_; ++k) {
          const Vec lo = inner_lo(shard, k);
          if (block_.contains(lo)) mine_.push_back(Inner{shard, k, {}, {}});
        }
      });
      const int codec_threads = detail::threads_each(threads_, mine_.size());
      return parallel_for(mine_.size(), threads_, [&](std::size_t i) { encode(mine_[i], codec_threads); });
    } catch (const std::exception& e) {
      return tessera::detail::message_of(e);
    }
  }

  void encode(Inner& c, int codec_threads) {
    const DynBox box = inner_box(inner_lo(c.shard, c.k));
    const char* host = static_cast<const char*>(s_.host);
    if (box.shape() == spec_.inner && block_.has_run(box)) {  // one run of the block: encoded from it
      c.bytes = encode_chunk(spec_.codecs, host + block_.offset_of(box.lo) * es_, inner_type_, codec_threads);
      return;
    }
    c.region = PooledBytes(inner_bytes_);
    std::memset(c.region.data(), 0, inner_bytes_);  // beyond the array: the fill value 0
    copy_region(c.region.data(), box.lo, spec_.inner, host, block_.lo, block_.shape(), box.lo, box.hi, es_);
    c.bytes = encode_chunk(spec_.codecs, c.region.data(), inner_type_, codec_threads);
  }

  // Every rank's (shard, inner chunk, encoded size) triples, then each shard's offsets.
  void trade_sizes() {
    std::vector<std::int64_t> send;
    for (const auto& c : mine_)
      send.insert(send.end(), {linear(c.shard), c.k, static_cast<std::int64_t>(c.bytes.bytes.size())});
    const int n = g_.size();
    std::vector<std::int64_t> counts(n);
    const std::int64_t mine = static_cast<std::int64_t>(send.size());
    g_.all_gather(&mine, counts.data(), 1, DType::int64, host_stream());
    std::vector<std::size_t> c(n), d(n);
    std::size_t total = 0;
    for (int r = 0; r < n; ++r) c[r] = static_cast<std::size_t>(counts[r]), d[r] = total, total += c[r];
    std::vector<std::int64_t> all(std::max<std::size_t>(total, 1));
    g_.all_gatherv(send.data(), send.size(), all.data(), c, d, DType::int64, host_stream());
    host_stream().synchronize();
    for (std::size_t i = 0; i + 3 <= total; i += 3) {
      auto& sizes = sizes_[all[i]];
      if (sizes.empty()) sizes.assign(static_cast<std::size_t>(per_shard_), kNone);
      sizes[static_cast<std::size_t>(all[i + 1])] = static_cast<std::uint64_t>(all[i + 2]);
    }
  }

  // Shard `shard`'s layout: each inner chunk's (offset, size), its index bytes and its file size.
  struct FileLayout {
    std::vector<std::uint64_t> index;  // (offset, nbytes) pairs
    std::size_t index_at = 0, size = 0;
  };
  FileLayout layout_of(const Vec& shard) const {
    FileLayout f;
    const std::size_t ib = shard_index_bytes(spec_, static_cast<std::size_t>(per_shard_));
    std::size_t at = spec_.index_at_end ? 0 : ib;
    const auto it = sizes_.find(linear(shard));
    f.index.resize(2 * static_cast<std::size_t>(per_shard_));
    for (std::int64_t k = 0; k < per_shard_; ++k) {
      const std::uint64_t held = it == sizes_.end() ? kNone : it->second[static_cast<std::size_t>(k)];
      const std::size_t n = held == kNone ? zero_.bytes.size() : static_cast<std::size_t>(held);  // held by none: fill
      f.index[2 * k] = at, f.index[2 * k + 1] = n, at += n;
    }
    f.index_at = spec_.index_at_end ? at : 0;
    f.size = at + (spec_.index_at_end ? ib : 0);
    return f;
  }

  fs::path path_of(const Vec& shard) const { return fs::path(dir_) / chunk_key(meta_, shard); }
  static fs::path tmp_of(const fs::path& p) { return p.string() + ".tmp"; }

  // The shards this rank owns: created at full size with their index and fill chunks written.
  std::string create_owned_files() {
    shards_.for_each(DynBox{Vec(s_.global.size(), 0), s_.global}, [&](const Vec& shard) {
      if (chunk_owner(s_, shards_.lo(shard)) == me_) owned_.push_back(shard);
    });
    return parallel_for(owned_.size(), threads_, [&](std::size_t i) { create(owned_[i]); });
  }

  void create(const Vec& shard) {
    const fs::path p = path_of(shard);
    if (p.has_parent_path()) {
      std::lock_guard<std::mutex> lock(dirs_mutex_);  // create_directories races with itself
      fs::create_directories(p.parent_path());
    }
    const FileLayout f = layout_of(shard);
    PooledBytes ix(f.index.size() * 8);
    if (!f.index.empty()) std::memcpy(ix.data(), f.index.data(), ix.size());  // little-endian hosts
    for (const auto& c : spec_.index_codecs.bytes) ix = encode_bytes(c, ix.view(), 8, 1);
    const fs::path tmp = tmp_of(p);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw IoError("cannot create " + tmp.string() + ": " + std::strerror(errno));
    Fd closer{fd};
    if (::ftruncate(fd, static_cast<off_t>(f.size)) != 0)
      throw IoError("cannot size " + tmp.string() + ": " + std::strerror(errno));
    detail::write_at(fd, tmp, ix.view(), f.index_at, false);
    // Inner chunks no rank holds (wholly outside the array): the fill value, encoded.
    const auto held = sizes_.find(linear(shard));
    if (held != sizes_.end() && std::none_of(held->second.begin(), held->second.end(), [](auto v) { return v == kNone; }))
      return;
    for (std::int64_t k = 0; k < per_shard_; ++k)
      if (held == sizes_.end() || held->second[static_cast<std::size_t>(k)] == kNone)
        detail::write_at(fd, tmp, zero_.bytes, f.index[2 * k], false);
  }

  // This rank's inner chunks, each at its offset in its shard's file (a file opened once per shard).
  std::string write_my_chunks() {
    std::map<Vec, std::vector<const Inner*>> by_shard;
    for (const auto& c : mine_) by_shard[c.shard].push_back(&c);
    std::vector<std::pair<Vec, std::vector<const Inner*>>> work(by_shard.begin(), by_shard.end());
    return parallel_for(work.size(), threads_, [&](std::size_t i) {
      const auto& [shard, chunks] = work[i];
      const fs::path tmp = tmp_of(path_of(shard));
      const int fd = ::open(tmp.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) throw IoError("cannot open " + tmp.string() + ": " + std::strerror(errno));
      Fd closer{fd};
      const FileLayout f = layout_of(shard);
      for (const Inner* c : chunks)
        detail::write_at(fd, tmp, c->bytes.bytes, f.index[2 * static_cast<std::size_t>(c->k)], o_.durable);
      if (o_.durable && ::fsync(fd) != 0) throw IoError("cannot fsync " + tmp.string() + ": " + std::strerror(errno));
    });
  }

  std::string rename_owned_files() {
    return parallel_for(owned_.size(), threads_, [&](std::size_t i) {
      const fs::path p = path_of(owned_[i]);
      if (o_.durable) fsync_path(tmp_of(p), false);  // the index and fill chunks the owner wrote
      if (::rename(tmp_of(p).c_str(), p.c_str()) != 0)
        throw IoError("cannot rename " + tmp_of(p).string() + ": " + std::strerror(errno));
    });
  }

  static constexpr std::uint64_t kNone = ~std::uint64_t(0);
  const ShardSpec& spec_;
  const ChunkGrid shards_;
  const ChunkType inner_type_;
  const std::size_t inner_bytes_;
  std::int64_t per_shard_;
  const int threads_;
  PooledBytes zero_buf_;
  Encoded zero_;
  std::vector<Inner> mine_;
  std::vector<Vec> owned_;
  std::map<std::int64_t, std::vector<std::uint64_t>> sizes_;  // per shard (linear index): encoded sizes
  std::mutex dirs_mutex_;
};

// The store's metadata (zarr.json first: a v3 store), checked against the layout.
ZarrayMeta read_metadata(const fs::path& d, const ZarrShard& s) {
  PooledBytes text;
  ZarrayMeta m;
  if (read_file(d / "zarr.json", text)) m = parse_zarr_json(text.view());
  else if (read_file(d / ".zarray", text)) m = parse_zarray(text.view());
  else throw IoError("cannot open .zarray or zarr.json (not a Zarr array)");
  if (m.dtype != zarr_dtype(s.dtype)) throw IoError("dtype " + m.dtype + " in the store, " + zarr_dtype(s.dtype) + " requested");
  if (m.shape != s.global) throw IoError("shape " + vec_str(m.shape) + " in the store, " + vec_str(s.global) + " in the layout");
  return m;
}

// One rank's part of a load, in phases: each rank reads the chunks overlapping its own block
// (replicas too), since any number of readers may share a chunk file: no pieces travel. With
// take(), finished slabs of rows move on to the device while later chunks are still decoded.
class ZarrLoad {
 public:
  ZarrLoad(const fs::path& d, const ZarrShard& s, ZarrayMeta m)
      : d_(d), s_(s), es_(s.elem), meta_(std::move(m)), grid_(meta_.shape, meta_.chunks),
        type_{meta_.chunks, es_, dtype_swap_unit(meta_.dtype), fill_bytes(meta_, s.dtype, es_)},
        chunk_bytes_(static_cast<std::size_t>(type_.count()) * es_), block_(s.boxes[s.group.rank()]),
        my_ext_(block_.shape()), host_(static_cast<char*>(s.host)) {
    if (static_cast<double>(product(meta_.chunks)) * es_ > double(std::size_t(1) << 36))
      throw IoError("chunks " + vec_str(meta_.chunks) + " are too large to read (over 64 GiB each)");
  }

  // Returns the first failure's message, or "".
  std::string operator()() {
    plan_chunks();
    if (s_.take) return read_while_taking();
    return parallel_for(work_.size(), threads_, [this](std::size_t i) { read_chunk(i); });
  }

 private:
  // The chunks overlapping this rank's block, and the threads left to each chunk's codecs.
  void plan_chunks() {
    grid_.for_each(block_, [&](const Vec& idx) { work_.push_back(idx); });
    threads_ = io_threads(s_.group);
    inner_threads_ = detail::threads_each(threads_, work_.size());
  }

  // Chunk work_[i]'s part of this rank's block: straight into the block when the chunk is one run
  // of it and raw, else the needed inner chunks of a shard, else decoded through a buffer.
  void read_chunk(std::size_t i) {
    const Vec& idx = work_[i];
    const std::string name = chunk_key(meta_, idx);
    const fs::path p = d_ / name;
    const DynBox chunk = grid_.box(idx), part = chunk.intersect(block_);
    const bool whole = chunk.shape() == meta_.chunks && part == chunk && block_.has_run(chunk);
    // A chunk that is one run of this rank's block is read (raw) or decoded straight into it.
    char* dst = whole ? host_ + block_.offset_of(chunk.lo) * es_ : nullptr;
    if (whole && meta_.codecs.trivial() && read_exact(p, dst, chunk_bytes_)) return;
    if (reads_shard_part(whole) && read_part_of_shard(p, name, chunk, part)) return;
    decode_chunk_file(p, name, chunk, part, whole, dst);
  }

  // Part of a shard (or a whole shard of raw or of large inner chunks) is read by its index and
  // the inner chunks this rank needs, nothing else, each read and decoded on a thread of its own
  // (raw ones straight into the block): a whole shard read as one file first leaves every thread
  // but one idle until the read ends. Small encoded inner chunks of a whole shard take one read of
  // the file (a read per inner chunk would cost more).
  bool reads_shard_part(bool whole) const {
    constexpr std::int64_t kLargeInner = std::int64_t(1) << 20;  // bytes
    const auto& c = meta_.codecs;
    if (!c.shard || !c.bytes.empty() || !c.transpose.empty()) return false;
    return !whole || c.shard->codecs.trivial() || product(c.shard->inner) * static_cast<std::int64_t>(es_) >= kLargeInner;
  }

  // False if the shard's file is missing and missing chunks are allowed (they get the fill value).
  bool read_part_of_shard(const fs::path& p, const std::string& name, const DynBox& chunk, const DynBox& part) {
    try {
      if (read_shard_part(p, *meta_.codecs.shard, type_, chunk.lo, part, host_, block_, inner_threads_)) return true;
    } catch (const IoError& e) {
      throw IoError("chunk " + name + ": " + e.message());
    }
    if (s_.require_chunks) throw IoError("chunk " + name + " is missing");
    return false;
  }

  // The chunk file decoded (a missing one: the fill value) into `dst` if whole, else into a buffer
  // whose part this rank holds is copied into the block.
  void decode_chunk_file(const fs::path& p, const std::string& name, const DynBox& chunk, const DynBox& part, bool whole,
                         char* dst) {
    PooledBytes buf(whole ? 0 : chunk_bytes_), bytes;
    char* out = whole ? dst : buf.data();
    if (read_file(p, bytes)) {
      try {
        decode_chunk(meta_.codecs, bytes.view(), out, type_, inner_threads_);
      } catch (const IoError& e) {
        throw IoError("chunk " + name + ": " + e.message());
      }
    } else if (s_.require_chunks) {
      throw IoError("chunk " + name + " is missing");
    } else {
      for (std::size_t k = 0; k < chunk_bytes_; k += es_) std::memcpy(out + k, type_.fill.data(), es_);
    }
    if (!whole) copy_region(host_, block_.lo, my_ext_, buf.data(), chunk.lo, meta_.chunks, part.lo, part.hi, es_);
  }

  // The calling thread hands each slab of rows on (take: device copies stay on this thread) as
  // soon as every chunk overlapping it is decoded, while the pool decodes the rest.
  std::string read_while_taking() {
    const std::int64_t rows = work_.empty() ? 0 : my_ext_[0], per = s_.stage_rows;
    pending_.assign(static_cast<std::size_t>((rows + per - 1) / per), 0);
    for (std::size_t i = 0; i < work_.size(); ++i) for_slabs_of(i, [](int& n) { ++n; });
    std::string err;
    std::thread pool([&] {
      err = parallel_for(work_.size(), threads_, [this](std::size_t i) { read_and_count_down(i); });
    });
    const std::string take_err = take_slabs(rows, per);
    pool.join();
    return err.empty() ? take_err : err;
  }

  // Calls f(pending_[k]) for the slabs k that chunk work_[i] overlaps.
  template <class F>
  void for_slabs_of(std::size_t i, F&& f) {
    const std::int64_t per = s_.stage_rows;
    const std::int64_t r0 = std::max(grid_.lo(work_[i])[0], block_.lo[0]) - block_.lo[0];
    const std::int64_t r1 = std::min(grid_.hi(work_[i])[0], block_.hi[0]) - block_.lo[0];
    for (std::int64_t k = r0 / per; k * per < r1; ++k) f(pending_[static_cast<std::size_t>(k)]);
  }

  // Counts the chunk down in its slabs, or, when it fails, stops the taking, so that no slab
  // waits forever.
  void read_and_count_down(std::size_t i) {
    try {
      read_chunk(i);
    } catch (...) {
      chunk_done(i, false);
      throw;
    }
    chunk_done(i, true);
  }

  void chunk_done(std::size_t i, bool ok) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ok) failed_ = true;
    else for_slabs_of(i, [](int& n) { --n; });
    cv_.notify_all();
  }

  // take() on each slab in order once its chunks are in; stops at a failed chunk. Returns the
  // failure of take() itself, or "".
  std::string take_slabs(std::int64_t rows, std::int64_t per) {
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return pending_[k] == 0 || failed_; });
        if (failed_) return "";
      }
      try {
        s_.take(static_cast<std::int64_t>(k) * per, std::min(per, rows - static_cast<std::int64_t>(k) * per));
      } catch (const std::exception& e) {
        return "staging failed: " + tessera::detail::message_of(e);
      }
    }
    return "";
  }

  const fs::path d_;
  const ZarrShard& s_;
  const std::size_t es_;
  const ZarrayMeta meta_;
  const ChunkGrid grid_;
  const detail::ChunkType type_;
  const std::size_t chunk_bytes_;
  const DynBox& block_;
  const Vec my_ext_;
  char* const host_;

  std::vector<Vec> work_;  // the chunks this rank reads
  int threads_ = 1, inner_threads_ = 1;

  // take(): chunks still to decode per slab of stage_rows rows, shared with the pool.
  std::vector<int> pending_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool failed_ = false;
};

}  // namespace

void save_zarr_host(const std::string& dir, const ZarrShard& s, const Vec& chunk_shape, const ZarrWriteOptions& o) {
  ZarrayMeta meta = write_meta(s, chunk_shape, o);
  if (ShardedSave::applies(s, meta)) return ShardedSave(dir, s, std::move(meta), o)();
  ZarrSave(dir, s, std::move(meta), o)();
}

void load_zarr_host(const std::string& dir, const ZarrShard& s) {
  std::string err;
  try {
    const fs::path d(dir);
    err = ZarrLoad(d, s, read_metadata(d, s))();
  } catch (const std::exception& e) {
    err = tessera::detail::message_of(e);
  }
  s.group.agree<IoError>(err.empty() ? err : "load_zarr: " + dir + ": " + err);
}

}  // namespace detail

namespace {
template <class T, int R>
detail::ZarrShard make_shard(const distributed::Layout<R>& l, void* host) {
  detail::ZarrShard s{l.grid().group(), dtype_v<T>, sizeof(T), {}, {}, {}, host};
  s.global.assign(l.global_shape().begin(), l.global_shape().end());
  const int n = l.grid().size();
  for (int r = 0; r < n; ++r) {
    const auto b = l.local_box(r);
    s.boxes.emplace_back(b);
    s.canonical.push_back(!b.empty() && l.owner(b.lo) == r);
  }
  return s;
}
}  // namespace

template <class T, int R>
void save_zarr(const std::string& dir, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
               const ZarrWriteOptions& o) {
  const auto agreed = distributed::check_call<T, R>("save_zarr", a.layout(), a.device(), "dir", dir, "chunks",
                                                    local::shape_str(chunks), "format", o.format, "durable", o.durable);
  a.stream().synchronize();  // work queued on an adopted stream finishes before the copy
  const auto in = a.interior();
  const auto shape = a.layout().local_shape();
  void* host = in.data();
  std::shared_ptr<PinnedBuffer> block;
  local::Array<T, R> packed;  // a device shard with halos, packed on the device first
  const local::Array<T, R>* src = &in;
  if (!(a.device().is_host() && in.is_contiguous())) {  // staged through pinned memory, by slabs
    block = take_pinned(sizeof(T) * static_cast<std::size_t>(local::shape_size(shape)));
    host = block->data();
    if (!a.device().is_host() && !in.is_contiguous()) {
      packed = local::Array<T, R>(shape, a.device());
      local::copy(packed, in);
      src = &packed;
    }
  }
  auto s = make_shard<T, R>(a.layout(), host);
  if (host != in.data()) {
    using local::index_t;
    const index_t row = local::shape_size(shape) / std::max<index_t>(1, shape[0]);  // elements per leading-axis row
    s.stage_rows = std::max<index_t>(1, static_cast<index_t>(detail::zarr_stage_bytes()) / std::max<index_t>(1, row * index_t(sizeof(T))));
    s.stage = [&, row](std::int64_t row0, std::int64_t rows) {
      auto slab = shape;
      slab[0] = rows;
      local::copy(local::Array<T, R>::view(static_cast<T*>(host) + row0 * row, slab, Device::host()), src->slice(0, row0, row0 + rows));
    };
  }
  detail::save_zarr_host(dir, s, Vec(chunks.begin(), chunks.end()), o);
}

template <class T, int R>
distributed::Array<T, R> load_zarr(const std::string& dir, const distributed::Layout<R>& layout, Device d,
                                   const ZarrReadOptions& o) {
  const auto agreed = distributed::check_call<T, R>("load_zarr", layout, d, "dir", dir, "require_chunks", o.require_chunks);
  distributed::Array<T, R> a(layout, d);
  const auto in = a.interior();
  const auto shape = layout.local_shape();
  const bool direct = d.is_host() && in.is_contiguous();
  const auto block = direct ? nullptr : take_pinned(sizeof(T) * static_cast<std::size_t>(local::shape_size(shape)));
  void* host = direct ? static_cast<void*>(in.data()) : block->data();
  auto s = make_shard<T, R>(layout, host);
  s.require_chunks = o.require_chunks;
  local::Array<T, R> packed;  // a device shard with halos: slabs go to a packed copy first
  if (!d.is_host() && !in.is_contiguous()) packed = local::Array<T, R>(shape, d);
  const local::Array<T, R>& dst = packed.data() ? packed : in;
  if (!direct) {
    using local::index_t;
    const index_t row = local::shape_size(shape) / std::max<index_t>(1, shape[0]);
    s.stage_rows = std::max<index_t>(1, static_cast<index_t>(detail::zarr_stage_bytes()) / std::max<index_t>(1, row * index_t(sizeof(T))));
    s.take = [&, row](std::int64_t row0, std::int64_t rows) {
      auto slab = shape;
      slab[0] = rows;
      local::copy(dst.slice(0, row0, row0 + rows), local::Array<T, R>::view(static_cast<T*>(host) + row0 * row, slab, Device::host()));
    };
  }
  detail::load_zarr_host(dir, s);
  if (packed.data()) local::copy(in, packed);
  a.stream().synchronize();  // the staging buffer is reused by the next call
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
