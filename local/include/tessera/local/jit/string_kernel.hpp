// String kernels, as CuPy's ElementwiseKernel: parameter lists with type placeholders bound at
// call time, a body of CUDA C++ per element, broadcasting of size-1 dimensions, compiled by NVRTC
// through the runtime kernel compiler's caches (jit/compiler.hpp).
//
//   tessera::local::ElementwiseKernel k("T x, T y", "T z", "z = x * sin(y) + 1", "my_kernel");
//   k(x, y, z);                                    // inputs, then outputs (same rank; z of the broadcast shape)
//   auto w = k.returning<float, 1>(x, y);          // the one output allocated
//
// Types: a concrete name (bool, int32, int64, float32, float64, complex64, complex128) or a
// placeholder (any other identifier), bound by the first argument that uses it; every later one
// must have that type (InvalidArgument naming the parameter). Scalars (C++ arithmetic values) may
// stand for inputs. In the body the parameters are the element values (outputs as references),
// `i` the flat index of the element, placeholders are typedefs. GPU arrays only; a body that does
// not compile throws jit::CompileError naming the kernel, with NVRTC's log and the line.
#pragma once
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/local/array.hpp"
#include "tessera/local/jit/compiler.hpp"
#include "tessera/local/memory.hpp"

namespace tessera::local {

namespace jit {
/// One parameter: its declared type (concrete or placeholder) and name.
struct Param {
  std::string type, name;
  bool is_output = false;
};
/// "T x, float32 y" -> params; InvalidArgument for a malformed list.
std::vector<Param> parse_params(const std::string& list, bool outputs);
/// One call argument, type-erased: an array (pointer, shape, strides) or a scalar's bytes.
struct KernelArg {
  DType type = DType::float32;
  bool scalar = false;
  void* ptr = nullptr;
  int rank = 0;
  std::array<std::int64_t, 6> shape{}, strides{};
  std::array<unsigned char, 16> value{};
  Device device = Device::host();
};
/// The CUDA source of a string kernel for bound types: `name` with (n, shape, and per array
/// argument pointer + strides, per scalar its value), `linear` when every array is contiguous and
/// of the output shape.
std::string string_kernel_source(const std::vector<Param>& params, const std::vector<DType>& types,
                                 const std::vector<bool>& scalar, const std::string& body, const std::string& name,
                                 int rank, bool linear);
/// Binds, broadcasts, compiles (or finds) and launches on the outputs' device's default stream.
void run_string_kernel(const std::vector<Param>& params, const std::string& body, const std::string& name,
                       std::vector<KernelArg> args);
/// A reduction kernel's parts (ReductionKernel below).
struct Reduction {
  std::string map, reduce, post_map, identity, reduce_type;
};
/// The source of a reduction for bound types: kernels <name>_rows (a block per row of the last
/// axis), <name>_partial and <name>_final (the whole array in two passes); `linear` when every
/// input is contiguous of the domain's shape (loads at the flat index, no index arithmetic).
std::string reduction_source(const std::vector<Param>& params, const std::vector<DType>& types,
                             const std::vector<bool>& scalar, const Reduction& r, DType reduce_type,
                             const std::string& name, int rank, bool linear);
/// Binds and launches a reduction over the whole array (rows = false) or along the last axis.
void run_reduction(const std::vector<Param>& params, const Reduction& r, const std::string& name,
                   std::vector<KernelArg> args, bool rows);
/// A whole-array reduction in two halves, for front ends that combine across ranks: the first
/// half leaves `parts` values of the reduce type (blocks without elements leave the identity) on
/// the arguments' device, in stream order; the second combines `count` such values gathered from
/// every rank and writes the outputs through post_map with n_reduced elements.
struct ReductionPartials {
  Buffer values;
  DType type;
  std::int64_t n_reduced;
};
ReductionPartials reduction_partials(const std::vector<Param>& params, const Reduction& r, const std::string& name,
                                     std::vector<KernelArg> args, int parts);
void finish_reduction(const std::vector<Param>& params, const Reduction& r, const std::string& name,
                      std::vector<KernelArg> args, const void* partials, std::int64_t count, std::int64_t n_reduced);
}  // namespace jit

class ElementwiseKernel {
 public:
  ElementwiseKernel(const std::string& in_params, const std::string& out_params, std::string body,
                    std::string name = "tessera_elementwise");
  /// Inputs (arrays or scalars) then outputs (arrays), in the order of the parameter lists.
  template <class... A> void operator()(const A&... args) const {
    std::vector<jit::KernelArg> v;
    (v.push_back(to_arg(args)), ...);
    jit::run_string_kernel(params_, body_, name_, std::move(v));
  }
  /// The one output, allocated with the inputs' broadcast shape on their device.
  template <class T, int R, class... A> Array<T, R> returning(const A&... in) const {
    Shape<R> shape{};
    shape.fill(1);
    std::optional<Device> dev;
    auto widen = [&](const auto& x) {
      if constexpr (requires { x.shape(); }) {
        for (int d = 0; d < R; ++d)
          if (x.shape()[d] != 1) shape[d] = x.shape()[d];
        dev = x.device();
      }
    };
    (widen(in), ...);
    Array<T, R> out(shape, dev ? *dev : Device::host());
    (*this)(in..., out);
    return out;
  }
  const std::string& name() const noexcept { return name_; }

  /// One call argument, type-erased (arrays and scalars; shared with ReductionKernel).
  template <class X> static jit::KernelArg to_arg(const X& x) {
    jit::KernelArg a;
    if constexpr (std::is_arithmetic_v<X> || is_complex_v<X>) {
      using T = std::conditional_t<std::is_same_v<X, int>, std::int32_t,
                                   std::conditional_t<std::is_same_v<X, long long>, std::int64_t, X>>;
      const T v = static_cast<T>(x);
      a.type = dtype_v<T>, a.scalar = true;
      std::memcpy(a.value.data(), &v, sizeof v);
    } else {
      a.type = dtype_v<typename X::value_type>, a.ptr = const_cast<void*>(static_cast<const void*>(x.data()));
      a.rank = X::rank, a.device = x.device();
      for (int d = 0; d < X::rank; ++d) a.shape[d] = x.shape()[d], a.strides[d] = x.strides()[d];
    }
    return a;
  }

 private:
  std::vector<jit::Param> params_;
  std::string body_, name_;
};

/// A reduction kernel, as CuPy's ReductionKernel: `map` per element (in terms of the inputs),
/// combined by `reduce` (in terms of a and b) from `identity`, then `post_map` (in terms of the
/// reduced value a, the outputs and n_reduced, the number of elements combined) writes the
/// outputs; the reduce type is `reduce_type` (a type or placeholder; default: the first
/// output's). k(inputs..., outputs...) reduces everything (outputs of one element);
/// k.along_last_axis(inputs..., outputs...) reduces each row of the last axis (outputs with
/// extent 1 there). GPU arrays; a block-wide tree in shared memory per row or per part.
///   ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm");
class ReductionKernel {
 public:
  ReductionKernel(const std::string& in_params, const std::string& out_params, std::string map, std::string reduce,
                  std::string post_map, std::string identity, std::string name = "tessera_reduction",
                  std::string reduce_type = "");
  template <class... A> void operator()(const A&... args) const { run(false, args...); }
  template <class... A> void along_last_axis(const A&... args) const { run(true, args...); }
  const std::string& name() const noexcept { return name_; }
  /// k(...) or k.along_last_axis(...) on arguments already described (a binding's).
  void run_args(std::vector<jit::KernelArg> args, bool along_last_axis) const {
    jit::run_reduction(params_, r_, name_, std::move(args), along_last_axis);
  }
  /// The two halves of k(args...) (jit::reduction_partials, jit::finish_reduction).
  jit::ReductionPartials partials(std::vector<jit::KernelArg> args, int parts) const {
    return jit::reduction_partials(params_, r_, name_, std::move(args), parts);
  }
  void finish(std::vector<jit::KernelArg> args, const void* partials, std::int64_t count, std::int64_t n_reduced) const {
    jit::finish_reduction(params_, r_, name_, std::move(args), partials, count, n_reduced);
  }

 private:
  template <class... A> void run(bool rows, const A&... args) const {
    std::vector<jit::KernelArg> v;
    (v.push_back(ElementwiseKernel::to_arg(args)), ...);
    jit::run_reduction(params_, r_, name_, std::move(v), rows);
  }
  std::vector<jit::Param> params_;
  jit::Reduction r_;
  std::string name_;
};

}  // namespace tessera::local
