// The FFTW3 backend of local FFT plans (host devices).
#include <fftw3.h>

#include <array>
#include <cstring>
#include <mutex>
#include <utility>

#include "fft_dims.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/fft_plan.hpp"
#include "tessera/local/memory.hpp"

namespace tessera::local::fft {
namespace detail {
namespace {

// FFTW's planner and plan destruction are not thread-safe (execution is).
std::mutex& fftw_mutex() {
  static std::mutex m;
  return m;
}

template <class R> struct Fftw;
template <> struct Fftw<double> {
  using plan = fftw_plan;
  using cpx = fftw_complex;
  static plan dft(int r, const fftw_iodim64* d, const fftw_iodim64* h, void* i, void* o, int sign, unsigned f) {
    return fftw_plan_guru64_dft(r, d, 1, h, static_cast<cpx*>(i), static_cast<cpx*>(o), sign, f);
  }
  static plan r2c(int r, const fftw_iodim64* d, const fftw_iodim64* h, void* i, void* o, unsigned f) {
    return fftw_plan_guru64_dft_r2c(r, d, 1, h, static_cast<double*>(i), static_cast<cpx*>(o), f);
  }
  static plan c2r(int r, const fftw_iodim64* d, const fftw_iodim64* h, void* i, void* o, unsigned f) {
    return fftw_plan_guru64_dft_c2r(r, d, 1, h, static_cast<cpx*>(i), static_cast<double*>(o), f);
  }
  static void exec_dft(plan p, void* i, void* o) { fftw_execute_dft(p, static_cast<cpx*>(i), static_cast<cpx*>(o)); }
  static void exec_r2c(plan p, void* i, void* o) { fftw_execute_dft_r2c(p, static_cast<double*>(i), static_cast<cpx*>(o)); }
  static void exec_c2r(plan p, void* i, void* o) { fftw_execute_dft_c2r(p, static_cast<cpx*>(i), static_cast<double*>(o)); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
  static void* alloc(std::size_t b) { return fftw_malloc(b); }
  static void release(void* p) { fftw_free(p); }
};
template <> struct Fftw<float> {
  using plan = fftwf_plan;
  using cpx = fftwf_complex;
  static plan dft(int r, const fftw_iodim64* d, const fftw_iodim64* h, void* i, void* o, int sign, unsigned f) {
    return fftwf_plan_guru64_dft(r, d, 1, h, static_cast<cpx*>(i), static_cast<cpx*>(o), sign, f);
  }
  static plan r2c(int r, const fftw_iodim64* d, const fftw_iodim64* h, void* i, void* o, unsigned f) {
    return fftwf_plan_guru64_dft_r2c(r, d, 1, h, static_cast<float*>(i), static_cast<cpx*>(o), f);
  }
  static plan c2r(int r, const fftw_iodim64* d, const fftw_iodim64* h, void* i, void* o, unsigned f) {
    return fftwf_plan_guru64_dft_c2r(r, d, 1, h, static_cast<cpx*>(i), static_cast<float*>(o), f);
  }
  static void exec_dft(plan p, void* i, void* o) { fftwf_execute_dft(p, static_cast<cpx*>(i), static_cast<cpx*>(o)); }
  static void exec_r2c(plan p, void* i, void* o) { fftwf_execute_dft_r2c(p, static_cast<float*>(i), static_cast<cpx*>(o)); }
  static void exec_c2r(plan p, void* i, void* o) { fftwf_execute_dft_c2r(p, static_cast<cpx*>(i), static_cast<float*>(o)); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
  static void* alloc(std::size_t b) { return fftwf_malloc(b); }
  static void release(void* p) { fftwf_free(p); }
};

template <class R>
class FftwPlan final : public PlanBackend {
  using F = Fftw<R>;

 public:
  explicit FftwPlan(const PlanDesc& d)
      : d_(d), in_bytes_(input_bytes(d)),
        work_bytes_(d.kind == Kind::c2r && !d.in_place && d.preserve_input ? in_bytes_ : 0) {
    // Guru64 dims: the same layout as the descriptor, with 64-bit sizes and strides.
    fftw_iodim64 dims[3], howmany{d.batch, d.idist, d.odist};
    for (int i = 0; i < d.rank; ++i)
      dims[i] = {d.n[i], d.istride * product(d.inembed, i + 1, d.rank),
                 d.ostride * product(d.onembed, i + 1, d.rank)};
    // FFTW_ESTIMATE never touches the arrays, so untouched (lazily mapped) scratch of the right
    // extent stands in for the user's; FFTW_UNALIGNED lets execute() take arrays of any alignment.
    const std::size_t ib = in_bytes_, ob = output_bytes(d);
    void* in = F::alloc(d.in_place ? std::max(ib, ob) : ib);
    void* out = d.in_place ? in : F::alloc(ob);
    const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    {
      std::lock_guard<std::mutex> lock(fftw_mutex());
      if (in && out) {
        if (d.kind == Kind::c2c) {
          fwd_ = F::dft(d.rank, dims, &howmany, in, out, FFTW_FORWARD, flags);
          bwd_ = F::dft(d.rank, dims, &howmany, in, out, FFTW_BACKWARD, flags);
        } else if (d.kind == Kind::r2c) {
          fwd_ = F::r2c(d.rank, dims, &howmany, in, out, flags);
        } else {
          bwd_ = F::c2r(d.rank, dims, &howmany, in, out, flags | FFTW_DESTROY_INPUT);
        }
      }
    }
    if (out != in) F::release(out);
    F::release(in);
    const bool ok = d.kind == Kind::c2c ? (fwd_ && bwd_) : d.kind == Kind::r2c ? bool(fwd_) : bool(bwd_);
    if (!ok) {
      destroy();  // the destructor does not run for a constructor that throws
      throw Error("fft plan: FFTW could not plan " + to_string(d), d.device);
    }
  }
  ~FftwPlan() override { destroy(); }

  std::size_t work_bytes() const noexcept override { return work_bytes_; }

  void execute(const void* in, void* out, Direction dir, const Stream&, void* work,
               const StoreMultiply* mult) const override {
    run(in, out, dir, work);
    if (mult) store_multiply_host(d_, out, *mult);  // while the output is still in cache, if small
  }

 private:
  void run(const void* in, void* out, Direction dir, void* work) const {
    void* src = const_cast<void*>(in);  // only c2r writes to its input, and that one is copied
    if (d_.kind == Kind::c2c) return F::exec_dft(dir == Direction::forward ? fwd_ : bwd_, src, out);
    if (d_.kind == Kind::r2c) return F::exec_r2c(fwd_, src, out);
    Buffer scratch;
    if (work_bytes_) {
      if (!work) scratch = Buffer(work_bytes_, Device::host());
      src = work ? work : scratch.data();
      std::memcpy(src, in, in_bytes_);
    }
    F::exec_c2r(bwd_, src, out);
  }

  void destroy() noexcept {
    std::lock_guard<std::mutex> lock(fftw_mutex());
    if (fwd_) F::destroy(std::exchange(fwd_, nullptr));
    if (bwd_) F::destroy(std::exchange(bwd_, nullptr));
  }

  PlanDesc d_;
  std::size_t in_bytes_, work_bytes_;
  typename F::plan fwd_ = nullptr, bwd_ = nullptr;
};

}  // namespace

std::unique_ptr<PlanBackend> make_fftw_plan(const PlanDesc& d) {
  if (d.precision == Precision::single) return std::make_unique<FftwPlan<float>>(d);
  return std::make_unique<FftwPlan<double>>(d);
}
}  // namespace detail

}  // namespace tessera::local::fft
