// The type-erased half of save_zarr/load_zarr (zarr.cpp): one rank's block as a contiguous host
// buffer plus every rank's block, written to or read from a Zarr v2 or v3 directory store.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/comm/process_group.hpp"
#include "tessera/distributed/box.hpp"
#include "tessera/io/zarr.hpp"
#include "tessera/local/dtype.hpp"

namespace tessera::io::detail {

struct ZarrShard {
  comm::ProcessGroup group;
  DType dtype;
  std::size_t elem = 0;
  std::vector<std::int64_t> global;
  std::vector<distributed::DynBox> boxes;  // per rank
  std::vector<char> canonical;  // rank's block is the one Layout::owner names (not a replica)
  void* host = nullptr;         // this rank's block, contiguous, row-major
  // save: when set, `host` fills by stage(row0, rows) calls (slabs of the leading axis, in order,
  // on the calling thread: device copies stay there) that overlap the encoding of ready chunks.
  std::function<void(std::int64_t row0, std::int64_t rows)> stage;
  // load: when set, take(row0, rows) moves complete slabs of `host` on (same thread, in order)
  // while the other chunks are still decoded.
  std::function<void(std::int64_t row0, std::int64_t rows)> take;
  std::int64_t stage_rows = 1;  // leading-axis rows per stage() / take() call
  bool require_chunks = false;  // load: a missing chunk file is an IoError, not the fill value
};
void save_zarr_host(const std::string& dir, const ZarrShard& s, const std::vector<std::int64_t>& chunks,
                    const ZarrWriteOptions& o);
void load_zarr_host(const std::string& dir, const ZarrShard& s);
// Bytes staged per stage() call (default 64 MiB, at least one row); tests shrink it.
void set_zarr_stage_bytes(std::size_t bytes);
std::size_t zarr_stage_bytes();

}  // namespace tessera::io::detail
