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

void run_string_kernel(const std::vector<Param>& params, const std::string& body, const std::string& name,
                       std::vector<KernelArg> args) {
  if (args.size() != params.size())
    throw InvalidArgument("ElementwiseKernel " + name + ": " + std::to_string(params.size()) + " parameters, " +
                          std::to_string(args.size()) + " arguments");
  // Types: concrete, or bound by the first array (else scalar) using the placeholder.
  std::map<std::string, DType> bound;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t k = 0; k < params.size(); ++k)
      if (!concrete(params[k].type) && (pass == 1 || !args[k].scalar)) bound.emplace(params[k].type, args[k].type);
  std::vector<DType> types;
  std::vector<bool> scalar;
  std::optional<Device> dev;
  int rank = -1;
  for (std::size_t k = 0; k < params.size(); ++k) {
    const auto c = concrete(params[k].type);
    const DType want = c ? *c : bound.at(params[k].type);
    KernelArg& a = args[k];
    if (params[k].is_output && a.scalar)
      throw InvalidArgument("ElementwiseKernel " + name + ": output " + params[k].name + " must be an array");
    if (a.scalar && a.type != want) a = converted(a, want);  // scalars take their parameter's type (weak)
    if (!a.scalar && a.type != want)
      throw InvalidArgument("ElementwiseKernel " + name + ": " + params[k].name + " is " + dtype_name(a.type) + ", but " +
                            params[k].type + " is " + dtype_name(want) + " here");
    if (!a.scalar) {
      if (dev && *dev != a.device)
        throw DeviceMismatch("ElementwiseKernel " + name + ": " + params[k].name + " on " + a.device.str() + ", others on " +
                             dev->str(), a.device);
      if (rank >= 0 && a.rank != rank)
        throw ShapeMismatch("ElementwiseKernel " + name + ": " + params[k].name + " is " + std::to_string(a.rank) +
                            "-D, others " + std::to_string(rank) + "-D");
      dev = a.device, rank = a.rank;
    }
    types.push_back(want);
    scalar.push_back(a.scalar);
  }
  if (!dev) throw InvalidArgument("ElementwiseKernel " + name + ": no array argument");
  if (!dev->is_cuda())
    throw BackendUnavailable("ElementwiseKernel " + name + " runs on GPU arrays; the arrays are on " + dev->str(), *dev);
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
  bool linear = true;
  for (std::size_t k = 0; k < params.size(); ++k) {
    KernelArg& a = args[k];
    if (a.scalar) continue;
    std::int64_t expect = 1;
    for (int d = rank - 1; d >= 0; --d) {
      if (a.shape[d] != shape[d]) {
        if (a.shape[d] != 1 || params[k].is_output)
          throw ShapeMismatch("ElementwiseKernel " + name + ": " + params[k].name + " of extent " +
                              std::to_string(a.shape[d]) + " along axis " + std::to_string(d) + " does not broadcast to " +
                              std::to_string(shape[d]), *dev);
        a.strides[d] = 0, linear = false;
      } else if (a.shape[d] != 1 && a.strides[d] != expect) {
        linear = false;
      }
      expect *= a.shape[d];
    }
  }
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

}  // namespace jit

ElementwiseKernel::ElementwiseKernel(const std::string& in_params, const std::string& out_params, std::string body,
                                     std::string name)
    : body_(std::move(body)), name_(std::move(name)) {
  params_ = jit::parse_params(in_params, false);
  for (auto& p : jit::parse_params(out_params, true)) params_.push_back(p);
  if (!jit::identifier(name_)) throw InvalidArgument("ElementwiseKernel: name '" + name_ + "' is not an identifier");
}

}  // namespace tessera::local
