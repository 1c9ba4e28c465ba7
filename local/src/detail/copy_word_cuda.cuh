// Kernels that only move elements (the tiled and row copies) move them as a plain word of the
// element's size: one load and one store per element of any type of 1-16 bytes. nvcc only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace tessera::local::detail {
template <class T>
using copy_word_t =
    std::conditional_t<sizeof(T) == 16, double2,
                       std::conditional_t<sizeof(T) == 8, std::uint64_t,
                                          std::conditional_t<sizeof(T) == 4, std::uint32_t,
                                                             std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>>;
}  // namespace tessera::local::detail
