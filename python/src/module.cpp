// tessera._tessera: the compiled core of the Python package. It stands on the C API (one
// type-erased dispatch over element type and rank, shared with C and Fortran callers): objects
// are the C API's handles, every call's status becomes the matching Python exception with the C
// API's message, and collective or long calls release the GIL. The few operations the C API does
// not have yet (random fills, reductions along grid axes, the runtime kernel compiler's launch)
// are here, on the same handles and dispatch.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <complex>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "handles.hpp"
#include "tessera/local/jit/compiler.hpp"
#include "tessera/local/jit/string_kernel.hpp"
#ifdef TESSERA_PYTHON_DLPACK
#include "tessera/tessera_dlpack.h"
#endif

namespace py = pybind11;
using namespace tessera;
using namespace tessera::capi;

namespace {

// The Python exception class of each status (set by the package at import: tessera/_errors.py).
std::map<int, py::object>& error_classes() {
  static auto* classes = new std::map<int, py::object>();  // never destroyed: lives past the interpreter's teardown
  return *classes;
}

[[noreturn]] void raise_status(tessera_status st) {
  const std::string msg = tessera_last_error();
  auto& classes = error_classes();
  auto it = classes.find(static_cast<int>(st));
  PyObject* cls = it != classes.end() ? it->second.ptr() : PyExc_RuntimeError;
  PyErr_SetString(cls, msg.c_str());
  throw py::error_already_set();
}

// Runs a C API call with the GIL released; raises its status.
template <class F>
void call(F&& f) {
  tessera_status st;
  {
    py::gil_scoped_release release;
    st = f();
  }
  if (st != TESSERA_SUCCESS) raise_status(st);
}

// Runs work on the internals (C++ exceptions) with the GIL released, as the C API's guard does.
template <class F>
void guarded(const char* op, F&& f) {
  call([&] { return guard(op, f); });
}


py::dict layout_info(std::uint64_t id) {
  int ndim = 0;
  std::array<int64_t, TESSERA_MAX_RANK> shape{}, lo{}, hi{}, padded{};
  call([&] { return tessera_layout_info({id}, &ndim, shape.data(), lo.data(), hi.data(), padded.data()); });
  const auto first = [&](const std::array<int64_t, TESSERA_MAX_RANK>& a) {
    return std::vector<int64_t>(a.begin(), a.begin() + ndim);
  };
  py::dict d;
  d["shape"] = first(shape);
  d["lo"] = first(lo);
  d["hi"] = first(hi);
  d["padded"] = first(padded);
  return d;
}

// The layout's process grid (the C API keeps it in the layout).
const distributed::ProcessGrid& grid_of(const LayoutObj& l) {
  const distributed::ProcessGrid* g = nullptr;
  std::visit(
      [&](const auto& lay) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(lay)>, std::monostate>) g = &lay.grid();
      },
      l.v);
  if (!g) throw InvalidHandle("layout holds no grid");
  return *g;
}

// Which grid axis each array axis of the layout is split over (-1: whole).
std::vector<int> layout_split(std::uint64_t id) {
  std::vector<int> split;
  guarded("layout_split", [&] {
    auto l = get_layout({id}, "layout");
    std::visit(
        [&](const auto& lay) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(lay)>, std::monostate>)
            for (int a = 0; a < l->ndim; ++a) split.push_back(lay.split()[a]);
        },
        l->v);
  });
  return split;
}

comm::ReduceOp reduce_op(const std::string& op) {
  if (op == "sum") return comm::ReduceOp::sum;
  if (op == "prod") return comm::ReduceOp::prod;
  if (op == "min") return comm::ReduceOp::min;
  if (op == "max") return comm::ReduceOp::max;
  throw InvalidArgument("reduction '" + op + "' is none of sum, prod, min, max");
}

// All-reduce of `count` elements at `ptr` (host, or device memory of the runtime's GPU) over the
// ranks of the layout's grid that differ only along `grid_axes`: the partial results of an
// array reduced along split axes. Device buffers go through NCCL on Tessera's stream.
void axis_all_reduce(std::uint64_t layout, const std::vector<int>& grid_axes, std::uintptr_t ptr, int64_t count,
                     int dtype, const std::string& op, int memory) {
  guarded("axis_all_reduce", [&] {
    auto l = get_layout({layout}, "layout");
    const auto& grid = grid_of(*l);
    const Device d = memory_device(static_cast<tessera_memory>(memory));
    const auto t = value_of_dtype(static_cast<tessera_dtype>(dtype));
    const auto rop = reduce_op(op);
    for (int axis : grid_axes) {
      if (axis < 0 || axis >= grid.ndims())
        throw InvalidArgument("grid axis " + std::to_string(axis) + " outside 0.." + std::to_string(grid.ndims() - 1));
      const auto& g = grid.axis_group(axis);
      void* p = reinterpret_cast<void*>(ptr);
      g.all_reduce(p, p, static_cast<std::size_t>(count), t, rop, Stream::default_for(d));
    }
    Stream::default_for(d).synchronize();
  });
}

// Fills the interior of array `a` with counter-based random numbers keyed by the global index
// (the same values on any grid and device, as td::random_uniform / random_normal).
void fill_random(std::uint64_t id, const std::string& kind, std::uint64_t seed, double p1, double p2) {
  guarded("fill_random", [&] {
    auto a = get_array({id}, "a");
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        auto& arr = typed<T, R>(*a);
        before(*a);
        auto r = kind == "normal" ? distributed::random_normal<T, R>(arr.layout(), a->device, seed, T(p1), T(p2))
                 : kind == "uniform"
                     ? distributed::random_uniform<T, R>(arr.layout(), a->device, seed, T(p1), T(p2))
                     : throw InvalidArgument("random kind '" + kind + "' is neither uniform nor normal");
        local::copy(arr.interior(), r.interior());
        after(*a);
      } else {
        throw DtypeMismatch("random " + kind + " fills float32 or float64 arrays, not " + dtype_name(a->dtype));
      }
    });
  });
}

local::jit::Kernel ir_kernel(const std::vector<std::array<int, 6>>& nodes, int out_dtype, int rank, bool linear);

// One fused elementwise kernel of the runtime kernel compiler (NVRTC) on the runtime's GPU, for
// one output geometry and operand strides: made (and compiled, once per structure) when an
// expression of this shape is first assigned, then launched with new pointers and scalars per call
// (a dict lookup and one launch: the per-call cost of a small expression).
class JitPlan {
 public:
  JitPlan(const std::vector<std::array<int, 6>>& nodes, int out_dtype, const std::vector<int64_t>& shape,
          const std::vector<int64_t>& out_strides, const std::vector<std::vector<int64_t>>& operand_strides,
          bool linear) {
    guarded("jit_plan", [&] {
      local::jit::Args g;
      if (shape.size() > g.shape.size()) throw InvalidArgument("expression of rank " + std::to_string(shape.size()));
      local::jit::Kernel k = ir_kernel(nodes, out_dtype, static_cast<int>(shape.size()), linear);
      g.n = 1;
      for (std::size_t d = 0; d < shape.size(); ++d) g.n *= shape[d], g.shape[d] = shape[d], g.out_strides[d] = out_strides[d];
      k.index32 = g.n < (int64_t(1) << 31);
      for (const auto& strides : operand_strides) {
        local::jit::Operand o;
        for (std::size_t d = 0; d < strides.size() && d < o.strides.size(); ++d) o.strides[d] = strides[d];
        g.operands.push_back(o);
      }
      // Compiled (or found in the caches) now, with the GIL released.
      prepared_ = std::make_unique<local::jit::Prepared>(k, g, runtime_device());
      ptrs_.resize(g.operands.size());
      scalars_.resize(static_cast<std::size_t>(k.scalars()));
    });
  }

  // out: an address; operands: a list of addresses; scalars: a list of bytes (each its node's type).
  void launch(std::uintptr_t out, const py::list& operands, const py::list& scalars) {
    const std::size_t m = std::min<std::size_t>(py::len(operands), ptrs_.size());
    for (std::size_t i = 0; i < m; ++i) ptrs_[i] = PyLong_AsVoidPtr(PyList_GET_ITEM(operands.ptr(), i));
    const std::size_t c = std::min<std::size_t>(py::len(scalars), scalars_.size());
    for (std::size_t i = 0; i < c; ++i) {
      char* data = nullptr;
      Py_ssize_t size = 0;
      if (PyBytes_AsStringAndSize(PyList_GET_ITEM(scalars.ptr(), i), &data, &size) != 0) throw py::error_already_set();
      scalars_[i] = {};
      std::memcpy(scalars_[i].data(), data, std::min<std::size_t>(static_cast<std::size_t>(size), 16));
    }
    if (PyErr_Occurred()) throw py::error_already_set();
    run(reinterpret_cast<void*>(out), py::len(operands), py::len(scalars));
  }

  // The launch itself, of the pointers and scalars set. Asynchronous and short: the GIL stays
  // held (releasing it costs more).
  void run(void* out, std::size_t operands, std::size_t scalars) {
    const tessera_status st = guard("jit_launch", [&] {
      prepared_->launch(out, ptrs_.data(), operands, scalars_.data(), scalars, Stream::default_for(prepared_->device()));
    });
    if (st != TESSERA_SUCCESS) raise_status(st);
  }
  std::vector<const void*>& pointers() { return ptrs_; }
  std::vector<std::array<unsigned char, 16>>& scalars() { return scalars_; }

 private:
  std::unique_ptr<local::jit::Prepared> prepared_;
  std::vector<const void*> ptrs_;
  std::vector<std::array<unsigned char, 16>> scalars_;
};

// The bytes of one element of the tessera_dtype `code`.
std::size_t code_size(int code) {
  constexpr std::size_t sizes[] = {4, 8, 8, 16, 4, 8, 1};  // F32, F64, C64, C128, I32, I64, BOOL
  return code >= 0 && code < 7 ? sizes[code] : 0;
}

// A scalar's bytes in the tessera_dtype `code` (numpy.asarray(v).astype(dtype).tobytes()) for
// Python's bool, int, float and complex; false for other values (the caller converts them).
bool scalar_bytes(PyObject* v, int code, std::array<unsigned char, 16>& b) {
  b = {};
  auto put = [&](auto x) { std::memcpy(b.data(), &x, sizeof x); return true; };
  const bool is_int = PyLong_CheckExact(v) || PyBool_Check(v), is_float = PyFloat_Check(v);
  if (!is_int && !is_float && !PyComplex_CheckExact(v)) return false;
  if (is_int) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (i == -1 && PyErr_Occurred())) return PyErr_Clear(), false;
    switch (code) {
      case TESSERA_F32: return put(static_cast<float>(i));
      case TESSERA_F64: return put(static_cast<double>(i));
      case TESSERA_C64: return put(std::complex<float>(static_cast<float>(i)));
      case TESSERA_C128: return put(std::complex<double>(static_cast<double>(i)));
      case TESSERA_I32: return put(static_cast<std::int32_t>(i));
      case TESSERA_I64: return put(static_cast<std::int64_t>(i));
      case TESSERA_BOOL: return put(static_cast<unsigned char>(i != 0));
      default: return false;
    }
  }
  const Py_complex z = is_float ? Py_complex{PyFloat_AS_DOUBLE(v), 0.0} : PyComplex_AsCComplex(v);
  switch (code) {
    case TESSERA_F32: return !z.imag && put(static_cast<float>(z.real));
    case TESSERA_F64: return !z.imag && put(z.real);
    case TESSERA_C64: return put(std::complex<float>(static_cast<float>(z.real), static_cast<float>(z.imag)));
    case TESSERA_C128: return put(std::complex<double>(z.real, z.imag));
    default: return false;  // (a float into an integer or bool kernel: NumPy's rules decide)
  }
}

// A destination's last expression kernel (python/tessera/_array.py launch()): run(e) launches it
// again, with e's scalars, when e has the same structure (sig) over the same arrays (the same
// view objects, arrays alive), and says whether it did; the caller lowers e otherwise. Made
// without a kernel (None), it only matches.
class Repeat {
 public:
  Repeat(std::shared_ptr<JitPlan> plan, py::object sig, py::tuple views, std::uintptr_t out,
         const std::vector<std::uintptr_t>& pointers, std::vector<int> wants)
      : plan_(std::move(plan)), sig_(std::move(sig)), views_(std::move(views)), out_(reinterpret_cast<void*>(out)),
        wants_(std::move(wants)) {
    for (std::uintptr_t p : pointers) pointers_.push_back(reinterpret_cast<const void*>(p));
  }

  bool run(py::handle e) {
    if (!plan_) raise_status(guard("Repeat.run", [] { throw InvalidArgument("a Repeat made without a kernel only matches"); }));
    if (!bind(e, plan_->scalars())) return false;
    std::copy(pointers_.begin(), pointers_.end(), plan_->pointers().begin());
    plan_->run(out_, pointers_.size(), wants_.size());
    return true;
  }

  // The scalars' bytes run(e) would launch with, or None where it would not (what the tests of
  // hosts without a GPU check).
  py::object match(py::handle e) {
    std::vector<std::array<unsigned char, 16>> scalars(wants_.size());
    if (!bind(e, scalars)) return py::none();
    py::list out;
    for (std::size_t i = 0; i < scalars.size(); ++i)
      out.append(py::bytes(reinterpret_cast<const char*>(scalars[i].data()), code_size(wants_[i])));
    return out;
  }

 private:
  // Whether e repeats this kernel's expression; its scalars' bytes into `scalars` if so.
  bool bind(py::handle e, std::vector<std::array<unsigned char, 16>>& scalars) {
    static PyObject* const sig_name = PyUnicode_InternFromString("sig");
    static PyObject* const leaves_name = PyUnicode_InternFromString("leaves");
    static PyObject* const consts_name = PyUnicode_InternFromString("consts");
    static PyObject* const value_name = PyUnicode_InternFromString("value");
    static PyObject* const views_name = PyUnicode_InternFromString("_views");
    static PyObject* const id_name = PyUnicode_InternFromString("_id");
    const py::object sig = steal(PyObject_GetAttr(e.ptr(), sig_name));
    if (sig.ptr() != sig_.ptr()) {
      const int same = PyObject_RichCompareBool(sig.ptr(), sig_.ptr(), Py_EQ);
      if (same < 0) throw py::error_already_set();
      if (!same) return false;
    }
    const py::object leaves = steal(PyObject_GetAttr(e.ptr(), leaves_name));
    if (!PyTuple_Check(leaves.ptr()) || PyTuple_GET_SIZE(leaves.ptr()) != PyTuple_GET_SIZE(views_.ptr())) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(leaves.ptr()); ++i) {
      PyObject* a = PyTuple_GET_ITEM(leaves.ptr(), i);
      const py::object views = steal(PyObject_GetAttr(a, views_name)), id = steal(PyObject_GetAttr(a, id_name));
      if (views.ptr() != PyTuple_GET_ITEM(views_.ptr(), i) || id.ptr() == Py_None) return false;
    }
    const py::object consts = steal(PyObject_GetAttr(e.ptr(), consts_name));
    if (!PyTuple_Check(consts.ptr()) || static_cast<std::size_t>(PyTuple_GET_SIZE(consts.ptr())) != wants_.size())
      return false;
    for (std::size_t i = 0; i < wants_.size(); ++i) {
      const py::object v = steal(PyObject_GetAttr(PyTuple_GET_ITEM(consts.ptr(), i), value_name));
      if (!scalar_bytes(v.ptr(), wants_[i], scalars[i])) return false;
    }
    return true;
  }
  static py::object steal(PyObject* o) {
    if (!o) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(o);
  }
  std::shared_ptr<JitPlan> plan_;
  py::object sig_;
  py::tuple views_;
  void* out_;
  std::vector<const void*> pointers_;
  std::vector<int> wants_;
};

// A string kernel (CuPy's ElementwiseKernel) on this rank's shards: args are (dtype code, is
// scalar, address, shape, strides in elements, scalar bytes) in the parameter lists' order.
// A string kernel's arguments: (dtype code, is scalar, address, shape, strides in elements,
// scalar bytes) each, in the parameter lists' order; arrays on the runtime's device.
std::vector<local::jit::KernelArg> kernel_args(const std::vector<py::tuple>& args) {
  std::vector<local::jit::KernelArg> v;
  for (const auto& t : args) {
    local::jit::KernelArg a;
    a.type = value_of_dtype(static_cast<tessera_dtype>(t[0].cast<int>()));
    a.scalar = t[1].cast<bool>();
    a.ptr = reinterpret_cast<void*>(t[2].cast<std::uintptr_t>());
    const auto shape = t[3].cast<std::vector<int64_t>>(), strides = t[4].cast<std::vector<int64_t>>();
    a.rank = static_cast<int>(std::min(shape.size(), a.shape.size()));
    for (int d = 0; d < a.rank; ++d) a.shape[d] = shape[d], a.strides[d] = strides[d];
    const std::string value = t[5].cast<std::string>();
    std::memcpy(a.value.data(), value.data(), std::min(value.size(), a.value.size()));
    v.push_back(a);
  }
  return v;
}

// The array arguments placed on device `d` (kernel_args reads them with the GIL held, before the
// device is known).
void place_on(std::vector<local::jit::KernelArg>& v, Device d) {
  for (auto& a : v)
    if (!a.scalar) a.device = d;
}

// A ReductionKernel from the Python object's code list (its constructor's eight strings).
local::ReductionKernel reduction_kernel(const std::vector<std::string>& code) {
  return local::ReductionKernel(code.at(0), code.at(1), code.at(2), code.at(3), code.at(4), code.at(5), code.at(6),
                                code.at(7));
}

void run_string_kernel(const std::string& in_params, const std::string& out_params, const std::string& body,
                       const std::string& name, const std::vector<py::tuple>& args) {
  auto v = kernel_args(args);
  guarded("ElementwiseKernel", [&] {
    auto params = local::jit::parse_params(in_params, false);
    for (auto& p : local::jit::parse_params(out_params, true)) params.push_back(p);
    place_on(v, runtime_device());
    local::jit::run_string_kernel(params, body, name, std::move(v));
  });
}

// A reduction kernel along the last axis of this rank's blocks (held whole): `args` as
// run_string_kernel's, the inputs then the outputs (extent 1 along the last axis). Not collective.
void run_reduction_rows(const std::vector<std::string>& code, const std::vector<py::tuple>& args) {
  auto v = kernel_args(args);
  guarded("ReductionKernel", [&] {
    place_on(v, runtime_device());
    reduction_kernel(code).run_args(std::move(v), true);
  });
}

// A reduction kernel (CuPy's ReductionKernel) over the inputs `args` (as run_string_kernel's),
// distributed arrays of the layout of array `like` and scalars: every rank's partials, one
// all-gather, post_map into one element per output (types `out_dtypes`, tessera_dtype codes).
// Returns the outputs' bytes, the same on every rank. Collective over the layout's group.
std::vector<py::bytes> run_reduction_kernel(const std::vector<std::string>& code, std::uint64_t like,
                                            const std::vector<py::tuple>& args, const std::vector<int>& out_dtypes) {
  auto v = kernel_args(args);
  std::vector<std::string> values;
  guarded("ReductionKernel", [&] {
    const local::ReductionKernel k = reduction_kernel(code);
    auto a = get_array({like}, "like");
    const Device d = a->device;
    place_on(v, d);
    // The outputs: one element each, of the inputs' rank, on the device.
    std::vector<Buffer> outs;
    for (int c : out_dtypes) {
      local::jit::KernelArg o;
      o.type = value_of_dtype(static_cast<tessera_dtype>(c));
      outs.emplace_back(dtype_size(o.type), d);
      o.ptr = outs.back().data(), o.rank = a->ndim, o.device = d;
      for (int i = 0; i < o.rank; ++i) o.shape[i] = 1, o.strides[i] = 1;
      v.push_back(o);
    }
    dispatch(a->dtype, a->ndim, [&]<class T, int R>() {
      const auto& layout = typed<T, R>(*a).layout();
      before(*a);
      distributed::reduce_blocks(k, v, layout.grid().group(), layout.global_size());
      after(*a);
    });
    for (auto& b : outs) {
      std::string bytes(b.bytes(), '\0');
      detail::memcpy_any(bytes.data(), Device::host(), b.data(), d, b.bytes(), Stream::default_for(d));
      values.push_back(std::move(bytes));
    }
    Stream::default_for(d).synchronize();
  });
  std::vector<py::bytes> out;
  for (const auto& b : values) out.emplace_back(b);
  return out;
}

// The kernel of an IR node list (as jit_launch takes it), validated.
local::jit::Kernel ir_kernel(const std::vector<std::array<int, 6>>& nodes, int out_dtype, int rank, bool linear) {
  local::jit::Kernel k;
  for (const auto& n : nodes)
    k.nodes.push_back({static_cast<local::jit::Op>(n[0]), value_of_dtype(static_cast<tessera_dtype>(n[1])), n[2], n[3], n[4],
                       n[5]});
  k.out = value_of_dtype(static_cast<tessera_dtype>(out_dtype));
  k.rank = rank;
  k.linear = linear;
  k.validate();
  return k;
}

#ifdef TESSERA_PYTHON_DLPACK
// A "dltensor" capsule of the shard (DLPack's Python protocol): the consumer renames it
// "used_dltensor" and owns the tensor; an unconsumed capsule deletes it.
py::capsule shard_capsule(std::uint64_t id, bool with_halos) {
  DLManagedTensor* t = nullptr;
  call([&] { return tessera_array_to_dlpack({id}, with_halos ? 1 : 0, &t); });
  PyObject* cap = PyCapsule_New(t, "dltensor", [](PyObject* c) {
    if (PyCapsule_IsValid(c, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
  if (!cap) {
    t->deleter(t);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}
#endif

}  // namespace

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "Tessera's compiled core (the C API's handles and dispatch); use the tessera package";
  m.def("_set_error_classes", [](const std::map<int, py::object>& classes) { error_classes() = classes; });
  m.def("version", [] { return std::string(tessera_version(nullptr, nullptr, nullptr)); });
  m.def("live_handles", [] { return tessera_live_handles(); });
  m.def("nvrtc_available", [] { return local::jit::nvrtc_available(); });

  // Runtime, grids, layouts.
  m.def("runtime_create", [](int fcomm, const std::string& device) {
    tessera_runtime rt{};
    call([&] { return tessera_runtime_create_f(static_cast<MPI_Fint>(fcomm), device.c_str(), &rt); });
    return rt.id;
  });
  m.def("runtime_free", [](std::uint64_t id) { call([&] { return tessera_runtime_free({id}); }); });
  m.def("runtime_info", [](std::uint64_t id) {
    int rank = 0, size = 0, is_cuda = 0;
    char dev[64] = {};
    call([&] { return tessera_runtime_rank({id}, &rank, &size); });
    call([&] { return tessera_runtime_device({id}, dev, sizeof dev, &is_cuda); });
    return py::make_tuple(rank, size, std::string(dev));
  });
  m.def("runtime_synchronize", [](std::uint64_t id) { call([&] { return tessera_runtime_synchronize({id}); }); });
  m.def("grid_create", [](std::uint64_t rt, std::vector<int> dims) {
    tessera_grid g{};
    call([&] { return tessera_grid_create({rt}, static_cast<int>(dims.size()), dims.data(), nullptr, &g); });
    return g.id;
  });
  m.def("grid_free", [](std::uint64_t id) { call([&] { return tessera_grid_free({id}); }); });
  m.def("grid_info", [](std::uint64_t id) {
    int ndims = 0;
    std::array<int, 8> dims{}, coords{};
    call([&] { return tessera_grid_info({id}, &ndims, nullptr, nullptr); });
    call([&] { return tessera_grid_info({id}, &ndims, dims.data(), coords.data()); });
    return py::make_tuple(std::vector<int>(dims.begin(), dims.begin() + ndims),
                          std::vector<int>(coords.begin(), coords.begin() + ndims));
  });
  m.def("layout_create", [](std::uint64_t grid, std::vector<int64_t> shape, std::vector<int> split,
                            std::vector<int64_t> halo, std::vector<int> periodic) {
    tessera_layout l{};
    call([&] {
      return tessera_layout_create({grid}, static_cast<int>(shape.size()), shape.data(), split.data(), nullptr,
                                   halo.data(), periodic.data(), &l);
    });
    return l.id;
  });
  m.def("layout_create_offsets", [](std::uint64_t grid, std::vector<int64_t> shape, std::vector<int> split,
                                    std::vector<int64_t> offsets) {
    tessera_layout l{};
    call([&] {
      return tessera_layout_create({grid}, static_cast<int>(shape.size()), shape.data(), split.data(), offsets.data(),
                                   nullptr, nullptr, &l);
    });
    return l.id;
  });
  m.def("layout_free", [](std::uint64_t id) { call([&] { return tessera_layout_free({id}); }); });
  m.def("layout_info", &layout_info);
  m.def("layout_split", &layout_split);

  // Arrays.
  m.def("array_create", [](std::uint64_t layout, int dtype) {
    tessera_array a{};
    call([&] { return tessera_array_create({layout}, static_cast<tessera_dtype>(dtype), &a); });
    return a.id;
  });
  m.def("array_adopt", [](std::uint64_t layout, int dtype, std::uintptr_t data, int64_t elements, int memory,
                          std::uintptr_t stream) {
    tessera_array a{};
    call([&] {
      return tessera_array_adopt({layout}, static_cast<tessera_dtype>(dtype), reinterpret_cast<void*>(data), elements,
                                 static_cast<tessera_memory>(memory), reinterpret_cast<void*>(stream), &a);
    });
    return a.id;
  });
  m.def("array_free", [](std::uint64_t id) { call([&] { return tessera_array_free({id}); }); });
  m.def("array_info", [](std::uint64_t id) {
    void* data = nullptr;
    tessera_dtype t{};
    tessera_memory k{};
    call([&] { return tessera_array_info({id}, &data, &t, &k); });
    return py::make_tuple(reinterpret_cast<std::uintptr_t>(data), static_cast<int>(t), static_cast<int>(k));
  });
  m.def("array_layout", [](std::uint64_t id) {
    tessera_layout l{};
    call([&] { return tessera_array_layout({id}, &l); });
    return l.id;
  });
  m.def("array_stream", [](std::uint64_t id) {
    std::uintptr_t s = 0;
    guarded("array_stream", [&] { s = reinterpret_cast<std::uintptr_t>(tessera_stream(*get_array({id}, "a")).native()); });
    return s;
  });
  // Arrays over a caller's memory and stream (from_shards): Tessera's stream waits for theirs
  // before a kernel reads or writes them, theirs for Tessera's after (as the C API's calls do).
  m.def("streams_before", [](const std::vector<std::uint64_t>& ids) {
    guarded("streams_before", [&] {
      for (auto id : ids) before(*get_array({id}, "a"));
    });
  });
  m.def("streams_after", [](const std::vector<std::uint64_t>& ids) {
    guarded("streams_after", [&] {
      for (auto id : ids) after(*get_array({id}, "a"));
    });
  });
  m.def("array_synchronize", [](std::uint64_t id) { call([&] { return tessera_array_synchronize({id}); }); });
  m.def("halo_exchange", [](std::uint64_t id) { call([&] { return tessera_halo_exchange({id}); }); });
  m.def("halo_exchange_begin", [](std::uint64_t id) {
    tessera_halo h{};
    call([&] { return tessera_halo_exchange_begin({id}, &h); });
    return h.id;
  });
  m.def("halo_exchange_end", [](std::uint64_t id) { call([&] { return tessera_halo_exchange_end({id}); }); });
  m.def("redistribute", [](std::uint64_t src, std::uint64_t dst) { call([&] { return tessera_redistribute({src}, {dst}); }); });
  m.def("gather", [](std::uint64_t id, int root, std::uintptr_t buf, int64_t elements, int memory) {
    call([&] {
      return tessera_gather({id}, root, reinterpret_cast<void*>(buf), elements, static_cast<tessera_memory>(memory));
    });
  });
  m.def("scatter", [](std::uint64_t id, int root, std::uintptr_t buf, int64_t elements, int memory) {
    call([&] {
      return tessera_scatter({id}, root, reinterpret_cast<const void*>(buf), elements, static_cast<tessera_memory>(memory));
    });
  });
  m.def("reduce", [](std::uint64_t id, int op) {
    std::array<unsigned char, 16> out{};
    call([&] { return tessera_reduce({id}, static_cast<tessera_reduce_op>(op), out.data()); });
    return py::bytes(reinterpret_cast<const char*>(out.data()), out.size());
  });
  m.def("array_read", [](std::uint64_t id, std::uintptr_t host, int64_t elements) {
    call([&] { return tessera_array_read({id}, reinterpret_cast<void*>(host), elements); });
  });
  m.def("array_write", [](std::uint64_t id, std::uintptr_t host, int64_t elements) {
    call([&] { return tessera_array_write({id}, reinterpret_cast<const void*>(host), elements); });
  });
  // Boxes of a block (local interior indices; per axis start, stop, step).
  m.def("array_read_box", [](std::uint64_t id, std::vector<int64_t> start, std::vector<int64_t> stop,
                             std::vector<int64_t> step, std::uintptr_t host, int64_t elements) {
    call([&] {
      return tessera_array_read_box({id}, start.data(), stop.data(), step.data(), reinterpret_cast<void*>(host),
                                    elements);
    });
  });
  m.def("array_write_box", [](std::uint64_t id, std::vector<int64_t> start, std::vector<int64_t> stop,
                              std::vector<int64_t> step, std::uintptr_t host, int64_t elements) {
    call([&] {
      return tessera_array_write_box({id}, start.data(), stop.data(), step.data(), reinterpret_cast<const void*>(host),
                                     elements);
    });
  });
  m.def("array_copy_box", [](std::uint64_t dst, std::uint64_t src, std::vector<int64_t> start,
                             std::vector<int64_t> stop, std::vector<int64_t> step) {
    call([&] { return tessera_array_copy_box({dst}, {src}, start.data(), stop.data(), step.data()); });
  });
#ifdef TESSERA_PYTHON_DLPACK
  m.def("to_dlpack", &shard_capsule);
#endif
  m.def("layouts_equal", [](std::uint64_t a, std::uint64_t b) {
    bool same = false;
    guarded("layouts_equal", [&] {
      auto la = get_layout({a}, "a");
      auto lb = get_layout({b}, "b");
      if (la->ndim != lb->ndim) return;
      std::visit(
          [&](const auto& x) {
            using L = std::decay_t<decltype(x)>;
            if constexpr (!std::is_same_v<L, std::monostate>)
              same = x.same_blocks(std::get<L>(lb->v)) && x.halo() == std::get<L>(lb->v).halo();
          },
          la->v);
    });
    return same;
  });
  m.def("sort", [](std::uint64_t id, bool indices) {
    tessera_array out{};
    call([&] { return tessera_sort({id}, indices ? 1 : 0, &out); });
    return out.id;
  });
  m.def("sort_axis", [](std::uint64_t id, bool indices, int axis) {
    tessera_array out{};
    call([&] { return tessera_sort_axis({id}, indices ? 1 : 0, axis, &out); });
    return out.id;
  });
  m.def("scan", [](std::uint64_t id, bool product, int axis) {
    tessera_array out{};
    call([&] { return tessera_scan({id}, product ? 1 : 0, axis, &out); });
    return out.id;
  });
  m.def("reduce_axis", [](std::uint64_t id, int op, int axis) {
    tessera_array out{};
    call([&] { return tessera_reduce_axis({id}, static_cast<tessera_reduce_op>(op), axis, &out); });
    return out.id;
  });
  m.def("argreduce", [](std::uint64_t id, bool is_max) {
    int64_t index = 0;
    call([&] { return tessera_argreduce({id}, is_max ? 1 : 0, &index); });
    return index;
  });
  m.def("matmul", [](std::uint64_t a, std::uint64_t b) {
    tessera_array out{};
    call([&] { return tessera_matmul({a}, {b}, &out); });
    return out.id;
  });
  m.def("take", [](std::uint64_t a, std::uint64_t idx) {
    tessera_array out{};
    call([&] { return tessera_take({a}, {idx}, &out); });
    return out.id;
  });
  m.def("histogram", [](std::uint64_t a, int64_t bins, double lo, double hi) {
    std::vector<int64_t> counts(static_cast<std::size_t>(std::max<int64_t>(bins, 0)));
    call([&] { return tessera_histogram({a}, bins, lo, hi, counts.data()); });
    return counts;
  });
  m.def("put", [](std::uint64_t a, std::uint64_t idx, std::uint64_t v) { call([&] { return tessera_put({a}, {idx}, {v}); }); });
  m.def("compress", [](std::uint64_t mask, std::uint64_t a) {
    tessera_array out{};
    call([&] { return tessera_compress({mask}, {a}, &out); });
    return out.id;
  });
  m.def("ravel", [](std::uint64_t a) {
    tessera_array out{};
    call([&] { return tessera_ravel({a}, &out); });
    return out.id;
  });
  m.def("flatnonzero", [](std::uint64_t a) {
    tessera_array out{};
    call([&] { return tessera_flatnonzero({a}, &out); });
    return out.id;
  });
  m.def("axis_all_reduce", &axis_all_reduce);
  m.def("run_string_kernel", &run_string_kernel);
  m.def("run_reduction_kernel", &run_reduction_kernel);
  m.def("run_reduction_rows", &run_reduction_rows);
  m.def("fill_random", &fill_random);
  py::class_<JitPlan, std::shared_ptr<JitPlan>>(m, "JitPlan")
      .def(py::init<const std::vector<std::array<int, 6>>&, int, const std::vector<int64_t>&, const std::vector<int64_t>&,
                    const std::vector<std::vector<int64_t>>&, bool>())
      .def("launch", &JitPlan::launch);
  py::class_<Repeat>(m, "Repeat")
      .def(py::init<std::shared_ptr<JitPlan>, py::object, py::tuple, std::uintptr_t, const std::vector<std::uintptr_t>&,
                    std::vector<int>>())
      .def("run", &Repeat::run)
      .def("match", &Repeat::match);
  // The CUDA source of an IR kernel, and its NVRTC compile for sm_`arch` (no GPU needed): what
  // CI checks of the GPU path.
  m.def("jit_source", [](const std::vector<std::array<int, 6>>& nodes, int out_dtype, int rank, bool linear) {
    std::string src;
    guarded("jit_source", [&] { src = local::jit::generate_cuda(ir_kernel(nodes, out_dtype, rank, linear), "tessera_py"); });
    return src;
  });
  m.def("jit_compile", [](const std::vector<std::array<int, 6>>& nodes, int out_dtype, int rank, bool linear, int arch) {
    std::size_t bytes = 0;
    guarded("jit_compile", [&] {
      const auto k = ir_kernel(nodes, out_dtype, rank, linear);
      bytes = local::jit::compile_cubin(local::jit::generate_cuda(k, "tessera_py"), "tessera_py", arch).size();
    });
    return bytes;
  });

  // FFT plans.
  m.def("fft_plan_create", [](std::uint64_t layout, int dtype, int type, int decomposition, bool same_layout) {
    tessera_fft_plan p{};
    call([&] {
      return tessera_fft_plan_create({layout}, static_cast<tessera_dtype>(dtype), static_cast<tessera_fft_type>(type),
                                     static_cast<tessera_fft_decomposition>(decomposition), same_layout ? 1 : 0, &p);
    });
    return p.id;
  });
  m.def("fft_plan_free", [](std::uint64_t id) { call([&] { return tessera_fft_plan_free({id}); }); });
  m.def("fft_plan_layouts", [](std::uint64_t id) {
    tessera_layout in{}, out{};
    call([&] { return tessera_fft_plan_layouts({id}, &in, &out); });
    return py::make_tuple(in.id, out.id);
  });
  m.def("fft_execute", [](std::uint64_t plan, int direction, std::uint64_t in, std::uint64_t out, int norm) {
    call([&] {
      return tessera_fft_execute({plan}, static_cast<tessera_fft_direction>(direction), {in}, {out},
                                 static_cast<tessera_fft_norm>(norm));
    });
  });

  m.def("fft_execute_new", [](std::uint64_t plan, int direction, std::uint64_t in, int norm) {
    tessera_array out{};
    call([&] {
      return tessera_fft_execute_new({plan}, static_cast<tessera_fft_direction>(direction), {in},
                                     static_cast<tessera_fft_norm>(norm), &out);
    });
    return out.id;
  });
  m.def("fft_apply_spectral", [](std::uint64_t plan, std::uint64_t in, int kind, std::vector<double> lengths) {
    tessera_array out{};
    call([&] {
      return tessera_fft_apply_spectral({plan}, {in}, static_cast<tessera_fft_spectral>(kind),
                                        lengths.empty() ? nullptr : lengths.data(), &out);
    });
    return out.id;
  });
  m.def("fft_along", [](std::uint64_t in, int type, int direction, std::vector<int> axes, std::int64_t n, int norm) {
    tessera_array out{};
    call([&] {
      return tessera_fft_along({in}, static_cast<tessera_fft_type>(type), static_cast<tessera_fft_direction>(direction),
                               static_cast<int>(axes.size()), axes.data(), n, static_cast<tessera_fft_norm>(norm), &out);
    });
    return out.id;
  });

  // Files.
  m.def("save_npy", [](std::uint64_t id, const std::string& path) { call([&] { return tessera_save_npy({id}, path.c_str()); }); });
  m.def("load_npy", [](std::uint64_t id, const std::string& path) { call([&] { return tessera_load_npy({id}, path.c_str()); }); });
  m.def("save_zarr", [](std::uint64_t id, const std::string& dir, std::vector<int64_t> chunks, int format,
                        const std::string& codec, int level, std::vector<int64_t> shard, bool durable) {
    call([&] {
      return tessera_save_zarr_ex({id}, dir.c_str(), chunks.empty() ? nullptr : chunks.data(), format, codec.c_str(),
                                  level, shard.empty() ? nullptr : shard.data(), durable ? 1 : 0);
    });
  });
  m.def("save_hdf5", [](std::uint64_t id, const std::string& path, const std::string& name, std::vector<int64_t> chunks,
                        int deflate) {
    call([&] { return tessera_save_hdf5({id}, path.c_str(), name.c_str(), chunks.empty() ? nullptr : chunks.data(), deflate); });
  });
  m.def("write_xdmf", [](const std::string& xmf, const std::string& h5, const std::string& name,
                         std::vector<int64_t> shape, int dtype, double spacing) {
    call([&] {
      return tessera_write_xdmf(xmf.c_str(), h5.c_str(), name.c_str(), static_cast<int>(shape.size()), shape.data(),
                                static_cast<tessera_dtype>(dtype), spacing);
    });
  });
  m.def("load_hdf5", [](std::uint64_t id, const std::string& path, const std::string& name) {
    call([&] { return tessera_load_hdf5({id}, path.c_str(), name.c_str()); });
  });
  m.def("checkpoint_writer_create", [](std::uint64_t grid, const std::string& dir) {
    tessera_checkpoint_writer w{};
    call([&] { return tessera_checkpoint_writer_create({grid}, dir.c_str(), &w); });
    return w.id;
  });
  m.def("checkpoint_set", [](std::uint64_t w, int64_t step, double time, const std::map<std::string, std::string>& attrs) {
    call([&] { return tessera_checkpoint_set_step({w}, step); });
    call([&] { return tessera_checkpoint_set_time({w}, time); });
    for (const auto& [k, v] : attrs) call([&] { return tessera_checkpoint_set_attribute({w}, k.c_str(), v.c_str()); });
  });
  m.def("checkpoint_add", [](std::uint64_t w, const std::string& name, std::uint64_t a) {
    call([&] { return tessera_checkpoint_add({w}, name.c_str(), {a}); });
  });
  m.def("checkpoint_commit", [](std::uint64_t w) { call([&] { return tessera_checkpoint_commit({w}); }); });
  m.def("checkpoint_writer_free", [](std::uint64_t w) { call([&] { return tessera_checkpoint_writer_free({w}); }); });
  m.def("checkpoint_reader_create", [](std::uint64_t grid, const std::string& dir) {
    tessera_checkpoint_reader r{};
    call([&] { return tessera_checkpoint_reader_create({grid}, dir.c_str(), &r); });
    return r.id;
  });
  m.def("checkpoint_info", [](std::uint64_t r) {
    int64_t step = 0;
    double time = 0;
    call([&] { return tessera_checkpoint_info({r}, &step, &time); });
    return py::make_tuple(step, time);
  });
  m.def("checkpoint_attribute", [](std::uint64_t r, const std::string& key) {
    std::vector<char> buf(1 << 16);
    call([&] { return tessera_checkpoint_get_attribute({r}, key.c_str(), buf.data(), buf.size()); });
    return std::string(buf.data());
  });
  m.def("checkpoint_load", [](std::uint64_t r, const std::string& name, std::uint64_t a) {
    call([&] { return tessera_checkpoint_load({r}, name.c_str(), {a}); });
  });
  m.def("checkpoint_reader_free", [](std::uint64_t r) { call([&] { return tessera_checkpoint_reader_free({r}); }); });
  m.def("load_zarr", [](std::uint64_t id, const std::string& dir) { call([&] { return tessera_load_zarr({id}, dir.c_str()); }); });
}
