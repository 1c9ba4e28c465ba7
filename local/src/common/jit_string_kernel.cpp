// String kernels (jit/string_kernel.hpp): parameter lists, type binding, broadcasting and the
// generated source; compiled and launched by the runtime kernel compiler (jit_cuda.cpp).
#include "tessera/local/jit/string_kernel.hpp"

#include <algorithm>
#include <cctype>
#include <complex>
#include <cstring>
#include <map>
#include <sstream>

#include "tessera/local/error.hpp"
#include "tessera/local/memory.hpp"

namespace tessera::local {
namespace jit {

namespace {
std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
bool identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}
// A concrete element type named in a parameter list, if `t` is one.
std::optional<DType> concrete(const std::string& t) {
  static const std::map<std::string, DType> names{
      {"bool", DType::boolean},     {"int32", DType::int32},         {"int", DType::int32},
      {"int64", DType::int64},      {"float32", DType::float32},     {"float", DType::float32},
      {"float64", DType::float64},  {"double", DType::float64},      {"complex64", DType::complex64},
      {"complex128", DType::complex128}};
  const auto it = names.find(t);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

template <class T> void store(KernelArg& a, std::complex<double> v) {
  T t;
  if constexpr (is_complex_v<T>) t = T(static_cast<typename T::value_type>(v.real()), static_cast<typename T::value_type>(v.imag()));
  else t = static_cast<T>(v.real());
  std::memcpy(a.value.data(), &t, sizeof t);
}
template <class T> std::complex<double> load(const KernelArg& a) {
  T t;
  std::memcpy(&t, a.value.data(), sizeof t);
  if constexpr (is_complex_v<T>) return {t.real(), t.imag()};
  else return {static_cast<double>(t), 0.0};
}
// A scalar argument as element type `to` (complex -> real keeps the real part).
KernelArg converted(KernelArg a, DType to) {
  std::complex<double> v;
  switch (a.type) {
    case DType::boolean: v = load<bool>(a); break;
    case DType::int32: v = load<std::int32_t>(a); break;
    case DType::int64: v = load<std::int64_t>(a); break;
    case DType::float32: v = load<float>(a); break;
    case DType::float64: v = load<double>(a); break;
    case DType::complex64: v = load<std::complex<float>>(a); break;
    case DType::complex128: v = load<std::complex<double>>(a); break;
  }
  a.value.fill(0);
  switch (to) {
    case DType::boolean: store<bool>(a, v); break;
    case DType::int32: store<std::int32_t>(a, v); break;
    case DType::int64: store<std::int64_t>(a, v); break;
    case DType::float32: store<float>(a, v); break;
    case DType::float64: store<double>(a, v); break;
    case DType::complex64: store<std::complex<float>>(a, v); break;
    case DType::complex128: store<std::complex<double>>(a, v); break;
  }
  a.type = to;
  return a;
}
}  // namespace

std::vector<Param> parse_params(const std::string& list, bool outputs) {
  std::vector<Param> v;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    std::istringstream words(trim(item));
    Param p;
    std::string extra;
    if (!(words >> p.type >> p.name) || (words >> extra) || !identifier(p.type) || !identifier(p.name))
      throw InvalidArgument("ElementwiseKernel: parameter '" + trim(item) + "' of \"" + list +
                            "\" is not \"TYPE NAME\" (TYPE a placeholder or bool, int32, int64, float32, float64, "
                            "complex64, complex128)");
    p.is_output = outputs;
    v.push_back(p);
  }
  if (v.empty() && outputs) throw InvalidArgument("ElementwiseKernel: no output parameter in \"" + list + "\"");
  return v;
}

std::string string_kernel_source(const std::vector<Param>& params, const std::vector<DType>& types,
                                 const std::vector<bool>& scalar, const std::string& body, const std::string& name,
                                 int rank, bool linear) {
  std::ostringstream o;
  o << "#include <cuda/std/cmath>\n#include <cuda/std/complex>\n";
  o << "struct Dims { long long v[" << rank << "]; };\n";
  o << "extern \"C\" __global__ void " << name << "(long long n, Dims shape";
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (scalar[k]) o << ", " << cuda_type(types[k]) << " " << params[k].name;
    else o << ", " << cuda_type(types[k]) << "* p" << k << ", Dims s" << k;
  }
  o << ") {\n";
  std::map<std::string, DType> placeholders;
  for (std::size_t k = 0; k < params.size(); ++k)
    if (!concrete(params[k].type)) placeholders.emplace(params[k].type, types[k]);
  for (const auto& [ph, t] : placeholders) o << "  typedef " << cuda_type(t) << " " << ph << ";\n";
  o << "  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;\n"
    << "       i += static_cast<long long>(gridDim.x) * blockDim.x) {\n";
  if (!linear) {
    o << "    long long idx[" << rank << "];\n    long long rem = i;\n"
      << "#pragma unroll\n    for (int d = " << rank - 1 << "; d >= 0; --d) { idx[d] = rem % shape.v[d]; rem /= shape.v[d]; }\n";
  }
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (scalar[k]) continue;
    const std::string t = cuda_type(types[k]);
    std::string at = "i";
    if (!linear) {
      o << "    long long o" << k << " = 0;\n#pragma unroll\n    for (int d = 0; d < " << rank << "; ++d) o" << k
        << " += idx[d] * s" << k << ".v[d];\n";
      at = "o" + std::to_string(k);
    }
    if (params[k].is_output) o << "    " << t << "& " << params[k].name << " = p" << k << "[" << at << "];\n";
    else o << "    const " << t << " " << params[k].name << " = p" << k << "[" << at << "];\n";
  }
  o << "    " << body << ";\n  }\n}\n";
  return o.str();
}

namespace {
// The element types of the parameters, which arguments are scalars, the arrays' device and rank.
struct Binding {
  std::vector<DType> types;
  std::vector<bool> scalar;
  Device device = Device::host();
  int rank = -1;
};
Binding bind_arguments(const std::vector<Param>& params, std::vector<KernelArg>& args, const std::string& what,
             const std::string& name) {
  if (args.size() != params.size())
    throw InvalidArgument(what + " " + name + ": " + std::to_string(params.size()) + " parameters, " +
                          std::to_string(args.size()) + " arguments");
  // Types: concrete, or bound by the first array (else scalar) using the placeholder.
  std::map<std::string, DType> bound;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t k = 0; k < params.size(); ++k)
      if (!concrete(params[k].type) && (pass == 1 || !args[k].scalar)) bound.emplace(params[k].type, args[k].type);
  Binding b;
  std::optional<Device> dev;
  for (std::size_t k = 0; k < params.size(); ++k) {
    const auto c = concrete(params[k].type);
    const DType want = c ? *c : bound.at(params[k].type);
    KernelArg& a = args[k];
    if (params[k].is_output && a.scalar)
      throw InvalidArgument(what + " " + name + ": output " + params[k].name + " must be an array");
    if (a.scalar && a.type != want) a = converted(a, want);  // scalars take their parameter's type (weak)
    if (!a.scalar && a.type != want)
      throw InvalidArgument(what + " " + name + ": " + params[k].name + " is " + dtype_name(a.type) + ", but " +
                            params[k].type + " is " + dtype_name(want) + " here");
    if (!a.scalar) {
      if (dev && *dev != a.device)
        throw DeviceMismatch(what + " " + name + ": " + params[k].name + " on " + a.device.str() + ", others on " +
                             dev->str(), a.device);
      if (b.rank >= 0 && a.rank != b.rank)
        throw ShapeMismatch(what + " " + name + ": " + params[k].name + " is " + std::to_string(a.rank) + "-D, others " +
                            std::to_string(b.rank) + "-D");
      dev = a.device, b.rank = a.rank;
    }
    b.types.push_back(want);
    b.scalar.push_back(a.scalar);
  }
  if (!dev) throw InvalidArgument(what + " " + name + ": no array argument");
  if (!dev->is_cuda())
    throw BackendUnavailable(what + " " + name + " runs on GPU arrays; the arrays are on " + dev->str(), *dev);
  b.device = *dev;
  return b;
}
// Sets stride 0 where argument k (an input) broadcasts to `shape`; false where any array is not
// contiguous in `shape` (then the strided path). ShapeMismatch where it cannot broadcast.
bool broadcast_inputs(const std::vector<Param>& params, std::vector<KernelArg>& args, const std::array<std::int64_t, 6>& shape,
                      int rank, const std::string& what, const std::string& name, const Device& dev, bool outputs_too) {
  bool linear = true;
  for (std::size_t k = 0; k < params.size(); ++k) {
    KernelArg& a = args[k];
    if (a.scalar || (params[k].is_output && !outputs_too)) continue;
    std::int64_t expect = 1;
    for (int d = rank - 1; d >= 0; --d) {
      if (a.shape[d] != shape[d]) {
        if (a.shape[d] != 1 || params[k].is_output)
          throw ShapeMismatch(what + " " + name + ": " + params[k].name + " of extent " + std::to_string(a.shape[d]) +
                              " along axis " + std::to_string(d) + " does not broadcast to " + std::to_string(shape[d]), dev);
        a.strides[d] = 0, linear = false;
      } else if (a.shape[d] != 1 && a.strides[d] != expect) {
        linear = false;
      }
      expect *= a.shape[d];
    }
  }
  return linear;
}
}  // namespace

void run_string_kernel(const std::vector<Param>& params, const std::string& body, const std::string& name,
                       std::vector<KernelArg> args) {
  const Binding bd = bind_arguments(params, args, "ElementwiseKernel", name);
  const auto& types = bd.types;
  const auto& scalar = bd.scalar;
  const Device* dev = &bd.device;
  const int rank = bd.rank;
  // The output shape: every output's (they must agree); inputs broadcast to it.
  std::array<std::int64_t, 6> shape{};
  bool have = false;
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (!params[k].is_output) continue;
    if (have && !std::equal(shape.begin(), shape.begin() + rank, args[k].shape.begin()))
      throw ShapeMismatch("ElementwiseKernel " + name + ": outputs of different shapes", *dev);
    shape = args[k].shape, have = true;
  }
  std::int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[d];
  const bool linear = broadcast_inputs(params, args, shape, rank, "ElementwiseKernel", name, *dev, true);
  const std::string source = string_kernel_source(params, types, scalar, body, name, std::max(rank, 1), linear);
  launch_source(source, name, *dev, Stream::default_for(*dev), n, [&](std::vector<void*>& p, std::vector<std::vector<long long>>& keep) {
    keep.reserve(params.size() + 1);
    keep.emplace_back(shape.begin(), shape.begin() + std::max(rank, 1));
    p.push_back(keep.back().data());
    for (std::size_t k = 0; k < params.size(); ++k) {
      if (args[k].scalar) {
        p.push_back(args[k].value.data());
      } else {
        p.push_back(&args[k].ptr);
        keep.emplace_back(args[k].strides.begin(), args[k].strides.begin() + std::max(rank, 1));
        p.push_back(keep.back().data());
      }
    }
  });
}

namespace {
// The declarations of element i's inputs: at i itself (linear) or at the offsets of its
// multi-index (any strides, broadcasting).
std::string input_loads(const std::vector<Param>& params, const std::vector<DType>& types, const std::vector<bool>& scalar,
                        int rank, bool linear, const std::string& indent) {
  std::ostringstream o;
  if (!linear)
    o << indent << "long long idx[" << rank << "];\n" << indent << "long long rem = i;\n" << indent << "for (int d = "
      << rank - 1 << "; d >= 0; --d) { idx[d] = rem % shape.v[d]; rem /= shape.v[d]; }\n";
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (scalar[k] || params[k].is_output) continue;
    std::string at = "i";
    if (!linear) {
      o << indent << "long long o" << k << " = 0;\n" << indent << "for (int d = 0; d < " << rank << "; ++d) o" << k
        << " += idx[d] * s" << k << ".v[d];\n";
      at = "o" + std::to_string(k);
    }
    o << indent << "const " << cuda_type(types[k]) << " " << params[k].name << " = p" << k << "[" << at << "];\n";
  }
  return o.str();
}
// The output references at multi-index idx.
std::string output_refs(const std::vector<Param>& params, const std::vector<DType>& types, int rank,
                        const std::string& indent) {
  std::ostringstream o;
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (!params[k].is_output) continue;
    o << indent << "long long q" << k << " = 0;\n" << indent << "for (int d = 0; d < " << rank << "; ++d) q" << k
      << " += idx[d] * s" << k << ".v[d];\n"
      << indent << cuda_type(types[k]) << "& " << params[k].name << " = p" << k << "[q" << k << "];\n";
  }
  return o.str();
}
bool passed(const Param& p, bool scalar, bool inputs, bool outputs) {
  return scalar || (p.is_output && outputs) || (!p.is_output && inputs);
}
// The kernel parameters of the arrays (pointer, strides) and scalars (value) selected.
std::string param_list(const std::vector<Param>& params, const std::vector<DType>& types, const std::vector<bool>& scalar,
                       bool inputs, bool outputs) {
  std::ostringstream o;
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (!passed(params[k], scalar[k], inputs, outputs)) continue;
    if (scalar[k]) o << ", " << cuda_type(types[k]) << " " << params[k].name;
    else o << ", " << (params[k].is_output ? "" : "const ") << cuda_type(types[k]) << "* p" << k << ", Dims s" << k;
  }
  return o.str();
}
// The same selection as arguments of a call.
std::string arg_list(const std::vector<Param>& params, const std::vector<bool>& scalar, bool inputs, bool outputs) {
  std::ostringstream o;
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (!passed(params[k], scalar[k], inputs, outputs)) continue;
    if (scalar[k]) o << ", " << params[k].name;
    else o << ", p" << k << ", s" << k;
  }
  return o.str();
}
// A block's tree reduction of acc into s[0] (threads a power of two), in shared memory.
constexpr const char* kBlockReduce = R"(  s[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] = tessera_reduce(s[threadIdx.x], s[threadIdx.x + h]);
    __syncthreads();
  }
)";
// acc combined with the mapped elements first, first + step, ... below `end`; four loads in
// flight per thread (their map values combined pairwise, then into acc).
std::string strided_accumulate(const std::string& first, const std::string& step, const std::string& end,
                               const std::string& args) {
  const std::string m = "tessera_map(shape" + args + ", ";
  return "  long long i = " + first + ";\n  for (; i + 3 * (" + step + ") < " + end + "; i += 4 * (" + step + ")) {\n" +
         "    const tessera_reduce_t m0 = " + m + "i), m1 = " + m + "i + (" + step + ")), m2 = " + m + "i + 2 * (" + step +
         ")), m3 = " + m + "i + 3 * (" + step + "));\n" +
         "    acc = tessera_reduce(acc, tessera_reduce(tessera_reduce(m0, m1), tessera_reduce(m2, m3)));\n  }\n" +
         "  for (; i < " + end + "; i += " + step + ") acc = tessera_reduce(acc, " + m + "i));\n";
}
}  // namespace

std::string reduction_source(const std::vector<Param>& params, const std::vector<DType>& types,
                             const std::vector<bool>& scalar, const Reduction& r, DType reduce_type,
                             const std::string& name, int rank, bool linear) {
  std::ostringstream o;
  // The typedef's one-word name, also in casts: "long long(x)" is not C++.
  const std::string RT = "tessera_reduce_t";
  o << "#include <cuda/std/cmath>\n#include <cuda/std/complex>\n";
  o << "struct Dims { long long v[" << rank << "]; };\n";
  std::map<std::string, DType> placeholders;
  for (std::size_t k = 0; k < params.size(); ++k)
    if (!concrete(params[k].type)) placeholders.emplace(params[k].type, types[k]);
  for (const auto& [ph, t] : placeholders) o << "typedef " << cuda_type(t) << " " << ph << ";\n";
  o << "typedef " << cuda_type(reduce_type) << " tessera_reduce_t;\n"
    << "__device__ __forceinline__ " << RT << " tessera_reduce(const " << RT << "& a, const " << RT << "& b) { return ("
    << r.reduce << "); }\n";
  const std::string ins = param_list(params, types, scalar, true, false), in_args = arg_list(params, scalar, true, false);
  o << "__device__ __forceinline__ " << RT << " tessera_map(const Dims& shape" << ins << ", long long i) {\n"
    << input_loads(params, types, scalar, rank, linear, "  ") << "  return " << RT << "(" << r.map << ");\n}\n";
  const std::string shared = "  __shared__ alignas(16) unsigned char raw[256 * sizeof(" + RT + ")];\n  " + RT + "* s = reinterpret_cast<" +
                             RT + "*>(raw);\n";
  const std::string unflatten = "    long long rem = i;\n    for (int d = " + std::to_string(rank - 1) +
                                "; d >= 0; --d) { idx[d] = rem % shape.v[d]; rem /= shape.v[d]; }\n";
  // A block per row of the last axis; thread 0 applies post_map at the row's output.
  o << "extern \"C\" __global__ void " << name << "_rows(long long rows, long long len, Dims shape"
    << param_list(params, types, scalar, true, true) << ") {\n" << shared
    << "  const long long n_reduced = len;\n"
    << "  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n"
    << "  " << RT << " acc = " << RT << "(" << r.identity << ");\n"
    << strided_accumulate("row * len + threadIdx.x", "blockDim.x", "(row + 1) * len", in_args) << kBlockReduce
    << "  if (threadIdx.x == 0) {\n    const long long i = row * len;\n    long long idx[" << rank << "];\n"
    << unflatten << "    idx[" << rank - 1 << "] = 0;\n    " << RT << " a = s[0];\n"
    << output_refs(params, types, rank, "    ") << "    " << r.post_map << ";\n  }\n  __syncthreads();\n  }\n}\n";
  // The whole array: partial results per block, then one block combines them.
  o << "extern \"C\" __global__ void " << name << "_partial(long long n, Dims shape" << ins << ", " << RT << "* part) {\n"
    << shared << "  " << RT << " acc = " << RT << "(" << r.identity << ");\n"
    << strided_accumulate("static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x",
                          "static_cast<long long>(gridDim.x) * blockDim.x", "n", in_args)
    << kBlockReduce << "  if (threadIdx.x == 0) part[blockIdx.x] = s[0];\n}\n";
  o << "extern \"C\" __global__ void " << name << "_final(long long parts, long long n_reduced, const " << RT << "* part"
    << param_list(params, types, scalar, false, true) << ") {\n" << shared
    << "  " << RT << " acc = " << RT << "(" << r.identity << ");\n"
    << "  for (long long k = threadIdx.x; k < parts; k += blockDim.x) acc = tessera_reduce(acc, part[k]);\n" << kBlockReduce
    << "  if (threadIdx.x == 0) {\n    long long idx[" << rank << "] = {};\n    " << RT << " a = s[0];\n"
    << output_refs(params, types, rank, "    ") << "    " << r.post_map << ";\n  }\n}\n";
  return o.str();
}

namespace {
// A reduction bound to its arguments: types, the domain's shape, the reduce type and source.
struct BoundReduction {
  Binding bd;
  std::array<std::int64_t, 6> shape{};
  std::int64_t n = 1;
  int R = 1;
  DType rt = DType::float64;
  std::string source;
};
DType reduce_type_of(const std::vector<Param>& params, const Reduction& r, const Binding& bd, const std::string& name) {
  DType rt = bd.types[params.size() - 1];
  for (std::size_t k = 0; k < params.size(); ++k)
    if (params[k].is_output) { rt = bd.types[k]; break; }
  if (r.reduce_type.empty()) return rt;
  if (const auto c = concrete(r.reduce_type)) return *c;
  for (std::size_t k = 0; k < params.size(); ++k)
    if (params[k].type == r.reduce_type) return bd.types[k];
  throw InvalidArgument("ReductionKernel " + name + ": reduce type '" + r.reduce_type + "' is neither a type nor a placeholder");
}
BoundReduction bind_reduction(const std::vector<Param>& params, const Reduction& r, const std::string& name,
                              std::vector<KernelArg>& args, bool rows) {
  BoundReduction b{bind_arguments(params, args, "ReductionKernel", name)};
  const int rank = b.bd.rank;
  // The domain: the inputs' broadcast shape; outputs: extent 1 along the reduced axes.
  b.shape.fill(1);
  for (std::size_t k = 0; k < params.size(); ++k)
    if (!args[k].scalar && !params[k].is_output)
      for (int d = 0; d < rank; ++d)
        if (args[k].shape[d] != 1) b.shape[d] = args[k].shape[d];
  const bool linear = broadcast_inputs(params, args, b.shape, rank, "ReductionKernel", name, b.bd.device, false);
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (!params[k].is_output) continue;
    for (int d = 0; d < rank; ++d) {
      const std::int64_t want = rows && d < rank - 1 ? b.shape[d] : 1;
      if (args[k].shape[d] != want)
        throw ShapeMismatch("ReductionKernel " + name + ": output " + params[k].name + " needs extent " +
                            std::to_string(want) + " along axis " + std::to_string(d) + ", not " +
                            std::to_string(args[k].shape[d]), b.bd.device);
    }
  }
  b.rt = reduce_type_of(params, r, b.bd, name);
  b.R = std::max(rank, 1);
  for (int d = 0; d < rank; ++d) b.n *= b.shape[d];
  b.source = reduction_source(params, b.bd.types, b.bd.scalar, r, b.rt, name, b.R, linear);
  return b;
}
// Kernel parameters of the arguments selected (arrays: pointer and strides; scalars: value).
struct ParamPusher {
  const std::vector<Param>& params;
  std::vector<KernelArg>& args;
  int R;
  void* dims(std::vector<std::vector<long long>>& keep, const std::array<std::int64_t, 6>& v) const {
    keep.emplace_back(v.begin(), v.begin() + R);
    return static_cast<void*>(keep.back().data());
  }
  void push(std::vector<void*>& p, std::vector<std::vector<long long>>& keep, bool inputs, bool outputs) const {
    for (std::size_t k = 0; k < params.size(); ++k) {
      if (args[k].scalar) {
        p.push_back(args[k].value.data());
      } else if ((params[k].is_output && outputs) || (!params[k].is_output && inputs)) {
        p.push_back(&args[k].ptr);
        p.push_back(dims(keep, args[k].strides));
      }
    }
  }
};
constexpr int kReduceThreads = 256;
// The per-block partial values of the whole domain into `part` (`parts` of the reduce type).
void launch_partials(const BoundReduction& b, const ParamPusher& pp, const std::string& name, const Stream& s,
                     long long parts, void* part) {
  long long total = b.n;
  launch_source_grid(b.source, name + "_partial", b.bd.device, s, parts, kReduceThreads, [&](auto& p, auto& keep) {
    keep.reserve(2 * pp.params.size() + 2);
    p.push_back(&total), p.push_back(pp.dims(keep, b.shape));
    pp.push(p, keep, true, false);
    p.push_back(&part);
  });
}
// One block combining `parts` partial values and writing the outputs through post_map.
void launch_final(const BoundReduction& b, const ParamPusher& pp, const std::string& name, const Stream& s,
                  long long parts, const void* part, long long n_reduced) {
  launch_source_grid(b.source, name + "_final", b.bd.device, s, 1, kReduceThreads, [&](auto& p, auto& keep) {
    keep.reserve(2 * pp.params.size() + 2);
    p.push_back(&parts), p.push_back(&n_reduced), p.push_back(const_cast<void**>(&part));
    pp.push(p, keep, false, true);
  });
}
}  // namespace

void run_reduction(const std::vector<Param>& params, const Reduction& r, const std::string& name,
                   std::vector<KernelArg> args, bool rows) {
  const BoundReduction b = bind_reduction(params, r, name, args, rows);
  const ParamPusher pp{params, args, b.R};
  const Stream& stream = Stream::default_for(b.bd.device);
  if (rows) {
    long long len = b.bd.rank ? b.shape[b.R - 1] : 1;
    long long nrows = b.n == 0 ? 0 : b.n / std::max<long long>(len, 1);
    const std::int64_t blocks = std::min<std::int64_t>(nrows, std::int64_t(1) << 30);
    launch_source_grid(b.source, name + "_rows", b.bd.device, stream, blocks, kReduceThreads, [&](auto& p, auto& keep) {
      keep.reserve(2 * params.size() + 2);
      p.push_back(&nrows), p.push_back(&len), p.push_back(pp.dims(keep, b.shape));
      pp.push(p, keep, true, true);
    });
    return;
  }
  // 8 blocks of 256 per multiprocessor fill it; fewer where there are not that many elements.
  const long long parts = std::max<long long>(
      1, std::min<long long>((b.n + kReduceThreads - 1) / kReduceThreads, 8ll * multiprocessor_count(b.bd.device)));
  Buffer scratch(static_cast<std::size_t>(parts) * dtype_size(b.rt), stream);
  launch_partials(b, pp, name, stream, parts, scratch.data());
  launch_final(b, pp, name, stream, parts, scratch.data(), b.n);
}

ReductionPartials reduction_partials(const std::vector<Param>& params, const Reduction& r, const std::string& name,
                                     std::vector<KernelArg> args, int parts) {
  const BoundReduction b = bind_reduction(params, r, name, args, false);
  const Stream& stream = Stream::default_for(b.bd.device);
  ReductionPartials out{Buffer(static_cast<std::size_t>(parts) * dtype_size(b.rt), stream), b.rt, b.n};
  launch_partials(b, ParamPusher{params, args, b.R}, name, stream, parts, out.values.data());
  return out;
}

void finish_reduction(const std::vector<Param>& params, const Reduction& r, const std::string& name,
                      std::vector<KernelArg> args, const void* partials, std::int64_t count, std::int64_t n_reduced) {
  const BoundReduction b = bind_reduction(params, r, name, args, false);
  launch_final(b, ParamPusher{params, args, b.R}, name, Stream::default_for(b.bd.device), count, partials, n_reduced);
}

}  // namespace jit

namespace {
// A string kernel's parameters: the inputs, then the outputs; `name` must be an identifier.
std::vector<jit::Param> signature(const std::string& in_params, const std::string& out_params, const std::string& name,
                                  const char* what) {
  auto params = jit::parse_params(in_params, false);
  for (auto& p : jit::parse_params(out_params, true)) params.push_back(p);
  if (!jit::identifier(name)) throw InvalidArgument(std::string(what) + ": name '" + name + "' is not an identifier");
  return params;
}
}  // namespace

ReductionKernel::ReductionKernel(const std::string& in_params, const std::string& out_params, std::string map,
                                 std::string reduce, std::string post_map, std::string identity, std::string name,
                                 std::string reduce_type)
    : params_(signature(in_params, out_params, name, "ReductionKernel")),
      r_{std::move(map), std::move(reduce), std::move(post_map), std::move(identity), std::move(reduce_type)},
      name_(std::move(name)) {}

ElementwiseKernel::ElementwiseKernel(const std::string& in_params, const std::string& out_params, std::string body,
                                     std::string name)
    : params_(signature(in_params, out_params, name, "ElementwiseKernel")), body_(std::move(body)),
      name_(std::move(name)) {}

}  // namespace tessera::local
