// The kernel compiler's IR (jit/ir.hpp): validation, keys, numpy promotion and the CUDA code
// generator. The generated kernels have the shapes of the nvcc executor (expr/cuda_executor.cuh)
// and evaluate each operation as expr/tree.hpp does, so that both executors agree bit for bit.
#include "tessera/local/jit/ir.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "tessera/local/error.hpp"

namespace tessera::local::jit {

namespace {
struct OpInfo {
  const char* name;
  int arity;
  const char* code;  // how the generated source applies it to x (, y)
};
// Indexed by Op. The spellings are tree.hpp's, with xm = cuda::std and its helpers in tj::.
constexpr OpInfo kOps[] = {
    {"load", 0, ""},
    {"scalar", 0, ""},
    {"neg", 1, "-x"},
    {"logical_not", 1, "!bool(x)"},
    {"abs", 1, "cuda::std::abs(x)"},
    {"sqrt", 1, "cuda::std::sqrt(x)"},
    {"exp", 1, "cuda::std::exp(x)"},
    {"log", 1, "cuda::std::log(x)"},
    {"sin", 1, "cuda::std::sin(x)"},
    {"cos", 1, "cuda::std::cos(x)"},
    {"tan", 1, "cuda::std::tan(x)"},
    {"tanh", 1, "cuda::std::tanh(x)"},
    {"real", 1, "tj::real(x)"},
    {"imag", 1, "tj::imag(x)"},
    {"conj", 1, "tj::conj(x)"},
    {"cast", 1, ""},
    {"add", 2, "x + y"},
    {"sub", 2, "x - y"},
    {"mul", 2, "tj::mul(x, y)"},
    {"div", 2, "x / y"},
    {"==", 2, "bool(x == y)"},
    {"!=", 2, "bool(x != y)"},
    {"<", 2, "bool(x < y)"},
    {"<=", 2, "bool(x <= y)"},
    {">", 2, "bool(x > y)"},
    {">=", 2, "bool(x >= y)"},
    {"logical_and", 2, "bool(x) && bool(y)"},
    {"logical_or", 2, "bool(x) || bool(y)"},
    {"minimum", 2, "(y < x ? y : x)"},
    {"maximum", 2, "(x < y ? y : x)"},
    {"pow", 2, "cuda::std::pow(x, y)"},
    {"rsqrt", 1, "tj::rsqrt(x)"},
    {"expm1", 1, "cuda::std::expm1(x)"},
    {"log1p", 1, "cuda::std::log1p(x)"},
    {"sinh", 1, "cuda::std::sinh(x)"},
    {"cosh", 1, "cuda::std::cosh(x)"},
    {"asin", 1, "cuda::std::asin(x)"},
    {"acos", 1, "cuda::std::acos(x)"},
    {"atan", 1, "cuda::std::atan(x)"},
    {"floor", 1, "cuda::std::floor(x)"},
    {"ceil", 1, "cuda::std::ceil(x)"},
    {"round", 1, "cuda::std::rint(x)"},
    {"arg", 1, "cuda::std::arg(x)"},
    {"arctan2", 2, "cuda::std::atan2(x, y)"},
    {"where", 3, ""},
    {"floor_divide", 2, "tj::floordiv(x, y)"},
    {"remainder", 2, "tj::remainder(x, y)"},
    {"isnan", 1, "bool(x != x)"},
    {"isinf", 1, "tj::isinf(x)"},
    {"isfinite", 1, "tj::isfinite(x)"},
    {"sign", 1, "tj::sign(x)"},
    {"square", 1, "tj::mul(x, x)"},
    {"reciprocal", 1, "tj::recip(x)"},
    {"log2", 1, "cuda::std::log2(x)"},
    {"log10", 1, "cuda::std::log10(x)"},
    {"exp2", 1, "cuda::std::exp2(x)"},
    {"cbrt", 1, "cuda::std::cbrt(x)"},
    {"logical_xor", 2, "bool(bool(x) != bool(y))"},
    {"positive", 1, "x"},
};
static_assert(std::size(kOps) == static_cast<std::size_t>(Op::positive) + 1, "kOps follows the order of Op");
const OpInfo& info(Op op) {
  const auto i = static_cast<std::size_t>(op);
  if (i >= std::size(kOps)) throw InvalidArgument("jit: unknown IR operation " + std::to_string(i));
  return kOps[i];
}

// The generated code's helpers: tree.hpp's convert, mul_values (the textbook complex product),
// real, imag and conj, over cuda::std types.
constexpr const char* kPrelude = R"(#include <cuda/std/cmath>
#include <cuda/std/complex>
#include <cuda/std/type_traits>
namespace tj {
template <class T> struct is_cplx : cuda::std::false_type {};
template <class R> struct is_cplx<cuda::std::complex<R>> : cuda::std::true_type {};
template <class To, class From> __device__ __forceinline__ To convert(const From& v) {
  if constexpr (is_cplx<From>::value && !is_cplx<To>::value) return static_cast<To>(v.real());
  else return static_cast<To>(v);
}
template <class X, class Y> __device__ __forceinline__ auto mul(const X& x, const Y& y) {
  if constexpr (is_cplx<X>::value && cuda::std::is_same<X, Y>::value)
    return X(x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real());
  else return x * y;
}
template <class X> __device__ __forceinline__ auto real(const X& x) {
  if constexpr (is_cplx<X>::value) return x.real(); else return x;
}
template <class X> __device__ __forceinline__ auto imag(const X& x) {
  if constexpr (is_cplx<X>::value) return x.imag(); else return X(0);
}
template <class X> __device__ __forceinline__ auto rsqrt(const X& x) {
  if constexpr (cuda::std::is_same<X, float>::value) return ::rsqrtf(x); else return ::rsqrt(static_cast<double>(x));
}
template <class X> __device__ __forceinline__ auto conj(const X& x) {
  if constexpr (is_cplx<X>::value) return cuda::std::conj(x); else return x;
}
}  // namespace tj
)";

// NumPy's integer and real arithmetic that C++ spells otherwise (both preludes; floordiv,
// remainder, isinf, isfinite and sign of real types only: the package sends no complex or bool
// operands to them). Integers: floor division and remainder
// take the divisor's sign, and 0 where it is 0 (NumPy warns); reals: npy_divmod's algorithm.
constexpr const char* kNumpyHelpers = R"(namespace tj {
template <class X> __device__ __forceinline__ X floordiv(X x, X y) {
  if constexpr (X(0.5) == X(0)) {
    if (y == X(0)) return X(0);
    const X q = x / y;
    return (q * y != x && ((x < X(0)) != (y < X(0)))) ? q - X(1) : q;
  } else {
    if (y == X(0)) return x / y;
    const X mod = fmod(x, y);
    X div = (x - mod) / y;
    if (mod != X(0) && ((y < X(0)) != (mod < X(0)))) div -= X(1);
    if (div == X(0)) return copysign(X(0), x / y);
    X fl = floor(div);
    if (div - fl > X(0.5)) fl += X(1);
    return fl;
  }
}
template <class X> __device__ __forceinline__ X remainder(X x, X y) {
  if constexpr (X(0.5) == X(0)) {
    if (y == X(0)) return X(0);
    const X r = x % y;
    return (r != X(0) && ((r < X(0)) != (y < X(0)))) ? X(r + y) : r;
  } else {
    X mod = fmod(x, y);
    if (y == X(0)) return mod;
    if (mod != X(0)) {
      if ((y < X(0)) != (mod < X(0))) mod += y;
    } else {
      mod = copysign(X(0), y);
    }
    return mod;
  }
}
template <class X> __device__ __forceinline__ bool isinf(X x) { return x == x && x - x != x - x; }
template <class X> __device__ __forceinline__ bool isfinite(X x) { return x - x == x - x; }
template <class X> __device__ __forceinline__ X sign(X x) { return x != x ? x : X((X(0) < x) - (x < X(0))); }
template <class X> __device__ __forceinline__ X recip(X x) { return X(1) / x; }
}  // namespace tj
)";

// Kernels without complex values (most) skip libcu++: NVRTC takes about a second to parse
// <cuda/std/complex> and <cuda/std/cmath>, against tens of milliseconds without them. The math
// functions are then CUDA's own global ones, which cuda::std:: forwards to (same results).
constexpr const char* kRealPrelude = R"(namespace tj {
template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };
template <class To, class From> __device__ __forceinline__ To convert(const From& v) { return static_cast<To>(v); }
template <class X, class Y> __device__ __forceinline__ auto mul(const X& x, const Y& y) { return x * y; }
template <class X> __device__ __forceinline__ X real(const X& x) { return x; }
template <class X> __device__ __forceinline__ X imag(const X&) { return X(0); }
template <class X> __device__ __forceinline__ X conj(const X& x) { return x; }
template <class X> __device__ __forceinline__ auto rsqrt(const X& x) {
  if constexpr (same<X, float>::value) return ::rsqrtf(x); else return ::rsqrt(static_cast<double>(x));
}
template <class X> __device__ __forceinline__ X iabs(const X& x) { return x < X(0) ? -x : x; }
}  // namespace tj
)";

bool integral(DType t) { return t == DType::boolean || t == DType::int32 || t == DType::int64; }
bool complex_type(DType t) { return t == DType::complex64 || t == DType::complex128; }
// Whether kernel k needs libcu++ (complex values, or arg, whose real form is std::arg's).
bool needs_libcu(const Kernel& k) {
  for (const Node& n : k.nodes)
    if (complex_type(n.type) || n.op == Op::arg) return true;
  return complex_type(k.out);
}
// The code of node n without libcu++: cuda::std::f(x) as CUDA's ::f, integers promoted to double
// as cuda::std's integer overloads do; abs of integers and floats spelled out.
std::string real_code(const OpInfo& o, const Node& n, const Kernel& k) {
  const DType ta = k.nodes[n.a].type;
  std::string code = o.code;
  if (n.op == Op::abs) return integral(ta) ? "tj::iabs(x)" : ta == DType::float32 ? "::fabsf(x)" : "::fabs(x)";
  const std::string from = "cuda::std::";
  if (code.rfind(from, 0) != 0) return code;
  code = "::" + code.substr(from.size());
  const bool promote_x = integral(ta), promote_y = n.b >= 0 && integral(k.nodes[n.b].type);
  std::string out;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    const bool alone = (i == 0 || !std::isalnum(static_cast<unsigned char>(code[i - 1]))) &&
                       (i + 1 == code.size() || !std::isalnum(static_cast<unsigned char>(code[i + 1])));
    if (alone && c == 'x' && promote_x) out += "static_cast<double>(x)";
    else if (alone && c == 'y' && promote_y) out += "static_cast<double>(y)";
    else out += c;
  }
  return out;
}

std::string apply(const std::string& code, const std::string& x, const std::string& y) {
  std::string s;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    const bool alone = (i == 0 || !std::isalnum(static_cast<unsigned char>(code[i - 1]))) &&
                       (i + 1 == code.size() || !std::isalnum(static_cast<unsigned char>(code[i + 1])));
    if (alone && c == 'x') s += x;
    else if (alone && c == 'y') s += y;
    else s += c;
  }
  return s;
}

std::string v(int i) { return "v" + std::to_string(i); }

// The statements computing every node at flat index `j` (linear) or multi-index `idx` (strided).
std::string body(const Kernel& k, const std::string& indent) {
  std::ostringstream o;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const Node& n = k.nodes[i];
    const int me = static_cast<int>(i);
    const std::string t = cuda_type(n.type);
    o << indent;
    switch (n.op) {
      case Op::load:
        if (k.linear) {
          o << "const " << t << " " << v(me) << " = p" << n.slot << "[j];\n";
        } else {
          o << "long long o" << me << " = 0;\n" << indent << "#pragma unroll\n" << indent
            << "for (int d = 0; d < " << k.rank << "; ++d) o" << me << " += idx[d] * s" << n.slot << ".v[d];\n"
            << indent << "const " << t << " " << v(me) << " = p" << n.slot << "[o" << me << "];\n";
        }
        break;
      case Op::scalar: o << "const " << t << " " << v(me) << " = c" << n.slot << ";\n"; break;
      case Op::cast: o << "const auto " << v(me) << " = tj::convert<" << t << ">(" << v(n.a) << ");\n"; break;
      case Op::where: {
        const std::string ta = cuda_type(k.nodes[n.b].type);
        o << "const auto " << v(me) << " = " << v(n.a) << " ? static_cast<" << ta << ">(" << v(n.b) << ") : static_cast<"
          << ta << ">(" << v(n.c) << ");\n";
        break;
      }
      default: {
        const std::string code = needs_libcu(k) ? std::string(info(n.op).code) : real_code(info(n.op), n, k);
        o << "const auto " << v(me) << " = " << apply(code, v(n.a), n.b >= 0 ? v(n.b) : "") << ";\n";
      }
    }
  }
  return o.str();
}

std::string params(const Kernel& k) {
  std::vector<DType> op_types(k.operands()), sc_types(k.scalars());
  for (const Node& n : k.nodes) {
    if (n.op == Op::load) op_types[n.slot] = n.type;
    if (n.op == Op::scalar) sc_types[n.slot] = n.type;
  }
  std::ostringstream o;
  o << cuda_type(k.out) << "* out, long long n";
  if (!k.linear) o << ", Dims shape, Dims ostr";
  for (std::size_t s = 0; s < op_types.size(); ++s) {
    o << ", const " << cuda_type(op_types[s]) << "* p" << s;
    if (!k.linear) o << ", Dims s" << s;
  }
  for (std::size_t s = 0; s < sc_types.size(); ++s) o << ", " << cuda_type(sc_types[s]) << " c" << s;
  return o.str();
}
}  // namespace

const char* op_name(Op op) { return info(op).name; }
int op_arity(Op op) { return info(op).arity; }

int Kernel::operands() const {
  int m = 0;
  for (const Node& n : nodes)
    if (n.op == Op::load) m = std::max(m, n.slot + 1);
  return m;
}
int Kernel::scalars() const {
  int m = 0;
  for (const Node& n : nodes)
    if (n.op == Op::scalar) m = std::max(m, n.slot + 1);
  return m;
}

std::string Kernel::key() const {
  std::ostringstream o;
  o << dtype_name(out) << (linear ? (index32 ? ":l32" : ":l64") : index32 ? ":s32" : ":s64") << rank;
  for (const Node& n : nodes)
    o << '|' << op_name(n.op) << ',' << static_cast<int>(n.type) << ',' << n.a << ',' << n.b << ',' << n.c << ',' << n.slot;
  return o.str();
}

namespace {
// The IR's math functions (many instructions per element, transcendental or iterative).
bool is_math_function(Op op) {
  switch (op) {
    case Op::sqrt: case Op::rsqrt: case Op::exp: case Op::expm1: case Op::log: case Op::log1p: case Op::sin:
    case Op::cos: case Op::tan: case Op::tanh: case Op::sinh: case Op::cosh: case Op::asin: case Op::acos:
    case Op::atan: case Op::atan2: case Op::pow: case Op::log2: case Op::log10: case Op::exp2: case Op::cbrt:
      return true;
    default:
      return false;
  }
}
}  // namespace

// Elements per thread of a contiguous kernel. Four hide the latency of narrow loads and of math
// functions; 8-byte arithmetic alone streams best with one (raw triad f64 4500 GB/s against 4476),
// an 8-byte expression with a math function with four (f64 exp(x)*y 4384 against 4302), and more
// than four loads per element with one (docs/performance/jit.md, local.md).
int Kernel::unroll() const {
  std::size_t narrowest = SIZE_MAX;
  int loads = 0;
  bool math = false;
  for (const Node& n : nodes) {
    if (n.op == Op::load) narrowest = std::min(narrowest, dtype_size(n.type)), ++loads;
    math = math || is_math_function(n.op);
  }
  if (loads > 4) return 1;
  return dtype_size(out) >= 8 && narrowest >= 8 && !math ? 1 : 4;
}

void Kernel::validate() const {
  auto bad = [&](std::size_t i, const std::string& why) {
    throw InvalidArgument("jit: node " + std::to_string(i) + " (" + op_name(nodes[i].op) + ") of kernel " + key() +
                          ": " + why);
  };
  if (nodes.empty()) throw InvalidArgument("jit: a kernel needs at least one node");
  if (rank < 1 || rank > 6) throw InvalidArgument("jit: rank " + std::to_string(rank) + " outside 1..6");
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const int ar = op_arity(n.op);
    const int ops[3] = {n.a, n.b, n.c};
    for (int q = 0; q < 3; ++q) {
      if (q < ar && (ops[q] < 0 || ops[q] >= static_cast<int>(i))) bad(i, "operand " + std::to_string(q) + " is not an earlier node");
      if (q >= ar && ops[q] != -1) bad(i, "takes " + std::to_string(ar) + " operands");
    }
    if ((n.op == Op::load || n.op == Op::scalar) && n.slot < 0) bad(i, "has no slot");
  }
}

DType promote(DType a, DType b) {
  auto is_int = [](DType t) { return t == DType::int32 || t == DType::int64; };
  auto is_cplx = [](DType t) { return t == DType::complex64 || t == DType::complex128; };
  auto is_double = [](DType t) { return t == DType::float64 || t == DType::complex128; };
  if (a == b || b == DType::boolean) return a;
  if (a == DType::boolean) return b;
  if (is_int(a) && is_int(b)) return DType::int64;
  const bool c = is_cplx(a) || is_cplx(b);
  // An integer with an inexact type needs double precision (numpy: int32 + float32 -> float64).
  const bool dbl = is_int(a) || is_int(b) || is_double(a) || is_double(b);
  if (c) return dbl ? DType::complex128 : DType::complex64;
  return dbl ? DType::float64 : DType::float32;
}

std::string cuda_type(DType t) {
  switch (t) {
    case DType::boolean: return "bool";
    case DType::int32: return "int";
    case DType::int64: return "long long";
    case DType::float32: return "float";
    case DType::float64: return "double";
    case DType::complex64: return "cuda::std::complex<float>";
    case DType::complex128: return "cuda::std::complex<double>";
  }
  throw InvalidArgument("jit: unknown element type " + std::to_string(static_cast<int>(t)));
}

std::string generate_cuda(const Kernel& k, const std::string& name) {
  k.validate();
  std::ostringstream o;
  o << (needs_libcu(k) ? kPrelude : kRealPrelude) << kNumpyHelpers << "struct Dims { long long v[" << k.rank << "]; };\n";
  o << "// " << k.key() << "\n";
  o << "extern \"C\" __global__ void " << name << "(" << params(k) << ") {\n";
  const std::string D = cuda_type(k.out), root = v(static_cast<int>(k.nodes.size()) - 1);
  if (k.linear) {
    // 32-bit flat indices where they fit: the index arithmetic then costs less than the loads
    // (an f64 x*sin(y)+exp(x) runs about 12% faster; docs/performance/jit.md).
    const std::string I = k.index32 ? "unsigned" : "long long";
    o << "  constexpr int U = " << k.unroll() << ";\n"
      << "  const " << I << " count = static_cast<" << I << ">(n);\n"
      << "  const " << I << " step = static_cast<" << I << ">(gridDim.x) * blockDim.x * U;\n"
      << "  for (" << I << " base = static_cast<" << I << ">(blockIdx.x) * blockDim.x * U + threadIdx.x; base < count; base += step) {\n"
      << "    " << D << " r[U];\n"
      << "#pragma unroll\n"
      << "    for (int k = 0; k < U; ++k) {\n"
      << "      const " << I << " j = base + static_cast<" << I << ">(k) * blockDim.x;\n"
      << "      if (j < count) {\n"
      << body(k, "        ") << "        r[k] = tj::convert<" << D << ">(" << root << ");\n"
      << "      }\n"
      << "    }\n"
      << "#pragma unroll\n"
      << "    for (int k = 0; k < U; ++k) {\n"
      << "      const " << I << " j = base + static_cast<" << I << ">(k) * blockDim.x;\n"
      << "      if (j < count) out[j] = r[k];\n"
      << "    }\n"
      << "  }\n";
  } else {
    const std::string I = k.index32 ? "unsigned" : "long long";
    o << "  " << I << " ext[" << k.rank << "];\n"
      << "#pragma unroll\n"
      << "  for (int d = 0; d < " << k.rank << "; ++d) ext[d] = static_cast<" << I << ">(shape.v[d]);\n"
      << "  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;\n"
      << "       i += static_cast<long long>(gridDim.x) * blockDim.x) {\n"
      << "    long long idx[" << k.rank << "];\n"
      << "    " << I << " rem = static_cast<" << I << ">(i);\n"
      << "    long long off = 0;\n"
      << "#pragma unroll\n"
      << "    for (int d = " << k.rank - 1 << "; d >= 0; --d) {\n"
      << "      const " << I << " q = rem / ext[d];\n"
      << "      idx[d] = static_cast<long long>(rem - q * ext[d]);\n"
      << "      rem = q;\n"
      << "      off += idx[d] * ostr.v[d];\n"
      << "    }\n"
      << body(k, "    ") << "    out[off] = tj::convert<" << D << ">(" << root << ");\n"
      << "  }\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace tessera::local::jit
