// The .npy header: parsing, writing and the descr of each element type. Pure functions with no
// MPI or CUDA dependency (npy.cpp does the parallel I/O; tests/fuzz fuzzes the parser).
#pragma once
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessera/io/error.hpp"

namespace tessera::io {

// The dictionary of a .npy header; data_offset is where the array's bytes begin.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0;
};

// Parses a .npy header (format 1.0, 2.0 or 3.0) from the file's first bytes (at least the whole
// header). Strict: anything but the magic, a supported version, a dict of exactly 'descr',
// 'fortran_order' and 'shape' and padding is an IoError.
NpyHeader parse_npy_header(std::string_view bytes);
// The header bytes for `descr` and `shape` (C order), padded so the data starts at a multiple of 64.
std::string make_npy_header(const std::string& descr, const std::vector<std::int64_t>& shape);

// The numpy descr of T ('<f4', '<f8', '<i4', '<i8', '|b1', '<c8', '<c16').
template <class T> constexpr const char* npy_descr() {
  if constexpr (std::is_same_v<T, bool>) return "|b1";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "<i4";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "<i8";
  else if constexpr (std::is_same_v<T, float>) return "<f4";
  else if constexpr (std::is_same_v<T, double>) return "<f8";
  else if constexpr (std::is_same_v<T, std::complex<float>>) return "<c8";
  else if constexpr (std::is_same_v<T, std::complex<double>>) return "<c16";
  else static_assert(sizeof(T) == 0, "npy I/O supports bool, int32, int64, float, double, complex64, complex128");
}

}  // namespace tessera::io
