// FFT plans of the C API: distributed C2C and R2C/C2R plans executed on the caller's arrays.
#include <cmath>

#include "handles.hpp"

using namespace tessera;
using namespace tessera::capi;

namespace {

struct PlanBase : Object {
  tessera_dtype dtype{};
  tessera_fft_type type{};
  int ndim = 0;
  virtual void layouts(tessera_layout* in, tessera_layout* out) const = 0;
  virtual void execute(bool forward, ArrayBase& in, ArrayBase& out, fft::Norm norm) const = 0;
  virtual tessera_array execute_new(bool forward, ArrayBase& in, fft::Norm norm) const = 0;
  virtual tessera_array apply_new(ArrayBase& in, const fft::Spectral& multiply) const = 0;
};

tessera_dtype complex_of(tessera_dtype t) {
  return t == TESSERA_F32 || t == TESSERA_C64 ? TESSERA_C64 : TESSERA_C128;
}

template <int R>
void check_layout(const distributed::Layout<R>& got, const distributed::Layout<R>& want, const char* which) {
  if (!got.same_blocks(want))
    throw distributed::LayoutMismatch(std::string(which) + " is on " + got.str() +
                                      ", the plan needs " + want.str());
}

template <class In, int R>
struct PlanT : PlanBase {
  using Out = typename fft::Plan<In, R>::Out;
  std::unique_ptr<fft::Plan<In, R>> plan;
  const distributed::Layout<R>& output_layout() const { return plan->output_layout(); }

  void layouts(tessera_layout* in, tessera_layout* out) const override {
    if (in) in->id = put(Kind::layout, std::make_shared<LayoutObj>(plan->input_layout()));
    if (out) out->id = put(Kind::layout, std::make_shared<LayoutObj>(output_layout()));
  }

  // The arrays' dtypes, ranks and device against the plan's (out: null for a new result).
  void check_arrays(bool forward, const ArrayBase& in, const ArrayBase* out) const {
    const tessera_dtype want_in = forward ? dtype : complex_of(dtype), want_out = forward ? complex_of(dtype) : dtype;
    const char* dir = forward ? "forward" : "backward";
    if (in.dtype != want_in || (out && out->dtype != want_out))
      throw DtypeMismatch(std::string(dir) + ": arrays " + dtype_name(in.dtype) + " -> " +
                          dtype_name(out ? out->dtype : want_out) + ", the plan takes " + dtype_name(want_in) + " -> " +
                          dtype_name(want_out));
    if (in.ndim != R || (out && out->ndim != R))
      throw ShapeMismatch(std::to_string(R) + "-D plan, arrays " + std::to_string(in.ndim) + "-D and " +
                          std::to_string(out ? out->ndim : R) + "-D");
    if (in.device != plan->device() || (out && out->device != plan->device()))
      throw DeviceMismatch("plan on " + plan->device().str() + ", arrays on " + in.device.str() + " and " +
                           (out ? out->device : in.device).str());
  }

  // `in` checked as the input of a forward transform into a new array (its dtype, rank, device and
  // the plan's input layout), with Tessera's stream waiting for its stream.
  const distributed::Array<In, R>& forward_input(ArrayBase& in) const {
    check_arrays(true, in, nullptr);
    before(in);
    const auto& x = typed<In, R>(in);
    check_layout(x.layout(), plan->input_layout(), "in");
    return x;
  }

  tessera_array execute_new(bool forward, ArrayBase& in, fft::Norm norm) const override {
    if (forward) return wrap(plan->forward(forward_input(in), norm), in);
    check_arrays(false, in, nullptr);
    before(in);
    const auto& y = typed<Out, R>(in);
    check_layout(y.layout(), output_layout(), "in");
    return wrap(plan->backward(y, norm), in);
  }

  tessera_array apply_new(ArrayBase& in, const fft::Spectral& multiply) const override {
    return wrap(plan->apply(forward_input(in), multiply), in);
  }

  void execute(bool forward, ArrayBase& in, ArrayBase& out, fft::Norm norm) const override {
    check_arrays(forward, in, &out);
    if (&in == &out && (real_input || !plan->input_layout().same_blocks(output_layout())))
      throw InvalidArgument("in place needs a C2C plan whose output layout is its input "
                            "layout (same_layout_output = 1, or one rank)");
    before(in);
    if (&in != &out) before(out);
    // Out of place, the last pass writes out's block; in place, the result is copied back.
    if (forward) {
      const auto& x = typed<In, R>(in);
      auto& y = typed<Out, R>(out);
      check_layout(x.layout(), plan->input_layout(), "in");
      check_layout(y.layout(), output_layout(), "out");
      if (&in == &out) local::copy(y.interior(), plan->forward(x, norm).interior());
      else plan->forward_into(x, y, norm);
    } else {
      const auto& y = typed<Out, R>(in);
      auto& x = typed<In, R>(out);
      check_layout(y.layout(), output_layout(), "in");
      check_layout(x.layout(), plan->input_layout(), "out");
      if (&in == &out) local::copy(x.interior(), plan->backward(y, norm).interior());
      else plan->backward_into(y, x, norm);
    }
    after(out);
  }
  static constexpr bool real_input = fft::Plan<In, R>::real_input;
};

fft::Norm to_norm(tessera_fft_norm n) {
  switch (n) {
    case TESSERA_NORM_BACKWARD: return fft::Norm::backward;
    case TESSERA_NORM_ORTHO: return fft::Norm::ortho;
    case TESSERA_NORM_FORWARD: return fft::Norm::forward;
    case TESSERA_NORM_NONE: return fft::Norm::none;
    case TESSERA_NORM_RANGE_: break;  // not a value
  }
  throw InvalidArgument("norm " + std::to_string(static_cast<int>(n)) + " is not a tessera_fft_norm");
}

// Whether `direction` is TESSERA_FFT_FORWARD (InvalidArgument for neither direction).
bool is_forward(tessera_fft_direction direction) {
  if (direction != TESSERA_FFT_FORWARD && direction != TESSERA_FFT_BACKWARD)
    throw InvalidArgument("direction " + std::to_string(static_cast<int>(direction)) +
                          " is neither TESSERA_FFT_FORWARD nor TESSERA_FFT_BACKWARD");
  return direction == TESSERA_FFT_FORWARD;
}

}  // namespace

extern "C" {

tessera_status tessera_fft_plan_create(tessera_layout lh, tessera_dtype dtype, tessera_fft_type type,
                                       tessera_fft_decomposition decomposition, int same_layout_output,
                                       tessera_fft_plan* out) {
  return guard("tessera_fft_plan_create", [&] {
    need(out, "out");
    auto l = get_layout(lh, "in");
    if (type != TESSERA_FFT_C2C && type != TESSERA_FFT_R2C && type != TESSERA_FFT_C2R)
      throw InvalidArgument("type " + std::to_string(static_cast<int>(type)) + " is not a tessera_fft_type");
    if (dtype == TESSERA_I32 || dtype == TESSERA_I64 || dtype == TESSERA_BOOL ||
        is_complex_dtype(dtype) != (type == TESSERA_FFT_C2C))
      throw DtypeMismatch("tessera_fft_plan_create: a " + std::string(type == TESSERA_FFT_C2C ? "C2C" : "R2C/C2R") +
                          " plan needs a " + (type == TESSERA_FFT_C2C ? "complex" : "real") +
                          " floating dtype, got " + dtype_name(dtype));
    if (l->ndim > 3) throw InvalidArgument("FFT plans are 1-3-D, the layout is " + std::to_string(l->ndim) + "-D");
    fft::Options o;
    switch (decomposition) {
      case TESSERA_DECOMP_AUTO: o.decomposition = fft::Decomposition::automatic; break;
      case TESSERA_DECOMP_SLAB: o.decomposition = fft::Decomposition::slab; break;
      case TESSERA_DECOMP_PENCIL: o.decomposition = fft::Decomposition::pencil; break;
      default:
        throw InvalidArgument("decomposition " + std::to_string(static_cast<int>(decomposition)) +
                              " is not a tessera_fft_decomposition");
    }
    o.same_layout_output = same_layout_output != 0;
    const Device d = runtime_device();
    std::shared_ptr<PlanBase> p = dispatch(dtype, l->ndim, [&]<class T, int R>() -> std::shared_ptr<PlanBase> {
      if constexpr (std::is_integral_v<T> || R > 3) {
        throw InvalidArgument("unreachable");  // rejected above
      } else {
        auto pt = std::make_shared<PlanT<T, R>>();
        pt->plan = std::make_unique<fft::Plan<T, R>>(l->get<R>(), d, o);
        return pt;
      }
    });
    p->dtype = dtype, p->type = type, p->ndim = l->ndim;
    out->id = put(Kind::plan, p);
  });
}

tessera_status tessera_fft_plan_free(tessera_fft_plan p) {
  return guard("tessera_fft_plan_free", [&] { take(Kind::plan, p.id, "plan"); });
}

tessera_status tessera_fft_plan_layouts(tessera_fft_plan p, tessera_layout* in, tessera_layout* out) {
  return guard("tessera_fft_plan_layouts", [&] { get<PlanBase>(Kind::plan, p.id, "plan")->layouts(in, out); });
}

tessera_status tessera_fft_execute(tessera_fft_plan p, tessera_fft_direction direction, tessera_array in,
                                   tessera_array out, tessera_fft_norm norm) {
  return guard("tessera_fft_execute", [&] {
    auto plan = get<PlanBase>(Kind::plan, p.id, "plan");
    auto x = get_array(in, "in");
    auto y = get_array(out, "out");
    plan->execute(is_forward(direction), *x, *y, to_norm(norm));
  });
}

tessera_status tessera_fft_execute_new(tessera_fft_plan p, tessera_fft_direction direction, tessera_array in,
                                       tessera_fft_norm norm, tessera_array* out) {
  return guard("tessera_fft_execute_new", [&] {
    need(out, "out");
    auto plan = get<PlanBase>(Kind::plan, p.id, "plan");
    auto x = get_array(in, "in");
    *out = plan->execute_new(is_forward(direction), *x, to_norm(norm));
  });
}

tessera_status tessera_fft_apply_spectral(tessera_fft_plan p, tessera_array in, tessera_fft_spectral kind,
                                          const double* lengths, tessera_array* out) {
  return guard("tessera_fft_apply_spectral", [&] {
    need(out, "out");
    auto plan = get<PlanBase>(Kind::plan, p.id, "plan");
    fft::Spectral sp;
    if (kind == TESSERA_SPECTRAL_INVERSE_LAPLACIAN) sp.kind = fft::Spectral::Kind::inverse_laplacian;
    else if (kind == TESSERA_SPECTRAL_LAPLACIAN) sp.kind = fft::Spectral::Kind::laplacian;
    else throw InvalidArgument("kind " + std::to_string(static_cast<int>(kind)) + " is not a tessera_fft_spectral");
    for (int a = 0; lengths && a < plan->ndim; ++a) {
      if (!(lengths[a] > 0) || !std::isfinite(lengths[a]))
        throw InvalidArgument("lengths[" + std::to_string(a) + "] = " + std::to_string(lengths[a]) +
                              ": a box side must be finite and > 0");
      sp.lengths[a] = lengths[a];
    }
    auto x = get_array(in, "in");
    *out = plan->apply_new(*x, sp);
  });
}

tessera_status tessera_fft_along(tessera_array in, tessera_fft_type type, tessera_fft_direction direction, int naxes,
                                 const int* axes, int64_t n, tessera_fft_norm norm, tessera_array* out) {
  return guard("tessera_fft_along", [&] {
    need(out, "out");
    if (naxes < 1 || !axes) throw InvalidArgument("naxes " + std::to_string(naxes) + ": needs at least one axis");
    auto x = get_array(in, "in");
    const std::vector<int> ax(axes, axes + naxes);
    const bool forward = is_forward(direction);
    const fft::Norm nm = to_norm(norm);
    const bool complex_in = is_complex_dtype(x->dtype);
    const bool c2c = type == TESSERA_FFT_C2C, r2c = type == TESSERA_FFT_R2C, c2r = type == TESSERA_FFT_C2R;
    if (!c2c && !r2c && !c2r)
      throw InvalidArgument("type " + std::to_string(static_cast<int>(type)) + " is not a tessera_fft_type");
    if ((r2c && !forward) || (c2r && forward))
      throw InvalidArgument(std::string(r2c ? "an R2C" : "a C2R") + " transform runs " + (r2c ? "forward" : "backward") +
                            " only");
    if ((c2c || c2r) != complex_in || x->dtype == TESSERA_I32 || x->dtype == TESSERA_I64 || x->dtype == TESSERA_BOOL)
      throw DtypeMismatch(std::string("tessera_fft_along: ") + (r2c ? "an R2C" : c2r ? "a C2R" : "a C2C") +
                          " transform takes a " + (r2c ? "real" : "complex") + " floating array, got " +
                          dtype_name(x->dtype));
    before(*x);
    *out = dispatch(x->dtype, x->ndim, [&]<class T, int R>() -> tessera_array {
      if constexpr (std::is_integral_v<T> || std::is_same_v<T, bool>) {
        throw InvalidArgument("unreachable");  // rejected above
      } else if constexpr (fft::detail::IsComplex<T>::value) {
        using Real = typename T::value_type;
        if (c2c) return wrap(fft::fft_along(typed<T, R>(*x), ax, forward, nm), *x);
        return wrap(fft::irfft_along<Real, R>(typed<T, R>(*x), ax, n, nm), *x);
      } else {
        return wrap(fft::rfft_along(typed<T, R>(*x), ax, nm), *x);
      }
    });
  });
}

}  // extern "C"
