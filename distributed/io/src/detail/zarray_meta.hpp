// The `.zarray` document of a Zarr v2 array: parsing and validation. A pure function with no MPI
// or CUDA dependency (zarr.cpp does the parallel I/O; tests/fuzz fuzzes the parser).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/io/error.hpp"

namespace tessera::io {

// The parts of a `.zarray` document that loading needs.
struct ZarrayMeta {
  std::vector<std::int64_t> shape, chunks;
  std::string dtype;                      // e.g. "<f8", "|b1"
  std::optional<std::string> compressor;  // codec id ("zlib"); nullopt for null
  int level = -1;                         // compressor level if given
  double fill_real = 0, fill_imag = 0;    // fill value (null reads as 0)
  char order = 'C';
  char separator = '.';                   // dimension_separator
};

// Parses and validates a `.zarray` document (strict JSON). Throws IoError describing the problem
// (bad JSON, missing or mistyped keys, zarr_format != 2, filters not null, shape/chunks mismatch,
// chunks whose element count overflows).
ZarrayMeta parse_zarray(std::string_view json);

}  // namespace tessera::io
