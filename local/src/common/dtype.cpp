#include "tessera/local/dtype.hpp"

#include "tessera/local/error.hpp"

namespace tessera {
std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::boolean: return sizeof(bool);
    case DType::int32: return 4;
    case DType::int64: return 8;
    case DType::float32: return 4;
    case DType::float64: return 8;
    case DType::complex64: return 8;
    case DType::complex128: return 16;
  }
  throw InvalidArgument("unknown dtype " + std::to_string(static_cast<int>(t)));
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::boolean: return "bool";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::complex64: return "complex64";
    case DType::complex128: return "complex128";
  }
  throw InvalidArgument("unknown dtype " + std::to_string(static_cast<int>(t)));
}
}  // namespace tessera
