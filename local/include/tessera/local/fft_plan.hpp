// Local FFT plans: cuFFT on CUDA devices, FFTW3 on host. Complex-to-complex, real-to-complex and
// complex-to-real; 1-, 2- and 3-D; batched with arbitrary strides ("many"/advanced layout); plans
// cached by their descriptor. Raw-pointer API: the distributed FFT builds on it.
//
// Layout (as fftw_plan_many_dft / cufftPlanMany, but 64-bit). Per side (input, output), with the
// side's logical dims m[0..rank-1], embed e[], stride s and distance D, element (b, x0, .., x_r-1)
// of batch b lives at  base[b*D + s*(x_r-1 + e[r-1]*(x_r-2 + e[r-2]*(... + e[1]*x0)))],  counted in
// elements of the side's type (real for the real side of r2c/c2r, complex otherwise).
//   c2c: m = n on both sides.     r2c: input real m = n, output complex m = n with last n/2+1.
//   c2r: input complex m = n with last n/2+1, output real m = n.
// Transforms are unnormalized: backward(forward(x)) = (n0*..*n_r-1) * x.
#pragma once
#include <array>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>

#include "tessera/local/device.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::local::fft {

/// Complex-to-complex, real-to-complex or complex-to-real.
enum class Kind : int { c2c, r2c, c2r };
/// complex64 / complex128 (float / double real).
enum class Precision : int { single, double_ };
/// The precision of float (single) or double (double_) data, real or complex.
template <class Real>
constexpr Precision precision_of() {
  static_assert(std::is_same_v<Real, float> || std::is_same_v<Real, double>, "float or double");
  return std::is_same_v<Real, float> ? Precision::single : Precision::double_;
}
/// The sign of the exponent.
enum class Direction : int { forward = -1, backward = +1 };

/// What a plan computes; also the cache key. Fields left 0 take the defaults below (normalize()
/// fills them in; Plan::desc() returns the filled-in form).
struct PlanDesc {
  Device device;
  Kind kind = Kind::c2c;
  Precision precision = Precision::double_;
  int rank = 1;                   // 1..3
  std::array<long long, 3> n{};   // logical sizes (real-space for r2c/c2r); 0 beyond rank
  long long batch = 1;            // number of transforms, >= 1
  // Embeds: 0 (all) = the side's logical dims, except the real side of an in-place r2c/c2r whose
  // last embed is 2*(n[r-1]/2+1) (rows padded to hold the complex result). Entries beyond rank 0.
  std::array<long long, 3> inembed{}, onembed{};
  long long istride = 0, ostride = 0;  // 0 = 1
  long long idist = 0, odist = 0;      // 0 = stride * product of the embeds (packed batches)
  // In-place: execute with in == out. Output fields left 0 then follow the input's layout
  // (c2c: equal; r2c: last embed and dist halved; c2r: doubled), so both views share memory.
  bool in_place = false;
  // c2r out of place only: true keeps `in` intact by transforming a copy (in the work area);
  // false lets the backend clobber `in` (both FFTW and cuFFT do), saving the copy.
  bool preserve_input = true;
  // Every output element is multiplied as it is stored (execute() with a StoreMultiply): a cuFFT
  // LTO store callback, or FFTW's loop right after the transform. No extra pass over the data.
  bool store_multiply = false;
  // With store_multiply: executions may carry a spectral factor (StoreMultiply::spectral); false
  // keeps the store to a scale (a lighter callback, which cuFFT accepts where it refuses the other).
  bool store_spectral = false;
  // With store_multiply and no store_spectral: nonzero fixes the scale of every execution (a
  // StoreMultiply given must carry it). cuFFT then receives the scale in its callback's parameter
  // pointer, so no store loads it from memory: a backward FFT costs what the forward does.
  double store_scale = 0;

  bool operator==(const PlanDesc&) const = default;
};

/// What a store-multiplying plan (PlanDesc::store_multiply) multiplies each output element by:
/// `scale`, times a spectral factor of the element's wavenumber. Positions: the output of one
/// execution lies in a row-major `block` (dims axes, at most 4); the element at memory offset o
/// from the output pointer is block element `offset + o`, whose global frequency index along axis
/// a is lo[a] + (its index in the block), taken as numpy.fft.fftfreq does for a transform of size
/// n[a] (half[a]: rfftfreq, no negative half), and whose wavenumber is k[a] times that (2*pi/L for
/// a box of length L). n[a] == 0 marks an axis that carries no frequency (a batch of fields).
struct StoreMultiply {
  /// The spectral factor: none, -1/|k|^2 (0 at k = 0: a Poisson solve), or -|k|^2.
  enum class Spectral : int { none, inverse_laplacian, laplacian };
  double scale = 1.0;
  Spectral spectral = Spectral::none;
  int dims = 0;
  std::array<long long, 4> block{}, lo{}, n{};
  std::array<bool, 4> half{};
  std::array<double, 4> k{};
  long long offset = 0;
};

/// Contiguous row-major data, packed batches: n = {n0[, n1[, n2]]}; rank = n.size() (1..3, else
/// InvalidArgument). Layout fields are left 0 (defaults); the rest is validated by normalize().
PlanDesc make_desc(Device device, Kind kind, Precision precision, std::initializer_list<long long> n,
                   long long batch = 1, bool in_place = false);

/// Validates `d` and fills in its defaults. Throws InvalidArgument naming the offending field and
/// value (e.g. "fft plan: n[1]=0 must be > 0"), BackendUnavailable for a CUDA device in a build
/// without CUDA, InvalidArgument for a CUDA device this process does not see.
PlanDesc normalize(const PlanDesc& d);

/// Elements spanned from the base pointer by the input / output (what to allocate), and bytes.
/// An in-place transform needs max(input_bytes, output_bytes) in one buffer.
long long input_elements(const PlanDesc& d);
long long output_elements(const PlanDesc& d);
std::size_t input_bytes(const PlanDesc& d);
std::size_t output_bytes(const PlanDesc& d);

/// For messages: "r2c single [6,5,7] batch 2 in[6,5,8]/1/240 out[6,5,4]/1/120 in-place on host"
/// (embeds/stride/dist of each side; zeros where a field is still defaulted).
std::string to_string(const PlanDesc& d);

namespace detail {
// A backend's plan; Plan validates arguments before calling it.
class PlanBackend {
 public:
  virtual ~PlanBackend() = default;
  virtual std::size_t work_bytes() const noexcept = 0;
  // `mult` is non-null exactly for a store_multiply plan.
  virtual void execute(const void* in, void* out, Direction dir, const Stream& s, void* work,
                       const StoreMultiply* mult) const = 0;
  // Plan::execute_round_trip in fewer passes than its two executions, where this backend and
  // `backward`'s can (arguments checked; `backward_scale` what the backward's stores multiply by);
  // false, having done nothing, where they cannot.
  virtual bool round_trip(const PlanBackend& /*backward*/, const void* /*in*/, void* /*spectrum*/, void* /*out*/,
                          const Stream& /*s*/, const StoreMultiply& /*mult*/, double /*backward_scale*/) const {
    return false;
  }
};
// Applies `m` to the output of one execution of a store_multiply plan, in place (the FFTW loop
// and the GPU fallback when cuFFT refuses a callback).
void store_multiply_host(const PlanDesc& d, void* out, const StoreMultiply& m);
std::unique_ptr<PlanBackend> make_fftw_plan(const PlanDesc& normalized);
std::unique_ptr<PlanBackend> make_cufft_plan(const PlanDesc& normalized);  // CUDA builds only
// The backend for the descriptor's device (src/common/backends.cpp).
std::unique_ptr<PlanBackend> make_plan_backend(const PlanDesc& normalized);
}  // namespace detail

/// A local FFT plan (FFTW on host, cuFFT on CUDA) for one descriptor.
class Plan {
 public:
  /// An uncached plan; get_plan() shares one per descriptor.
  explicit Plan(const PlanDesc& desc);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  /// The normalized descriptor.
  const PlanDesc& desc() const noexcept { return desc_; }
  /// Scratch bytes an execution needs on the plan's device (cuFFT work area, plus the input copy
  /// of a preserving out-of-place c2r); 0 when none.
  std::size_t work_bytes() const noexcept;

  /// Transforms `in` into `out` (device pointers on the plan's device; in == out iff in_place).
  /// c2c takes either direction; r2c only forward, c2r only backward. CUDA: enqueued on `stream`,
  /// no host synchronization; host: runs now. `work`, if given, is scratch of >= work_bytes() on the
  /// device, 256-byte aligned, that no concurrent execution uses; else a pool buffer is taken,
  /// ordered on `stream`.
  /// Safe to call concurrently from several threads (cached plans are shared).
  void execute(const void* in, void* out, Direction dir, const Stream& stream,
               void* work = nullptr) const;
  /// Same, multiplying the output by `mult` as it is stored (a store_multiply plan only).
  void execute(const void* in, void* out, Direction dir, const Stream& stream, const StoreMultiply& mult,
               void* work = nullptr) const;
  /// Same, on the device's default stream.
  void execute(const void* in, void* out, Direction dir) const;
  /// A spectral solve's round trip: this forward plan's transform of `in` into `spectrum`, times
  /// `mult` (a store_multiply plan), then `backward`'s transform of `spectrum` into `out`, its
  /// stores times `backward_scale` (a store_multiply backward plan's scale; else 1). The pair: an
  /// r2c plan and the c2r plan of its shape and precision, or two c2c plans, `backward`'s input
  /// laid out as this plan's output (else InvalidArgument). `spectrum`'s contents are lost. Where
  /// both are split 3-D GPU plans (docs/fft.md), the forward's last pass along axis 0, the
  /// multiply and the backward's first pass are one kernel: one read and one write of the
  /// spectrum fewer than the two executions.
  void execute_round_trip(const Plan& backward, const void* in, void* spectrum, void* out, const Stream& stream,
                          const StoreMultiply& mult, double backward_scale = 1.0) const;

 private:
  void check(const void* in, const void* out, Direction dir, const Stream& stream) const;
  void check_multiply(const StoreMultiply& mult) const;
  void check_pair(const Plan& backward, double backward_scale) const;
  PlanDesc desc_;
  std::unique_ptr<detail::PlanBackend> backend_;
};

/// The cached plan for `desc` (normalized first, so equivalent descriptors share a plan); created on
/// first use. Thread-safe. Plans stay alive while someone holds them, even after clear_plan_cache().
std::shared_ptr<const Plan> get_plan(const PlanDesc& desc);
/// The number of cached plans.
std::size_t plan_cache_size();
/// Drops the cache's references to its plans.
void clear_plan_cache();

}  // namespace tessera::local::fft

/// Hashes a descriptor (the plan cache's key).
template <>
struct std::hash<tessera::local::fft::PlanDesc> {
  std::size_t operator()(const tessera::local::fft::PlanDesc& d) const noexcept;
};
