// FFT plans: descriptor validation, the plan object and its cache (backend-neutral), and the
// FFTW3 backend for host plans. The cuFFT backend is in src/cuda/fft_cufft.cpp.
#include "tessera/local/fft_plan.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "tessera/config.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/memory.hpp"

namespace tessera::local::fft {
namespace {

using Dims = std::array<long long, 3>;

// Builds messages by streaming (also sidesteps GCC 12's false -Wrestrict on "lit" + string&&).
template <class... A>
std::string cat(const A&... a) {
  std::ostringstream os;
  (os << ... << a);
  return os.str();
}

std::string name(Kind k) { return k == Kind::c2c ? "c2c" : k == Kind::r2c ? "r2c" : "c2r"; }
std::string name(Direction d) { return d == Direction::forward ? "forward" : "backward"; }

std::string str(const Dims& a, int rank) {
  std::ostringstream os;
  for (int i = 0; i < rank; ++i) os << (i ? "," : "[") << a[i];
  os << "]";
  return os.str();
}

[[noreturn]] void bad(const PlanDesc& d, const std::string& why) {
  throw InvalidArgument("fft plan: " + why, d.device);
}

bool input_is_real(const PlanDesc& d) { return d.kind == Kind::r2c; }
bool output_is_real(const PlanDesc& d) { return d.kind == Kind::c2r; }

// The logical dims of one side: the complex side of r2c/c2r holds n/2+1 in the last dimension.
Dims side_dims(const PlanDesc& d, bool real) {
  Dims m = d.n;
  if (d.kind != Kind::c2c && !real) m[d.rank - 1] = m[d.rank - 1] / 2 + 1;
  return m;
}

long long product(const Dims& a, int from, int to) {
  long long p = 1;
  for (int i = from; i < to; ++i) p *= a[i];
  return p;
}

bool all_zero(const Dims& a) { return a == Dims{}; }

// Elements spanned from the base pointer by one side of a normalized descriptor.
long long span(const PlanDesc& d, const Dims& m, const Dims& embed, long long stride, long long dist) {
  long long last = (d.batch - 1) * dist;
  for (int i = 0; i < d.rank; ++i) last += (m[i] - 1) * stride * product(embed, i + 1, d.rank);
  return last + 1;
}

std::size_t element_bytes(const PlanDesc& d, bool real) {
  const std::size_t r = d.precision == Precision::single ? sizeof(float) : sizeof(double);
  return real ? r : 2 * r;
}

void check_embed(const PlanDesc& d, const char* field, const Dims& embed, const Dims& m) {
  for (int i = 0; i < d.rank; ++i)
    if (embed[i] < m[i])
      bad(d, cat(field, "[", i, "]=", embed[i], " is smaller than the data's extent ", m[i]));
}

}  // namespace

PlanDesc make_desc(Device device, Kind kind, Precision precision, std::initializer_list<long long> n,
                   long long batch, bool in_place) {
  PlanDesc d;
  d.device = device;
  d.kind = kind;
  d.precision = precision;
  d.rank = static_cast<int>(n.size());
  if (d.rank < 1 || d.rank > 3)
    bad(d, cat("rank=", d.rank, " (number of sizes) must be 1, 2 or 3"));
  std::copy(n.begin(), n.end(), d.n.begin());
  d.batch = batch;
  d.in_place = in_place;
  return d;  // layout fields stay 0 (defaults) so that callers can still adjust them
}

PlanDesc normalize(const PlanDesc& in) {
  PlanDesc d = in;
  if (d.kind != Kind::c2c && d.kind != Kind::r2c && d.kind != Kind::c2r)
    bad(d, cat("kind=", static_cast<int>(d.kind), " is not c2c, r2c or c2r"));
  if (d.precision != Precision::single && d.precision != Precision::double_)
    bad(d, cat("precision=", static_cast<int>(d.precision), " is not single or double"));
  if (d.rank < 1 || d.rank > 3) bad(d, cat("rank=", d.rank, " must be 1, 2 or 3"));
  for (int i = 0; i < 3; ++i) {
    if (i < d.rank && d.n[i] <= 0) bad(d, cat("n[", i, "]=", d.n[i], " must be > 0"));
    if (i >= d.rank && d.n[i] != 0) bad(d, cat("n[", i, "]=", d.n[i], " must be 0 beyond rank ", d.rank));
    for (auto [field, e] : {std::pair{"inembed", d.inembed[i]}, std::pair{"onembed", d.onembed[i]}})
      if (i >= d.rank && e != 0) bad(d, cat(field, "[", i, "]=", e, " must be 0 beyond rank ", d.rank));
  }
  if (d.batch <= 0) bad(d, cat("batch=", d.batch, " must be > 0"));
  const std::pair<const char*, long long> layout[] = {
      {"istride", d.istride}, {"ostride", d.ostride}, {"idist", d.idist}, {"odist", d.odist}};
  for (auto [field, v] : layout)
    if (v < 0) bad(d, cat(field, "=", v, " must be > 0 (or 0 for the default)"));
  if (d.device.is_cuda()) {
    if (!TESSERA_HAVE_CUDA)
      throw BackendUnavailable(cat("fft plan on ", d.device, ": this Tessera was built without CUDA"));
    check_device_usable(d.device);
  }
  // Only an out-of-place c2r can clobber its input; a canonical key for everything else.
  if (d.kind != Kind::c2r || d.in_place) d.preserve_input = true;

  const int last = d.rank - 1;
  const Dims mi = side_dims(d, input_is_real(d)), mo = side_dims(d, output_is_real(d));
  if (all_zero(d.inembed)) {
    d.inembed = mi;
    if (d.in_place && input_is_real(d)) d.inembed[last] = 2 * (d.n[last] / 2 + 1);
  }
  check_embed(d, "inembed", d.inembed, mi);
  if (d.istride == 0) d.istride = 1;
  if (d.idist == 0) d.idist = d.istride * product(d.inembed, 0, d.rank);

  if (d.in_place) {
    // Defaulted output fields view the input's memory: same stride, embed and dist in bytes.
    const auto rescale = [&](long long v, const char* field) {
      if (d.kind == Kind::c2c) return v;
      if (d.kind == Kind::c2r) return 2 * v;
      if (v % 2) bad(d, cat("in-place r2c: ", field, "=", v, " must be even"));
      return v / 2;
    };
    if (all_zero(d.onembed)) {
      d.onembed = d.inembed;
      d.onembed[last] = rescale(d.inembed[last], "inembed[rank-1]");
    }
    if (d.ostride == 0) d.ostride = d.istride;
    if (d.odist == 0) d.odist = rescale(d.idist, "idist");
    // The real side's rows must hold the n/2+1 complex results written over them.
    const long long real_row = d.kind == Kind::r2c ? d.inembed[last] : d.onembed[last];
    if (d.kind != Kind::c2c && real_row < 2 * (d.n[last] / 2 + 1))
      bad(d, cat("in-place ", name(d.kind), ": real rows of ", real_row,
                 " elements must be padded to 2*(n/2+1)=", 2 * (d.n[last] / 2 + 1)));
  } else {
    if (all_zero(d.onembed)) d.onembed = mo;
    if (d.ostride == 0) d.ostride = 1;
    if (d.odist == 0) d.odist = d.ostride * product(d.onembed, 0, d.rank);
  }
  check_embed(d, "onembed", d.onembed, mo);
  return d;
}

namespace {
// Elements / bytes of one side of a normalized descriptor.
long long elements(const PlanDesc& d, bool input) {
  return input ? span(d, side_dims(d, input_is_real(d)), d.inembed, d.istride, d.idist)
               : span(d, side_dims(d, output_is_real(d)), d.onembed, d.ostride, d.odist);
}
std::size_t bytes(const PlanDesc& d, bool input) {
  return static_cast<std::size_t>(elements(d, input)) *
         element_bytes(d, input ? input_is_real(d) : output_is_real(d));
}
}  // namespace

long long input_elements(const PlanDesc& d) { return elements(normalize(d), true); }
long long output_elements(const PlanDesc& d) { return elements(normalize(d), false); }
std::size_t input_bytes(const PlanDesc& d) { return bytes(normalize(d), true); }
std::size_t output_bytes(const PlanDesc& d) { return bytes(normalize(d), false); }

std::string to_string(const PlanDesc& d) {
  std::ostringstream os;
  const int r = std::clamp(d.rank, 1, 3);
  os << name(d.kind) << (d.precision == Precision::single ? " single " : " double ") << str(d.n, r)
     << " batch " << d.batch << " in" << str(d.inembed, r) << "/" << d.istride << "/" << d.idist
     << " out" << str(d.onembed, r) << "/" << d.ostride << "/" << d.odist
     << (d.in_place ? " in-place" : "") << (d.preserve_input ? "" : " destroy-input") << " on "
     << d.device.str();
  return os.str();
}

// ---- FFTW backend -------------------------------------------------------------------------
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
      : d_(d), in_bytes_(bytes(d, true)),
        work_bytes_(d.kind == Kind::c2r && !d.in_place && d.preserve_input ? in_bytes_ : 0) {
    // Guru64 dims: the same layout as the descriptor, with 64-bit sizes and strides.
    fftw_iodim64 dims[3], howmany{d.batch, d.idist, d.odist};
    for (int i = 0; i < d.rank; ++i)
      dims[i] = {d.n[i], d.istride * product(d.inembed, i + 1, d.rank),
                 d.ostride * product(d.onembed, i + 1, d.rank)};
    // FFTW_ESTIMATE never touches the arrays, so untouched (lazily mapped) scratch of the right
    // extent stands in for the user's; FFTW_UNALIGNED lets execute() take arrays of any alignment.
    const std::size_t ib = in_bytes_, ob = bytes(d, false);
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
      throw Error(cat("fft plan: FFTW could not plan ", to_string(d)), d.device);
    }
  }
  ~FftwPlan() override { destroy(); }

  std::size_t work_bytes() const noexcept override { return work_bytes_; }

  void execute(const void* in, void* out, Direction dir, const Stream&, void* work) const override {
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

 private:
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

// ---- Plan and cache -----------------------------------------------------------------------

Plan::Plan(const PlanDesc& desc) : desc_(normalize(desc)) {
#if TESSERA_HAVE_CUDA
  if (desc_.device.is_cuda()) {
    backend_ = detail::make_cufft_plan(desc_);
    return;
  }
#endif
  backend_ = detail::make_fftw_plan(desc_);
}

Plan::~Plan() = default;

std::size_t Plan::work_bytes() const noexcept { return backend_->work_bytes(); }

void Plan::execute(const void* in, void* out, Direction dir, const Stream& stream, void* work) const {
  const auto fail = [&](const std::string& why) {
    throw InvalidArgument(cat("fft execute (", to_string(desc_), "): ", why), desc_.device);
  };
  if (!in || !out) fail(cat("null ", in ? "output" : "input", " pointer"));
  if (dir != Direction::forward && dir != Direction::backward)
    fail(cat("direction ", static_cast<int>(dir), " is not forward (-1) or backward (+1)"));
  if (desc_.kind == Kind::r2c && dir != Direction::forward) fail(cat("r2c runs only forward, not ", name(dir)));
  if (desc_.kind == Kind::c2r && dir != Direction::backward) fail(cat("c2r runs only backward, not ", name(dir)));
  if (desc_.in_place && in != out) fail("the plan is in-place but in != out");
  if (!desc_.in_place && in == out) fail("the plan is out-of-place but in == out");
  if (stream.device() != desc_.device)
    throw DeviceMismatch(cat("fft execute: plan on ", desc_.device, ", stream on ", stream.device()),
                         desc_.device);
  backend_->execute(in, out, dir, stream, work);
}

void Plan::execute(const void* in, void* out, Direction dir) const {
  execute(in, out, dir, Stream::default_for(desc_.device));
}

namespace {
struct Cache {
  std::mutex mu;
  std::unordered_map<PlanDesc, std::shared_ptr<const Plan>> plans;
};
// Leaked on purpose: destroying cuFFT plans after the CUDA driver shut down at exit is an error.
Cache& cache() {
  static auto* c = new Cache();
  return *c;
}
}  // namespace

std::shared_ptr<const Plan> get_plan(const PlanDesc& desc) {
  const PlanDesc key = normalize(desc);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.plans.find(key); it != c.plans.end()) return it->second;
  }
  // Plan outside the lock so that slow planning does not block lookups; a racing thread's plan
  // for the same key wins and this one is dropped.
  auto plan = std::make_shared<const Plan>(key);
  std::lock_guard<std::mutex> lock(c.mu);
  return c.plans.try_emplace(key, std::move(plan)).first->second;
}

std::size_t plan_cache_size() {
  std::lock_guard<std::mutex> lock(cache().mu);
  return cache().plans.size();
}

void clear_plan_cache() {
  std::unordered_map<PlanDesc, std::shared_ptr<const Plan>> old;
  {
    std::lock_guard<std::mutex> lock(cache().mu);
    old.swap(cache().plans);
  }  // plans are destroyed here, outside the lock
}

}  // namespace tessera::local::fft

std::size_t std::hash<tessera::local::fft::PlanDesc>::operator()(const tessera::local::fft::PlanDesc& d) const noexcept {
  std::size_t h = 1469598103934665603ull;
  const auto mix = [&h](long long v) { h = (h ^ static_cast<std::size_t>(v)) * 1099511628211ull; };
  mix(static_cast<int>(d.device.kind()));
  mix(d.device.index());
  mix(static_cast<int>(d.kind));
  mix(static_cast<int>(d.precision));
  mix(d.rank);
  for (int i = 0; i < 3; ++i) {
    mix(d.n[i]);
    mix(d.inembed[i]);
    mix(d.onembed[i]);
  }
  for (long long v : {d.batch, d.istride, d.idist, d.ostride, d.odist}) mix(v);
  mix(d.in_place);
  mix(d.preserve_input);
  return h;
}
