// Distributed FFTs of distributed arrays: local cuFFT/FFTW plans along the axes a rank holds
// whole, and all-to-all transposes between them.
//
// Decompositions (Options::decomposition):
//  - slab: a 1-D grid; axis 0 split, FFT of the other axes, one transpose to axis 1 split, FFT
//    of axis 0. The default when ranks <= n0 (and for 2-D arrays).
//  - pencil (3-D): a 2-D grid; FFT of axis 2 with axes 0,1 split, transpose, FFT of axis 1 with
//    axes 0,2 split, transpose, FFT of axis 0 with axes 1,2 split. The default when ranks > n0.
//  - one rank: a plain local FFT.
//  - 1-D over several ranks: four-step n = n1*n2 over the exchange (fft1d.hpp in src/common;
//    Bluestein for prime n, R2C/C2R through the complex transform). Output in transposed order:
//    position k1*n2 + k2 holds X[k1 + n1*k2] (output_order() = {n1, n2}); same_layout_output
//    gives natural order in the input's layout. Spectral multiplies are refused there.
// Output layout (forward): the last stage's, the "natural transposed" one: slab -> axis 1 split
// over the 1-D grid; pencil -> axes 1 and 2 split over grid axes 0 and 1. output_layout() says
// which. Options::same_layout_output adds the transpose back to the caller's blocks (uneven ones
// too; an R2C's shortened last axis gets balanced blocks if split; no halos). backward() takes an
// array in output_layout() (any other layout of that shape is redistributed first) and returns
// one in input_layout(): the layout the plan was made for, exactly (halos included), so that
// ifftn(fftn(x), x.layout()) combines with x.
// R2C transforms the last axis real -> complex (n/2+1 values), C2R inverts it (the real size is
// the plan's, so odd sizes round-trip).
// The transposes are chunked: the local FFT of chunk k+1 runs while chunk k is in flight (a
// field at a time when batched). Nothing synchronizes the host inside forward/backward.
// Normalization as numpy's norm=: backward (default: forward unscaled, backward 1/N), ortho
// (1/sqrt(N) both ways), forward (forward 1/N), none. The factor rides on the stores of the last
// local FFT (a cuFFT LTO store callback; FFTW's loop): no pass of its own over the data.
#pragma once
#include <array>
#include <complex>
#include <numbers>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/distributed/array.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/distributed/settings.hpp"

namespace tessera::fft {

using distributed::Array;
using distributed::Layout;
using local::index_t;

/// Normalization, as numpy's norm= (see above).
enum class Norm { backward, ortho, forward, none };
/// How ranks split the array between FFT stages (see above). four_step and bluestein are the 1-D
/// transforms over several ranks (reported by Plan::decomposition(); requesting one that the
/// length does not take throws InvalidArgument; a 1-D plan on one rank reports slab).
enum class Decomposition { automatic, slab, pencil, four_step, bluestein };
/// "automatic", "slab", "pencil", "four-step", "Bluestein".
const char* decomposition_name(Decomposition d);

/// A factor of the wavenumber that the forward transform applies as it stores the spectrum (on
/// GPUs a cuFFT store callback, on the host the loop after FFTW: no pass of its own), so that a
/// spectral solver needs no multiply kernel. The wavenumber along axis a is 2*pi*f/lengths[a]
/// with f numpy's fftfreq (rfftfreq on the last axis of an R2C) index: the angular wavenumber of
/// a periodic box of that length (the default 2*pi gives integer wavenumbers).
struct Spectral {
  /// none; -1/|k|^2 (0 for k = 0: the Poisson solve u = lap^-1 f with zero mean); -|k|^2.
  enum class Kind { none, inverse_laplacian, laplacian };
  Kind kind = Kind::none;
  std::array<double, 3> lengths{2 * std::numbers::pi, 2 * std::numbers::pi, 2 * std::numbers::pi};
};

/// Plan options. What is left automatic (decomposition, grid, transport, chunks) is chosen as
/// `tune` says (docs/tuning.md): by the fixed rule, by wisdom, or measured when the plan is made.
struct Options {
  Decomposition decomposition = Decomposition::automatic;
  bool same_layout_output = false;  // forward returns the input layout (one more transpose)
  int chunks = 0;                   // transpose pipeline depth; 0: settings().fft_chunks_for (by size)
  /// A pencil's 2-D process grid {rows, columns} (product: the ranks); empty: the input's grid
  /// where it is 2-D, else a balanced one.
  std::vector<int> grid;
  /// The transposes' transport; unset: settings().transport.
  std::optional<distributed::Transport> transport;
  /// How the automatic choices are made; unset: settings().tune (TESSERA_TUNE).
  std::optional<distributed::Tune> tune;
  /// Memberwise equality.
  bool operator==(const Options&) const = default;
};
/// The options a tuner's candidate name stands for ("slab/auto/auto", "pencil 2x2/nccl-window/8":
/// decomposition and grid, transport, chunks; "auto": the rule's), with tune off; throws
/// InvalidArgument for a name that is not one. Plan::describe() and tessera-tune print such names.
Options candidate_options(const std::string& name);
/// The candidate name of `o` (the inverse of candidate_options).
std::string candidate_name(const Options& o);

namespace detail {
template <class T> struct RealOf { using type = T; };
template <class T> struct RealOf<std::complex<T>> { using type = T; };
template <class T> struct IsComplex : std::false_type {};
template <class T> struct IsComplex<std::complex<T>> : std::true_type {};
template <class In, int R> struct Engine;  // fft.cpp
}  // namespace detail

/// In = complex<float|double> (C2C) or float|double (R2C forward, C2R backward). R = 1..3.
template <class In, int R>
class Plan {
 public:
  using Real = typename detail::RealOf<In>::type;
  using Out = std::complex<Real>;
  static constexpr bool real_input = !detail::IsComplex<In>::value;

  /// A plan for arrays of layout `in` (global shape = the real-space shape for R2C) on `device`.
  /// Throws InvalidArgument for a decomposition that cannot apply (pencil of a 1-D array, ...).
  Plan(const Layout<R>& in, Device device, Options options = {});
  /// Releases the plan's resources.
  ~Plan();

  /// The layout the plan was made for: forward() takes it (any other layout of the same shape is
  /// redistributed first), backward() returns it.
  const Layout<R>& input_layout() const;
  /// The layout forward() returns and backward() takes.
  const Layout<R>& output_layout() const;  // complex; last axis n/2+1 for R2C
  /// The decomposition in use (slab, pencil, four_step or bluestein; never automatic).
  Decomposition decomposition() const;
  /// The device the plan runs on.
  Device device() const;
  /// The order of forward()'s output as {r, c}: position i*c + j holds frequency i + r*j. A 1-D
  /// C2C plan over several ranks with transposed output gives its four-step factors {n1, n2};
  /// every other plan {1, size}: natural order.
  std::array<index_t, 2> output_order() const;
  /// How the plan's decomposition, grid, transport and depth were chosen: "fft c2c complex64
  /// [64,64,64] on 4 ranks: measured pencil 2x2/auto/auto (slab/auto/auto 1.210 ms x3, ...) in
  /// 40.2 ms", or "...: rule ...", "...: wisdom ..." (TESSERA_VERBOSE=1 prints it when made).
  const std::string& describe() const;

  /// Forward transform of `x`. Out of place: the input is left as it was.
  Array<Out, R> forward(const Array<In, R>& x, Norm norm = Norm::backward) const;
  /// Forward transform whose stores multiply the spectrum by `multiply` (and the norm's factor),
  /// e.g. {Spectral::Kind::inverse_laplacian} for a Poisson solve: backward(forward(f, norm, that)).
  Array<Out, R> forward(const Array<In, R>& x, Norm norm, const Spectral& multiply) const;
  /// backward(forward(x) times `multiply`), returned in input_layout(): e.g. with
  /// {Spectral::Kind::inverse_laplacian} the Poisson solve u = lap^-1 x (zero mean). One 1/N in all,
  /// whatever the norm. On one rank, a 3-D R2C plan on a GPU whose first axis has Tessera's axis pass
  /// (256, 512, 1024) runs the forward's last pass, the multiply and the backward's first pass as one
  /// kernel: one read and one write of the spectrum fewer than the two calls (docs/fft.md).
  Array<In, R> apply(const Array<In, R>& x, const Spectral& multiply) const;
  /// Backward transform of `y` (out of place), returned in input_layout().
  Array<In, R> backward(const Array<Out, R>& y, Norm norm = Norm::backward) const;
  /// forward(x) written into `y`, an array of output_layout()'s blocks on the plan's device (else
  /// LayoutMismatch, DeviceMismatch): the last pass writes y's block where it is packed (no halos),
  /// else the result is copied there. x is left as it was.
  void forward_into(const Array<In, R>& x, Array<Out, R>& y, Norm norm = Norm::backward) const;
  /// backward(y) written into `x`, an array of input_layout()'s blocks, as forward_into.
  void backward_into(const Array<Out, R>& y, Array<In, R>& x, Norm norm = Norm::backward) const;
  /// Forward transform in place (C2C): x's memory is the work area (its contents are lost); saves one buffer.
  Array<Out, R> forward_in_place(Array<In, R>& x, Norm norm = Norm::backward) const
    requires(!real_input)
  {
    return forward_in_place_c2c(x, norm);
  }
  /// Backward transform in place: y's memory is the work area (its contents are lost). C2C: the
  /// result lives there; C2R: the transform may overwrite y instead of reading a copy of it.
  Array<In, R> backward_in_place(Array<Out, R>& y, Norm norm = Norm::backward) const;
  /// Batched forward: several fields of the same layout, each transpose moves them all at once.
  std::vector<Array<Out, R>> forward(const std::vector<Array<In, R>>& xs, Norm norm = Norm::backward) const;
  /// Batched backward transform.
  std::vector<Array<In, R>> backward(const std::vector<Array<Out, R>>& ys, Norm norm = Norm::backward) const;

 private:
  // forward_in_place's body: clang before 16 matches no out-of-line definition with its constraint.
  Array<Out, R> forward_in_place_c2c(Array<In, R>& x, Norm norm) const;
  std::unique_ptr<detail::Engine<In, R>> engine_;
};

/// The cached plan for (layout, type, device, options); thread-safe.
template <class In, int R>
std::shared_ptr<const Plan<In, R>> get_plan(const Layout<R>& in, Device device, Options options = {});
/// Drops every cached plan.
void clear_plan_cache();

// numpy-like calls on cached plans (default options: natural transposed output layouts).
/// Forward C2C FFT of `x`, in the plan's output layout.
template <class T, int R>
Array<T, R> fftn(const Array<T, R>& x, Norm norm = Norm::backward) {
  return get_plan<T, R>(x.layout(), x.device())->forward(x, norm);
}
/// The inverse of fftn: `y` in fftn's output layout; `in` is the layout fftn was given.
template <class T, int R>
Array<T, R> ifftn(const Array<T, R>& y, const Layout<R>& in, Norm norm = Norm::backward) {
  return get_plan<T, R>(in, y.device())->backward(y, norm);
}
/// Forward R2C FFT of real `x` (last axis n/2+1 values), in the plan's output layout.
template <class T, int R>
Array<std::complex<T>, R> rfftn(const Array<T, R>& x, Norm norm = Norm::backward) {
  return get_plan<T, R>(x.layout(), x.device())->forward(x, norm);
}
/// The inverse of rfftn: `in` is the real layout rfftn was given (it fixes the odd/even size).
template <class T, int R>
Array<T, R> irfftn(const Array<std::complex<T>, R>& y, const Layout<R>& in, Norm norm = Norm::backward) {
  return get_plan<T, R>(in, y.device())->backward(y, norm);
}

// Transforms along some axes (numpy.fft.fftn(x, axes=...)): each rank transforms its own block
// with batched local plans, no communication, so none of `axes` may be split over more than one
// rank (InvalidArgument naming it: redistribute first). Axes count from the end when negative and
// must be distinct; the result has x's blocks (the transformed extents changed for r2c/c2r), no
// halos, on x's device; `norm`'s factor counts the points along `axes` (1-4-D arrays).
/// C2C along `axes`; forward: exponent sign -1.
template <class T, int R>
Array<T, R> fft_along(const Array<T, R>& x, const std::vector<int>& axes, bool forward, Norm norm = Norm::backward);
/// R2C along axes.back() (n/2+1 values there), then C2C forward along the others.
template <class T, int R>
Array<std::complex<T>, R> rfft_along(const Array<T, R>& x, const std::vector<int>& axes, Norm norm = Norm::backward);
/// The inverse of rfft_along: C2C backward along all but axes.back(), then C2R there to `n` real
/// values (InvalidArgument unless the spectrum holds n/2+1 there).
template <class T, int R>
Array<T, R> irfft_along(const Array<std::complex<T>, R>& y, const std::vector<int>& axes, index_t n,
                        Norm norm = Norm::backward);

/// Sample frequencies (cycles per unit of `spacing`) along `axis` of a transform of size n, as
/// numpy.fft.fftfreq, at every element of `layout` (usually a plan's output_layout()); with
/// `n_real` > 0, `axis` holds rfftfreq of that real size instead (the last axis of an R2C output).
template <class T, int R>
Array<T, R> fftfreq(const Layout<R>& layout, int axis, Device device, double spacing = 1.0,
                    index_t n_real = 0);

}  // namespace tessera::fft
