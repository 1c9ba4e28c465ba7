// The runtime expression IR of the kernel compiler: one fused elementwise expression as a list of
// typed nodes (operands before their users, the root last). Every front end lowers to it — the
// C++ expression templates of plain C++ translation units (jit/lower.hpp, a compile-time walk of
// the tree) and, at run time, other languages — and one code generator (generate_cuda) turns it
// into CUDA source that NVRTC compiles (jit/compiler.hpp). The IR holds structure and types only:
// pointers, strides, sizes and scalar values are kernel arguments, so that one kernel serves every
// size (ArrayFire's and CuPy's model).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/local/dtype.hpp"

namespace tessera::local::jit {

/// Node operations. Unary and binary ones evaluate as the C++ expression tree's (expr/tree.hpp).
enum class Op : std::uint8_t {
  load,    // operand `slot`: an array (pointer + strides)
  scalar,  // scalar argument `slot`
  neg, logical_not, abs, sqrt, exp, log, sin, cos, tan, tanh, real, imag, conj, cast,
  add, sub, mul, div, eq, ne, lt, le, gt, ge, logical_and, logical_or, minimum, maximum, pow,
  rsqrt, expm1, log1p, sinh, cosh, asin, acos, atan, floor, ceil, round, arg, atan2,
  where,  // a ? b : c (a is the condition)
  // NumPy's floor_divide and remainder (integers and reals), isnan/isinf/isfinite (bool results),
  // sign, square, reciprocal, log2, log10, exp2, cbrt, logical_xor, positive.
  floor_divide, remainder, isnan, isinf, isfinite, sign, square, reciprocal, log2, log10, exp2, cbrt,
  logical_xor, positive,
};

/// "add", "sin", ...; the number of node operands (0 for load and scalar, 3 for where).
const char* op_name(Op op);
int op_arity(Op op);

/// One node: its operation, its element type and its operands (indices of earlier nodes).
struct Node {
  Op op = Op::load;
  DType type = DType::float32;
  int a = -1, b = -1, c = -1;
  int slot = -1;  // load: operand index; scalar: scalar index
};

/// A fused assignment `out = nodes.back()` over `rank` dimensions.
struct Kernel {
  std::vector<Node> nodes;
  DType out = DType::float32;
  int rank = 1;
  bool linear = true;    // every operand contiguous and of the output's shape: flat indexing
  bool index32 = false;  // flat and multi-index arithmetic in 32 bits (fewer than 2^31 elements)

  /// Operand and scalar counts (loads' and scalars' slots are 0..count-1).
  int operands() const;
  int scalars() const;
  /// A string that identifies the generated kernel: structure, types, rank, path.
  std::string key() const;
  /// Elements per thread of the linear path: 1 where the output and every load are 8 bytes or
  /// wider or there are more than 4 loads, else 4 (the nvcc executor's kLinearUnroll).
  int unroll() const;
  /// Throws InvalidArgument for operands out of order, a bad slot, a type the op cannot take.
  void validate() const;
};

/// numpy's result type of a binary arithmetic operation on two element types.
DType promote(DType a, DType b);
/// CUDA spelling of an element type in generated code (cuda::std::complex for complex types).
std::string cuda_type(DType t);

/// The CUDA C++ source of `k` as an extern "C" kernel called `name`. Parameters: the output
/// pointer, the element count n, (strided: the shape and the output's strides as Dims), then per
/// operand its pointer (and strided: its strides, 0 where it broadcasts), then the scalars.
std::string generate_cuda(const Kernel& k, const std::string& name);

}  // namespace tessera::local::jit
