// Files in the C API: .npy, Zarr and checkpoints, loaded into the caller's existing arrays.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

#include "handles.hpp"

using namespace tessera;
using namespace tessera::capi;

namespace {

struct WriterObj : Object {
  std::unique_ptr<io::CheckpointWriter> w;
};
struct ReaderObj : Object {
  std::unique_ptr<io::CheckpointReader> r;
};

std::string path_arg(const char* p, const char* what) {
  need(p, what);
  if (!*p) throw InvalidArgument(std::string(what) + " is empty");
  return p;
}

// Copies a freshly loaded array into the caller's array (its interior), in its stream order.
template <class T, int R>
void fill_from(ArrayBase& dst, const distributed::Array<T, R>& loaded) {
  before(dst);
  local::copy(typed<T, R>(dst).interior(), loaded.interior());
  after(dst);
}

// The largest block any rank holds: a chunk shape that is the same on every rank.
template <int R>
distributed::Index<R> largest_block(const distributed::Layout<R>& l) {
  distributed::Index<R> c{};
  for (int a = 0; a < R; ++a) {
    const auto& o = l.offsets(a);
    for (std::size_t i = 1; i < o.size(); ++i) c[a] = std::max(c[a], o[i] - o[i - 1]);
    c[a] = std::max<local::index_t>(c[a], 1);
  }
  return c;
}

// The codec named `name` (tessera_save_zarr_ex's names) at `level` (-1: the codec's default).
io::Codec codec_named(const char* name, int level) {
  const std::string n = name ? name : "none";
  static const std::pair<const char*, io::BloscCodec> blosc[] = {{"lz4", io::BloscCodec::lz4},
                                                                 {"lz4hc", io::BloscCodec::lz4hc},
                                                                 {"blosclz", io::BloscCodec::blosclz},
                                                                 {"zstd", io::BloscCodec::zstd},
                                                                 {"zlib", io::BloscCodec::zlib}};
  io::Codec c;
  if (n == "none") c = io::Compressor::none;
  else if (n == "zlib") c = io::Compressor::zlib;
  else if (n == "gzip") c = io::Compressor::gzip;
  else if (n == "zstd") c = io::Compressor::zstd;
  else if (n != "blosc") {
    const auto* b = std::find_if(std::begin(blosc), std::end(blosc), [&](const auto& e) { return n == std::string("blosc-") + e.first; });
    if (b == std::end(blosc))
      throw InvalidArgument("codec '" + n + "': none, zlib, gzip, zstd, blosc, blosc-lz4, blosc-lz4hc, blosc-blosclz, "
                            "blosc-zstd or blosc-zlib");
    c = io::Codec::make_blosc(b->second);
  }
  if (level == -1 || c.id == io::Compressor::none) return c;
  const int most = c.id == io::Compressor::zstd ? 22 : 9, least = c.id == io::Compressor::zstd ? 1 : 0;
  if (level < least || level > most)
    throw InvalidArgument("level " + std::to_string(level) + " of codec '" + n + "' outside " + std::to_string(least) +
                          ".." + std::to_string(most) + " (-1: its default)");
  c.level = level;
  return c;
}

// R extents from `v` (each >= 1), named `what` in errors.
template <int R>
distributed::Index<R> extents_arg(const int64_t* v, const char* what) {
  distributed::Index<R> c{};
  for (int i = 0; i < R; ++i) {
    if (v[i] < 1) throw InvalidArgument(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) + " must be >= 1");
    c[i] = v[i];
  }
  return c;
}

void save_zarr(tessera_array h, const char* dir, const int64_t* chunks, const int64_t* shard, io::ZarrWriteOptions o) {
  auto a = get_array(h, "a");
  const auto p = path_arg(dir, "dir");
  dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
    const auto& arr = typed<T, R>(*a);
    const distributed::Index<R> c = chunks ? extents_arg<R>(chunks, "chunks") : largest_block(arr.layout());
    if (shard) {
      const auto s = extents_arg<R>(shard, "shard");
      o.shard.assign(s.begin(), s.end());
    }
    io::save_zarr<T, R>(p, arr, c, o);
  });
}

}  // namespace

extern "C" {

tessera_status tessera_save_npy(tessera_array h, const char* path) {
  return guard("tessera_save_npy", [&] {
    auto a = get_array(h, "a");
    const auto p = path_arg(path, "path");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() { io::save_npy(p, typed<T, R>(*a)); });
  });
}

tessera_status tessera_load_npy(tessera_array h, const char* path) {
  return guard("tessera_load_npy", [&] {
    auto a = get_array(h, "a");
    const auto p = path_arg(path, "path");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      fill_from(*a, io::load_npy<T, R>(p, typed<T, R>(*a).layout(), a->device));
    });
  });
}

tessera_status tessera_save_zarr(tessera_array h, const char* dir, const int64_t* chunks, int zlib) {
  return guard("tessera_save_zarr", [&] {
    save_zarr(h, dir, chunks, nullptr, io::ZarrWriteOptions{zlib ? io::Compressor::zlib : io::Compressor::none});
  });
}

tessera_status tessera_save_zarr_ex(tessera_array h, const char* dir, const int64_t* chunks, int format,
                                    const char* codec, int level, const int64_t* shard, int durable) {
  return guard("tessera_save_zarr_ex", [&] {
    io::ZarrWriteOptions o{codec_named(codec, level)};
    o.format = format, o.durable = durable != 0;
    save_zarr(h, dir, chunks, shard, o);
  });
}

tessera_status tessera_load_zarr(tessera_array h, const char* dir) {
  return guard("tessera_load_zarr", [&] {
    auto a = get_array(h, "a");
    const auto p = path_arg(dir, "dir");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      fill_from(*a, io::load_zarr<T, R>(p, typed<T, R>(*a).layout(), a->device));
    });
  });
}

tessera_status tessera_save_hdf5(tessera_array h, const char* path, const char* name, const int64_t* chunks,
                                int deflate) {
  return guard("tessera_save_hdf5", [&] {
    auto a = get_array(h, "a");
    const auto p = path_arg(path, "path");
    const auto n = path_arg(name, "name");
#if TESSERA_HAVE_HDF5
    if (deflate < 0 || deflate > 9) throw InvalidArgument("deflate " + std::to_string(deflate) + " outside 0..9");
    io::Hdf5WriteOptions o;
    if (chunks) o.chunks.assign(chunks, chunks + a->ndim);
    o.deflate = deflate;
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() { io::save_hdf5<T, R>(p, n, typed<T, R>(*a), o); });
#else
    (void)chunks, (void)deflate;
    throw BackendUnavailable("tessera_save_hdf5: " + p + ": this build has no parallel HDF5");
#endif
  });
}

tessera_status tessera_write_xdmf(const char* xmf, const char* h5, const char* name, int ndim, const int64_t* shape,
                                 tessera_dtype dtype, double spacing) {
  return guard("tessera_write_xdmf", [&] {
    const auto x = path_arg(xmf, "xmf"), f = path_arg(h5, "h5"), n = path_arg(name, "name");
    need(shape, "shape");
    if (ndim < 1 || ndim > TESSERA_MAX_RANK) throw InvalidArgument("ndim " + std::to_string(ndim) + " is not 1-4");
    io::write_xdmf(x, f, n, std::vector<std::int64_t>(shape, shape + ndim), value_of_dtype(dtype), spacing);
  });
}

tessera_status tessera_load_hdf5(tessera_array h, const char* path, const char* name) {
  return guard("tessera_load_hdf5", [&] {
    auto a = get_array(h, "a");
    const auto p = path_arg(path, "path");
    const auto n = path_arg(name, "name");
#if TESSERA_HAVE_HDF5
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      fill_from(*a, io::load_hdf5<T, R>(p, n, typed<T, R>(*a).layout(), a->device));
    });
#else
    throw BackendUnavailable("tessera_load_hdf5: " + p + ": this build has no parallel HDF5");
#endif
  });
}

tessera_status tessera_checkpoint_writer_create(tessera_grid g, const char* dir, tessera_checkpoint_writer* out) {
  return guard("tessera_checkpoint_writer_create", [&] {
    need(out, "out");
    const auto& grid = get<GridObj>(Kind::grid, g.id, "grid")->grid;
    auto w = std::make_shared<WriterObj>();
    w->w = std::make_unique<io::CheckpointWriter>(path_arg(dir, "dir"), grid.group());
    out->id = put(Kind::writer, w);
  });
}

tessera_status tessera_checkpoint_set_step(tessera_checkpoint_writer w, int64_t step) {
  return guard("tessera_checkpoint_set_step", [&] { get<WriterObj>(Kind::writer, w.id, "w")->w->set_step(step); });
}
tessera_status tessera_checkpoint_set_time(tessera_checkpoint_writer w, double time) {
  return guard("tessera_checkpoint_set_time", [&] { get<WriterObj>(Kind::writer, w.id, "w")->w->set_time(time); });
}
tessera_status tessera_checkpoint_set_attribute(tessera_checkpoint_writer w, const char* key, const char* value) {
  return guard("tessera_checkpoint_set_attribute", [&] {
    auto obj = get<WriterObj>(Kind::writer, w.id, "w");
    need(value, "value");
    obj->w->set(path_arg(key, "key"), value);
  });
}

tessera_status tessera_checkpoint_add(tessera_checkpoint_writer w, const char* name, tessera_array h) {
  return guard("tessera_checkpoint_add", [&] {
    auto obj = get<WriterObj>(Kind::writer, w.id, "w");
    auto a = get_array(h, "a");
    const auto n = path_arg(name, "name");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() { obj->w->add(n, typed<T, R>(*a)); });
  });
}

tessera_status tessera_checkpoint_commit(tessera_checkpoint_writer w) {
  return guard("tessera_checkpoint_commit", [&] { get<WriterObj>(Kind::writer, w.id, "w")->w->commit(); });
}

tessera_status tessera_checkpoint_writer_free(tessera_checkpoint_writer w) {
  return guard("tessera_checkpoint_writer_free", [&] { take(Kind::writer, w.id, "w"); });
}

tessera_status tessera_checkpoint_reader_create(tessera_grid g, const char* dir, tessera_checkpoint_reader* out) {
  return guard("tessera_checkpoint_reader_create", [&] {
    need(out, "out");
    const auto& grid = get<GridObj>(Kind::grid, g.id, "grid")->grid;
    auto r = std::make_shared<ReaderObj>();
    r->r = std::make_unique<io::CheckpointReader>(path_arg(dir, "dir"), grid.group());
    out->id = put(Kind::reader, r);
  });
}

tessera_status tessera_checkpoint_info(tessera_checkpoint_reader r, int64_t* step, double* time) {
  return guard("tessera_checkpoint_info", [&] {
    auto obj = get<ReaderObj>(Kind::reader, r.id, "r");
    if (step) *step = obj->r->step();
    if (time) *time = obj->r->time();
  });
}

tessera_status tessera_checkpoint_get_attribute(tessera_checkpoint_reader r, const char* key, char* buf, size_t len) {
  return guard("tessera_checkpoint_get_attribute", [&] {
    auto obj = get<ReaderObj>(Kind::reader, r.id, "r");
    need(buf, "buf");
    if (len == 0) throw InvalidArgument("len is 0");
    const std::string& v = obj->r->get(path_arg(key, "key"));
    const std::size_t n = std::min(len - 1, v.size());
    std::memcpy(buf, v.data(), n);
    buf[n] = '\0';
  });
}

tessera_status tessera_checkpoint_load(tessera_checkpoint_reader r, const char* name, tessera_array h) {
  return guard("tessera_checkpoint_load", [&] {
    auto obj = get<ReaderObj>(Kind::reader, r.id, "r");
    auto a = get_array(h, "a");
    const auto n = path_arg(name, "name");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      fill_from(*a, obj->r->load<T, R>(n, typed<T, R>(*a).layout(), a->device));
    });
  });
}

tessera_status tessera_checkpoint_reader_free(tessera_checkpoint_reader r) {
  return guard("tessera_checkpoint_reader_free", [&] { take(Kind::reader, r.id, "r"); });
}

}  // extern "C"
