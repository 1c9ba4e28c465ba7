// Checkpoints: several named distributed arrays plus metadata (step, time, string key/values),
// replaced atomically on disk and restorable on any rank count, layout and device. Built on the
// public save_zarr/load_zarr (durable writes; reads that require every chunk).
//
//   io::CheckpointWriter w("run/ckpt", group);   // collective; writes into run/ckpt.tmp-<id>
//   w.set_step(step);  w.set_time(t);  w.set("scheme", "rk4");
//   w.add("u", u);  w.add("phi", phi, io::Compressor::zlib);   // collective, one Zarr store each
//   w.add("rho", rho, {64, 64, 64}, {.codec = io::Codec::make_blosc(io::BloscCodec::zstd, 3), .shard = {256, 256, 256}});
//   w.commit();                                   // collective; run/ckpt now holds this checkpoint
//   io::CheckpointReader r("run/ckpt", other_group);             // any group, any size
//   auto u2 = r.load<double, 3>("u", other_layout, Device::cuda(0));
//
// On disk, <dir> is a Zarr group (v3 by default: zarr.json; set_format(2): .zgroup + .zattrs) of
// one array per field (<dir>/<name>/), which zarr-python and tensorstore open; the group's
// attributes hold the format, version, step, time, the string attributes and each field's dtype,
// shape and chunks, and are written last. Atomicity: the writer's ranks fill <dir>.tmp-<id>; every
// file is fsynced by the rank that wrote it; commit() writes the group metadata, fsyncs the directories, renames an
// existing <dir> to <dir>.old, renames the temporary directory to <dir>, fsyncs the parent and
// removes <dir>.old (and leftovers <dir>.tmp-* of interrupted writes). A crash at any point
// leaves a complete checkpoint: the previous <dir> (a crash before the first rename), or
// <dir>.old (between the renames: the reader falls back to it when <dir> is missing).
//
// add and load exist for the 7 element types and ranks 1-4 (as save_zarr/load_zarr).
//
// Errors are collective: an unreadable, missing, truncated or corrupt file, a missing field or
// a dtype/shape other than the one asked for throws IoError naming the path on every rank of
// the group (no rank hangs); a returned array is always complete.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/array.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/io/error.hpp"
#include "tessera/io/zarr.hpp"

namespace tessera::io {

/// What the checkpoint's attributes say of one field.
struct CheckpointField {
  std::string name;
  std::string dtype;                 // zarr dtype ("<f8", "<c8", ...)
  std::vector<std::int64_t> shape;   // global shape
  std::vector<std::int64_t> chunks;  // Zarr chunk shape
};

/// How add() writes one field: its codec (any save_zarr takes: Blosc and its parameters, levels)
/// and, in Zarr format 3, its shards.
struct CheckpointFieldOptions {
  Codec codec = Compressor::none;
  /// The shard shape (a multiple of the chunk shape along every axis): one file per shard of
  /// many chunks (sharding_indexed, as ZarrWriteOptions::shard). Empty: one file per chunk.
  std::vector<std::int64_t> shard;
};

/// Writes a checkpoint, replacing `dir` atomically at commit() (see above).
class CheckpointWriter {
 public:
  /// Collective over `group`: rank 0 creates `dir`.tmp-<id> (and `dir`'s parents). `dir` must be
  /// missing, empty or a checkpoint (anything else is not replaced: IoError at commit).
  CheckpointWriter(std::string dir, comm::ProcessGroup group);
  /// Without commit(), rank 0 removes the temporary directory (a previous checkpoint is untouched).
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Metadata (local calls; give every rank the same values: rank 0's are written).
  /// The step number written to the group's attributes.
  void set_step(std::int64_t step) { step_ = step; }
  /// The simulated time written to the group's attributes.
  void set_time(double time) { time_ = time; }
  /// A string attribute written to the group's attributes.
  void set(const std::string& key, std::string value) { attrs_[key] = std::move(value); }
  /// The Zarr format of the group and its arrays (3, the default, or 2); before add().
  void set_format(int format) {
    if (format != 2 && format != 3) throw InvalidArgument("checkpoint: Zarr format 2 or 3, not " + std::to_string(format));
    format_ = format;
  }

  /// Writes `a` (interior) as field `name` now, so `a` may change afterwards. Collective over the
  /// writer's group, which must be a's grid group (same ranks, same order). Names: letters,
  /// digits, '_', '-', '.', not starting with '.'; each once. The chunk shape is the largest
  /// block any rank holds, halved along its longest axis while over 64 MiB. `c`: a Codec or a
  /// Compressor (at its default level), as save_zarr takes.
  template <class T, int R>
  void add(const std::string& name, const distributed::Array<T, R>& a, const Codec& c = Compressor::none);
  /// The same with an explicit Zarr chunk shape.
  template <class T, int R>
  void add(const std::string& name, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
           const Codec& c = Compressor::none);
  /// The same with a codec and shards (format 3; InvalidArgument after set_format(2)).
  template <class T, int R>
  void add(const std::string& name, const distributed::Array<T, R>& a, std::type_identity_t<distributed::Index<R>> chunks,
           const CheckpointFieldOptions& options);

  /// Collective: makes the checkpoint durable and visible at `dir` (see above). Once only.
  void commit();

  /// The checkpoint's directory.
  const std::string& path() const noexcept { return dir_; }
  /// The temporary directory the fields are written into until commit().
  const std::string& temp_path() const noexcept { return tmp_; }

 private:
  // Checks the name and that `array_group` is the writer's group (agreed over the group).
  void begin_field(const std::string& name, const comm::ProcessGroup& array_group);

  std::string dir_, tmp_;
  comm::ProcessGroup group_;
  std::int64_t step_ = 0;
  double time_ = 0;
  int format_ = 3;
  std::map<std::string, std::string> attrs_;
  std::vector<CheckpointField> fields_;
  bool committed_ = false;
};

/// Reads a checkpoint, on any group, layouts and devices.
class CheckpointReader {
 public:
  /// Collective over `group` (any ranks: not necessarily the writer's): rank 0 finds the
  /// checkpoint (`dir`, or `dir`.old if `dir` is missing after a crash between the renames) and
  /// reads the group's attributes; every rank parses the same bytes.
  CheckpointReader(std::string dir, comm::ProcessGroup group);

  /// The step written by the writer.
  std::int64_t step() const noexcept { return step_; }
  /// The time written by the writer.
  double time() const noexcept { return time_; }
  /// The value of attribute `key`; IoError (on every rank) if there is none.
  const std::string& get(const std::string& key) const;
  /// Whether attribute `key` was written.
  bool has(const std::string& key) const { return attrs_.count(key) > 0; }
  /// Every attribute.
  const std::map<std::string, std::string>& attributes() const noexcept { return attrs_; }
  /// Field names in the order they were added.
  std::vector<std::string> names() const;
  /// A field's description (IoError if missing).
  const CheckpointField& field(const std::string& name) const;
  /// The directory read: `dir`, or `dir`.old after an interrupted replacement.
  const std::string& path() const noexcept { return path_; }

  /// Reads field `name` into a new array of `layout` on `d` (halos not filled). Collective over
  /// the layout's group; IoError if the field is missing, its dtype is not T's or its shape is
  /// not the layout's global shape, or a file is missing, truncated or corrupt.
  template <class T, int R>
  distributed::Array<T, R> load(const std::string& name, const distributed::Layout<R>& layout, Device d) const {
    check_field(name, zarr_dtype(dtype_v<T>), std::vector<std::int64_t>(layout.global_shape().begin(), layout.global_shape().end()));
    // Every chunk of a checkpoint was written: a missing one is damage, not the fill value.
    return load_zarr<T, R>(path_ + "/" + name, layout, d, ZarrReadOptions{.require_chunks = true});
  }

 private:
  void check_field(const std::string& name, const std::string& dtype, const std::vector<std::int64_t>& shape) const;

  std::string dir_, path_;
  std::int64_t step_ = 0;
  double time_ = 0;
  std::map<std::string, std::string> attrs_;
  std::vector<CheckpointField> fields_;
};

}  // namespace tessera::io
