// The cuFFT backend of tessera::local::fft::Plan: 64-bit advanced-layout plans (cufftMakePlanMany64)
// without auto-allocated work areas; each execution takes its work area from the stream-ordered
// pool (or the caller), so concurrent executions on different streams never share scratch.
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cufftXt.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "fft_axis0.hpp"
#include "fft_axis0_cuda.hpp"
#include "fft_plane_cuda.hpp"
#include "fft_store_cuda.hpp"
#include "tessera/local/settings.hpp"
#include "fft_store_params.hpp"
#include "tessera/local/cuda_check.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/fft_plan.hpp"
#include "tessera/local/memory.hpp"

namespace tessera::local::fft::detail {
namespace {

const char* cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cufftResult";
  }
}

[[noreturn]] void cufft_failure(cufftResult r, const char* expr, const char* file, int line) {
  std::string msg = std::string("cuFFT call failed: ") + expr + " returned " + cufft_result_name(r) + " (" +
                    std::to_string(static_cast<int>(r)) + ") at " + file + ":" + std::to_string(line);
  // Seen when several processes on one node planned at once with an empty CUDA JIT cache (2-4
  // ranks sharing an H200 on a fresh machine, before plans were made one at a time): the same
  // plans succeeded with CUDA_CACHE_DISABLE=1, and once the cache held their kernels.
  if (r == CUFFT_INTERNAL_ERROR)
    msg += " (if several processes started on this node at once: the CUDA JIT cache they share may be "
           "mid-update; CUDA_CACHE_DISABLE=1, or a CUDA_CACHE_PATH per process, avoids that)";
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) throw Error(msg);
  if (r == CUFFT_ALLOC_FAILED) throw OutOfMemory(msg, Device::cuda(dev));
  throw Error(msg, Device::cuda(dev));
}

#define TESSERA_CHECK_CUFFT(call)                                             \
  do {                                                                        \
    const cufftResult tessera_fft_res_ = (call);                              \
    if (tessera_fft_res_ != CUFFT_SUCCESS)                                    \
      cufft_failure(tessera_fft_res_, #call, __FILE__, __LINE__);             \
  } while (0)

// The processes of a node make their cuFFT plans one at a time (an advisory lock on a file of
// this user's in /tmp), as do a process's threads: ranks planning at the same moment with an empty
// CUDA JIT cache failed with CUFFT_INTERNAL_ERROR (see cufft_failure). Plans are made once and
// cached, so the wait costs little; without the file, planning goes on unlocked.
class NodePlanningLock {
 public:
  NodePlanningLock() {
    static const std::string path = "/tmp/tessera-cufft-planning-" + std::to_string(::getuid()) + ".lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(std::exchange(fd_, -1));
        break;
      }
  }
  ~NodePlanningLock() {
    if (fd_ >= 0) ::close(fd_);  // (closing releases the lock)
  }
  NodePlanningLock(const NodePlanningLock&) = delete;
  NodePlanningLock& operator=(const NodePlanningLock&) = delete;

 private:
  int fd_ = -1;
};

cufftType cufft_type(const PlanDesc& d) {
  const bool sp = d.precision == Precision::single;
  switch (d.kind) {
    case Kind::c2c: return sp ? CUFFT_C2C : CUFFT_Z2Z;
    case Kind::r2c: return sp ? CUFFT_R2C : CUFFT_D2Z;
    case Kind::c2r: return sp ? CUFFT_C2R : CUFFT_Z2D;
  }
  return CUFFT_Z2Z;
}

constexpr std::size_t work_alignment = 256;  // cuFFT wants aligned work areas, as cudaMalloc gives

// Once cuFFT has refused a kind of store callback (JIT linking takes a while before it fails),
// later plans of this process skip the attempt.
std::atomic<bool>& callback_refused(const PlanDesc& d) {
  static std::atomic<bool> refused[2][4];
  return refused[d.store_spectral ? 1 : 0][(d.kind == Kind::c2r ? 2 : 0) + (d.precision == Precision::single ? 0 : 1)];
}

// How a plan runs (TESSERA_FFT_AXIS_KERNEL). `split`: a packed 3-D plan as Tessera's pass along
// axis 0 (fft_axis0.hpp) and a batched 2-D cuFFT over axes 1 and 2 (r2c: the 2-D pass first); a
// fixed scale rides on the pass's stores instead of a cuFFT store callback, and the two passes beat
// one 3-D cuFFT plan (docs/performance/fft.md, History). `columns`: a 1-D c2c plan down adjacent
// columns of rows `stride` apart (the distributed slab FFT's axis-0 stage, whole or a chunk of its
// columns) is the pass alone. The pass's lengths only. `planes`: a packed 2-D plan of square planes
// is Tessera's plane kernel alone (fft_plane.hpp, TESSERA_FFT_PLANE_KERNEL), as is a split plan's
// 2-D pass.
enum class Form { cufft, split, columns, planes };

// Whether a packed plan's n1 x n2 planes run on the plane kernel: TESSERA_FFT_PLANE_KERNEL's auto
// takes it where it beat the batched 2-D cuFFT on an H200 (c2c in single precision, planes of 256,
// and of 512 whose 32-point FFTs go in halves; docs/performance/fft.md); r2c and c2r planes only
// with `on` until they are measured.
bool plane_kernel_for(const PlanDesc& d, long long n1, long long n2) {
  using Mode = Settings::FftPlaneKernel;
  const Settings& s = settings();
  const bool automatic = s.fft_plane_kernel == Mode::automatic && d.kind == Kind::c2c &&
                         d.precision == Precision::single && n1 == n2 && (n1 == 256 || (n1 == 512 && s.fft_halves));
  return (s.fft_plane_kernel == Mode::on || automatic) && plane_supported(n1, n2, s.fft_axis_tile, d.device.index());
}

Form plan_form(const PlanDesc& d) {
  using Mode = Settings::FftAxisKernel;
  const Mode mode = settings().fft_axis_kernel;
  const bool scaled = d.store_multiply && !d.store_spectral && d.store_scale != 0;
  // A spectral multiply rides on the transform's last store where that is the axis pass: a split
  // r2c plan's (its 2-D cuFFT first), a plan down columns (the pass alone), in both precisions
  // (faster than cuFFT's plan with the store callback: docs/performance/fft.md).
  const bool spectral_last = d.store_multiply && d.store_spectral && mode == Mode::all &&
                             (d.kind == Kind::r2c || d.rank == 1);
  if (mode == Mode::off || (d.store_multiply && !scaled && !spectral_last) || (mode == Mode::scaled && !scaled))
    return Form::cufft;
  Form form = Form::cufft;
  const auto packed = [&d](std::initializer_list<long long> n) {
    PlanDesc p = make_desc(d.device, d.kind, d.precision, n, d.batch, d.in_place);
    p.preserve_input = d.preserve_input;
    p.store_multiply = d.store_multiply;
    p.store_spectral = d.store_spectral;
    p.store_scale = d.store_scale;
    return normalize(p) == d;
  };
  // (The c2r plane kernel overwrites its input: a plan that keeps it stays on cuFFT.)
  if (d.rank == 2 && packed({d.n[0], d.n[1]}) && (d.kind != Kind::c2r || d.in_place || !d.preserve_input) &&
      plane_kernel_for(d, d.n[0], d.n[1]))
    return Form::planes;
  if (d.rank == 1) {
    if (d.kind == Kind::c2c && d.idist == 1 && d.odist == 1 && d.istride == d.ostride && d.batch <= d.istride)
      form = Form::columns;
  } else if (d.rank == 3 && d.batch <= 65535 && packed({d.n[0], d.n[1], d.n[2]})) {
    form = Form::split;
  }
  // The length and the device's shared memory last: the latter asks the driver.
  if (form == Form::cufft || !axis0_supported(d.n[0], settings().fft_axis_tile, d.device.index())) return Form::cufft;
  return form;
}

class CufftPlan final : public PlanBackend {
 public:
  explicit CufftPlan(const PlanDesc& d) : d_(d), cu_(d), type_(cufft_type(d)), form_(plan_form(d)) {
    DeviceGuard guard(d.device);
    if (form_ == Form::columns || form_ == Form::planes) {
      tw_ = axis0_twiddles(d.n[0], d.precision == Precision::single);
      if (form_ == Form::planes) plane_work_ = plane_work_bytes(d.batch);
      return;  // no cuFFT plan; the plane kernel's work area holds its counters
    }
    if (form_ == Form::split) {
      try {
        tw_ = axis0_twiddles(d.n[0], d.precision == Precision::single);
        // The 2-D pass on the plane kernel: its twiddles and counters, no cuFFT plan.
        if (plane_kernel_for(d, d.n[1], d.n[2])) {
          tw_plane_ = d.n[1] == d.n[0] ? tw_ : axis0_twiddles(d.n[1], d.precision == Precision::single);
          plane_work_ = plane_work_bytes(d.n[0] * d.batch);
        } else {
          // c2c: the 2-D pass runs in place on the output; c2r: from the pass's output to `out`;
          // r2c: from `in` to `out`, then the axis pass in place there.
          cu_ = normalize(make_desc(d.device, d.kind, d.precision, {d.n[1], d.n[2]}, d.n[0] * d.batch,
                                    d.kind == Kind::c2c || d.in_place));
          TESSERA_CHECK_CUFFT(make(false));
        }
      } catch (...) {
        release();
        throw;
      }
    } else if (d.store_multiply) {
      TESSERA_CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&slot_), sizeof(StoreParams)));
      TESSERA_CHECK_CUDA(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    }
    if (form_ == Form::cufft) try {
      // A store multiply is a JIT-linked callback; should cuFFT refuse it (no nvJitLink, an old
      // driver), the plan works without and multiplies in a pass of its own after each transform.
      const bool try_callback = d.store_multiply && settings().fft_callbacks && fft_callbacks_fatbin_size > 0 &&
                                !callback_refused(d).load();
      callback_ = try_callback && make(true) == CUFFT_SUCCESS;
      if (try_callback && !callback_) callback_refused(d).store(true);
      if (!callback_) TESSERA_CHECK_CUFFT(make(false));
      // Say once why the multiply runs as a pass of its own (it costs a read and a write).
      static bool said = false;
      if (d.store_multiply && !callback_ && settings().fft_callbacks && settings().verbose && !said)
        said = true, std::fprintf(stderr, "tessera: cuFFT store callback refused (%s): FFT scales run as a pass\n",
                                  note_.empty() ? "no LTO-IR built" : note_.c_str());
    } catch (...) {
      release();
      throw;
    }
    // cuFFT clobbers the input of an out-of-place c2r: a preserving plan transforms a copy.
    if (d.kind == Kind::c2r && !d.in_place && d.preserve_input) {
      in_bytes_ = input_bytes(d);
      copy_bytes_ = (in_bytes_ + work_alignment - 1) / work_alignment * work_alignment;
    }
  }
  ~CufftPlan() override { release(); }

  std::size_t work_bytes() const noexcept override { return copy_bytes_ + cufft_work_ + plane_work_; }

  void execute(const void* in, void* out, Direction dir, const Stream& s, void* work,
               const StoreMultiply* mult) const override {
    DeviceGuard guard(d_.device);
    const auto stream = static_cast<cudaStream_t>(s.native());
    Buffer pooled;
    if (!work && work_bytes() > 0) {
      pooled = Buffer(work_bytes(), s);  // freed on `s` after the transform: stream-ordered reuse
      work = pooled.data();
    }
    if (form_ == Form::columns) return pass(in, out, dir, mult, d_.batch, d_.istride, 1, 0, stream);
    if (form_ == Form::planes)
      return planes(in, out, dir, d_.batch, mult && d_.store_multiply ? d_.store_scale : 1.0, work, stream);
    if (form_ == Form::split) return execute_split(const_cast<void*>(in), out, dir, stream, work, mult);
    void* src = const_cast<void*>(in);  // cuFFT only writes to the input of c2r
    if (copy_bytes_) {
      TESSERA_CHECK_CUDA(cudaMemcpyAsync(work, in, in_bytes_, cudaMemcpyDeviceToDevice, stream));
      src = work;
    }
    // The stream and work area are plan state: set and use them under one lock.
    std::lock_guard<std::mutex> lock(mu_);
    const StoreParams params = mult ? to_params(*mult) : StoreParams{};
    if (mult) {
      // One parameter slot per plan: an execution on another stream waits until the last one read it.
      if (last_ && last_ != stream) TESSERA_CHECK_CUDA(cudaStreamWaitEvent(stream, done_, 0));
      if (callback_ && d_.store_scale == 0) store_write_params(slot_, params, stream);
    }
    run_cufft(src, out, dir, stream, work);
    if (mult && !callback_)
      store_multiply_cuda(out, d_.kind == Kind::c2r, d_.precision == Precision::single, layout(), params, stream);
    if (mult || callback_) {  // (the slot was read, or the plan's linked kernels ran)
      TESSERA_CHECK_CUDA(cudaEventRecord(done_, stream));
      last_ = stream;
    }
  }

  // A split r2c plan and a split c2r one (`backward`): the forward's 2-D pass into `spectrum`, one
  // kernel along axis 0 there (the forward's pass, the multiply, the backward's pass:
  // axis0_round_trip_cuda), the backward's 2-D pass into `out`. Where the multiply's block does not
  // have the pass's rows as an axis, the plans run one after the other (false).
  bool round_trip(const PlanBackend& backward, const void* in, void* spectrum, void* out, const Stream& s,
                  const StoreMultiply& mult, double backward_scale) const override {
    const auto* b = dynamic_cast<const CufftPlan*>(&backward);
    if (!b || form_ != Form::split || b->form_ != Form::split || d_.kind != Kind::r2c ||
        mult.spectral == StoreMultiply::Spectral::none)
      return false;
    const long long n0 = d_.n[0], cols = d_.n[1] * (d_.n[2] / 2 + 1);
    const StoreParams params = to_params(mult);
    const int row_axis = axis0::spectral_row_axis(params, n0, cols, cols, d_.batch, n0 * cols);
    if (row_axis < 0) return false;
    DeviceGuard guard(d_.device);
    const auto stream = static_cast<cudaStream_t>(s.native());
    // Work areas freed on `s` after the transforms.
    const Buffer mine = work_bytes() ? Buffer(work_bytes(), s) : Buffer();
    const Buffer theirs = b->work_bytes() ? Buffer(b->work_bytes(), s) : Buffer();
    std::scoped_lock lock(mu_, b->mu_);
    split_planes(const_cast<void*>(in), spectrum, Direction::forward, mine.data(), stream);
    axis0_round_trip_cuda(spectrum, tw_, d_.precision == Precision::single, n0, cols, cols, d_.batch, n0 * cols,
                          backward_scale, params, row_axis, settings().fft_axis_tile, settings().fft_halves, stream);
    // (The backward's 2-D pass may overwrite the spectrum: it is the round trip's own.)
    b->split_planes(spectrum, out, Direction::backward, theirs.data(), stream);
    return true;
  }

 private:
  // The axis pass over `batch` arrays (`dist` apart) of n[0] rows (`ld` apart), `cols` columns
  // each, with the plan's fixed scale when the execution carries a multiply, or the execution's
  // spectral factors (a spectral plan's pass is its last store: plan_form).
  void pass(const void* in, void* out, Direction dir, const StoreMultiply* mult, long long cols, long long ld,
            long long batch, long long dist, cudaStream_t stream) const {
    const bool spectral = mult && d_.store_spectral, single = d_.precision == Precision::single;
    const StoreParams params = spectral ? to_params(*mult) : StoreParams{};
    const int row_axis = spectral ? axis0::spectral_row_axis(params, d_.n[0], ld, cols, batch, dist) : -1;
    const bool by_row = row_axis >= 0;
    axis0_fft_cuda(in, out, tw_, single, dir == Direction::backward, d_.n[0], cols, ld, batch, dist,
                   mult && !spectral ? d_.store_scale : 1.0, by_row ? &params : nullptr, row_axis,
                   settings().fft_axis_tile, settings().fft_halves, stream);
    // Factors over a block whose axes are not the pass's rows: a pass of their own after it.
    if (spectral && !by_row) store_multiply_cuda(out, false, single, layout(), params, stream);
  }

  // The plane kernel over `batch` planes of the plan's inner two axes, times `scale`.
  void planes(const void* in, void* out, Direction dir, long long batch, double scale, void* work,
              cudaStream_t stream) const {
    const long long n = d_.n[d_.rank - 1];
    const void* tw = tw_plane_ ? tw_plane_ : tw_;
    const bool single = d_.precision == Precision::single;
    const Settings& s = settings();
    if (d_.kind == Kind::r2c)
      return plane_r2c_fft_cuda(in, out, tw, single, n, batch, d_.in_place, scale, s.fft_axis_tile, s.fft_halves,
                                work, stream);
    if (d_.kind == Kind::c2r)  // (plan_form and execute_split give it an input it may overwrite)
      return plane_c2r_fft_cuda(const_cast<void*>(in), out, tw, single, n, batch, d_.in_place, scale,
                                s.fft_axis_tile, s.fft_halves, work, stream);
    plane_fft_cuda(in, out, tw, single, dir == Direction::backward, n, batch, scale, s.fft_axis_tile, s.fft_halves,
                   work, stream);
  }

  // One cuFFT execution of the planned type on `stream`, its work area after the c2r copy's;
  // the caller holds mu_ (the stream and work area are plan state).
  void run_cufft(void* src, void* out, Direction dir, cudaStream_t stream, void* work) const {
    TESSERA_CHECK_CUFFT(cufftSetStream(handle_, stream));
    if (cufft_work_) TESSERA_CHECK_CUFFT(cufftSetWorkArea(handle_, static_cast<char*>(work) + copy_bytes_));
    const int sign = static_cast<int>(dir);  // CUFFT_FORWARD = -1, CUFFT_INVERSE = +1
    switch (type_) {
      case CUFFT_C2C:
        TESSERA_CHECK_CUFFT(cufftExecC2C(handle_, static_cast<cufftComplex*>(src), static_cast<cufftComplex*>(out), sign));
        break;
      case CUFFT_Z2Z:
        TESSERA_CHECK_CUFFT(cufftExecZ2Z(handle_, static_cast<cufftDoubleComplex*>(src), static_cast<cufftDoubleComplex*>(out), sign));
        break;
      case CUFFT_R2C:
        TESSERA_CHECK_CUFFT(cufftExecR2C(handle_, static_cast<cufftReal*>(src), static_cast<cufftComplex*>(out)));
        break;
      case CUFFT_D2Z:
        TESSERA_CHECK_CUFFT(cufftExecD2Z(handle_, static_cast<cufftDoubleReal*>(src), static_cast<cufftDoubleComplex*>(out)));
        break;
      case CUFFT_C2R:
        TESSERA_CHECK_CUFFT(cufftExecC2R(handle_, static_cast<cufftComplex*>(src), static_cast<cufftReal*>(out)));
        break;
      case CUFFT_Z2D:
        TESSERA_CHECK_CUFFT(cufftExecZ2D(handle_, static_cast<cufftDoubleComplex*>(src), static_cast<cufftDoubleReal*>(out)));
        break;
    }
  }

  // The split plan: the axis-0 pass (with the fixed scale) from `in` to the 2-D pass's input,
  // then the 2-D pass; r2c the other way round.
  void execute_split(void* in, void* out, Direction dir, cudaStream_t stream, void* work,
                     const StoreMultiply* mult) const {
    const long long cols = d_.n[1] * (d_.kind == Kind::c2c ? d_.n[2] : d_.n[2] / 2 + 1);
    std::lock_guard<std::mutex> lock(mu_);
    if (d_.kind == Kind::r2c) {
      split_planes(in, out, dir, work, stream);
      return pass(out, out, dir, mult, cols, cols, d_.batch, d_.n[0] * cols, stream);
    }
    // A preserving c2r's pass writes the copy that cuFFT (or the plane kernel) may overwrite; others
    // run in place there.
    void* mid = d_.kind == Kind::c2c ? out : copy_bytes_ ? work : in;
    pass(in, mid, dir, mult, cols, cols, d_.batch, d_.n[0] * cols, stream);
    split_planes(mid, out, dir, work, stream);
  }

  // A split plan's 2-D pass over its n[0] * batch planes, on the plane kernel or cuFFT; both keep
  // their part of the work area after a preserving c2r's copy (copy_bytes_, 0 for other kinds).
  // The caller holds mu_.
  void split_planes(void* in, void* out, Direction dir, void* work, cudaStream_t stream) const {
    if (plane_work_)
      return planes(in, out, dir, d_.n[0] * d_.batch, 1.0, static_cast<char*>(work) + copy_bytes_, stream);
    run_cufft(in, out, dir, stream, work);
  }

  // Creates the handle and plans it, with the store callback or without; a failure leaves no handle.
  cufftResult make(bool with_callback) {
    const NodePlanningLock one_at_a_time;
    if (handle_) (void)cufftDestroy(std::exchange(handle_, 0));
    TESSERA_CHECK_CUFFT(cufftCreate(&handle_));
    cufftResult r = cufftSetAutoAllocation(handle_, 0);
    if (r == CUFFT_SUCCESS && with_callback) r = set_callback();
    if (r == CUFFT_SUCCESS && with_callback && settings().fft_patient_jit)
      r = cufftSetPlanPropertyInt64(handle_, NVFFT_PLAN_PROPERTY_INT64_PATIENT_JIT, 1);
    if (r == CUFFT_SUCCESS) {
      long long n[3], inembed[3], onembed[3];  // cuFFT takes non-const arrays
      for (int i = 0; i < 3; ++i) n[i] = cu_.n[i], inembed[i] = cu_.inembed[i], onembed[i] = cu_.onembed[i];
      std::size_t ws = 0;
      r = cufftMakePlanMany64(handle_, cu_.rank, n, inembed, cu_.istride, cu_.idist, onembed, cu_.ostride, cu_.odist,
                              type_, cu_.batch, &ws);
      if (r != CUFFT_SUCCESS && with_callback) {  // the typed planner (what cuFFT's LTO samples use)
        note_ = "cufftMakePlanMany64 with the callback returned " + std::to_string(static_cast<int>(r));
        (void)cufftDestroy(std::exchange(handle_, 0));
        TESSERA_CHECK_CUFFT(cufftCreate(&handle_));
        r = cufftSetAutoAllocation(handle_, 0);
        if (r == CUFFT_SUCCESS) r = set_callback();
        const bool sp = cu_.precision == Precision::single;
        const cudaDataType c = sp ? CUDA_C_32F : CUDA_C_64F, re = sp ? CUDA_R_32F : CUDA_R_64F;
        const cudaDataType in = cu_.kind == Kind::r2c ? re : c, out = cu_.kind == Kind::c2r ? re : c;
        if (r == CUFFT_SUCCESS)
          r = cufftXtMakePlanMany(handle_, cu_.rank, n, inembed, cu_.istride, cu_.idist, in, onembed, cu_.ostride,
                                  cu_.odist, out, cu_.batch, &ws, c);
        if (r != CUFFT_SUCCESS) note_ += ", cufftXtMakePlanMany " + std::to_string(static_cast<int>(r));
        else note_.clear();
      }
      cufft_work_ = ws;
    } else if (with_callback) {
      note_ = "cufftXtSetJITCallback returned " + std::to_string(static_cast<int>(r));
    }
    if (r != CUFFT_SUCCESS && with_callback && note_.empty())
      note_ = "cufftMakePlanMany64 with the callback returned " + std::to_string(static_cast<int>(r));
    if (r != CUFFT_SUCCESS) (void)cufftDestroy(std::exchange(handle_, 0));
    // Planning may leave work on the legacy stream (uploads of the plan's tables), which the
    // non-blocking streams the executions run on do not wait for; the axis pass's twiddles had
    // that fault (fft_axis0.cu). Wait for it here, once per plan.
    if (r == CUFFT_SUCCESS) TESSERA_CHECK_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
    return r;
  }
  cufftResult set_callback() {
    const bool real_out = d_.kind == Kind::c2r, single = d_.precision == Precision::single;
    static const char* const names[3][4] = {{"tessera_scale_c", "tessera_scale_z", "tessera_scale_r", "tessera_scale_d"},
                                             {"tessera_store_c", "tessera_store_z", "tessera_store_r", "tessera_store_d"},
                                             {"tessera_const_c", "tessera_const_z", "tessera_const_r", "tessera_const_d"}};
    const bool fixed = d_.store_scale != 0;
    const char* name = names[fixed ? 2 : d_.store_spectral ? 1 : 0][(real_out ? 2 : 0) + (single ? 0 : 1)];
    const auto type = real_out ? (single ? CUFFT_CB_ST_REAL : CUFFT_CB_ST_REAL_DOUBLE)
                               : (single ? CUFFT_CB_ST_COMPLEX : CUFFT_CB_ST_COMPLEX_DOUBLE);
    // A fixed scale travels as the bits of the parameter pointer (a float's in the low 32 bits for
    // single precision): cuFFT passes the pointer by value, so no store reads memory for it.
    caller_info_[0] = slot_;
    if (fixed) {
      std::uint64_t bits = single ? std::bit_cast<std::uint32_t>(static_cast<float>(d_.store_scale))
                                  : std::bit_cast<std::uint64_t>(d_.store_scale);
      std::memcpy(&caller_info_[0], &bits, sizeof bits);
    }
    return cufftXtSetJITCallback(handle_, name, fft_callbacks_fatbin, fft_callbacks_fatbin_size, type, caller_info_);
  }
  void release() noexcept {
    // A callback plan's kernels were JIT-linked for it, and cufftDestroy may unload them: an
    // execution still queued behind other processes' work on a shared GPU would run freed code.
    if (done_ && last_) (void)cudaEventSynchronize(done_);
    if (handle_) (void)cufftDestroy(handle_);
    if (done_) (void)cudaEventDestroy(done_);
    if (tw_plane_ && tw_plane_ != tw_) (void)cudaFree(tw_plane_);
    if (tw_) (void)cudaFree(tw_);
    if (slot_) (void)cudaFree(slot_);
  }
  StoreLayout layout() const {
    StoreLayout l{d_.rank, d_.batch, {1, 1, 1}, {1, 1, 1}, d_.ostride, d_.odist};
    for (int i = 0; i < d_.rank; ++i) l.m[i] = d_.n[i], l.onembed[i] = d_.onembed[i];
    if (d_.kind == Kind::r2c) l.m[d_.rank - 1] = d_.n[d_.rank - 1] / 2 + 1;
    return l;
  }

  PlanDesc d_;
  PlanDesc cu_;  // what cuFFT plans: d_, or the 2-D pass of a split plan
  cufftType type_;
  Form form_;
  void* tw_ = nullptr;  // the axis pass's twiddles (split and columns), the plane kernel's (planes)
  void* tw_plane_ = nullptr;  // a split plan's plane kernel's, where its planes' length is not n[0]
  std::size_t plane_work_ = 0;  // the plane kernel's counters (planes, and split plans that use it)
  cufftHandle handle_ = 0;
  std::size_t cufft_work_ = 0, copy_bytes_ = 0, in_bytes_ = 0;
  StoreParams* slot_ = nullptr;  // the callback's parameters (callerInfo), rewritten per execution
  // The callerInfo array handed to cufftXtSetJITCallback lives as long as the plan: cuFFT keeps
  // the callback's fatbin and name and reads them when the plan is made, after the call returns,
  // and its documentation does not say that it copies this array at the call.
  void* caller_info_[1] = {nullptr};
  cudaEvent_t done_ = nullptr;   // the last execution with a multiply or the callback ...
  mutable cudaStream_t last_ = nullptr;  // ... and its stream
  bool callback_ = false;
  std::string note_;  // why cuFFT refused the callback
  mutable std::mutex mu_;
};

}  // namespace

std::unique_ptr<PlanBackend> make_cufft_plan(const PlanDesc& d) { return std::make_unique<CufftPlan>(d); }

}  // namespace tessera::local::fft::detail
