// FFT plans: descriptor validation, the plan object and its cache (backend-neutral). The
// backends: FFTW3 in fft_fftw.cpp, cuFFT in fft_cufft.cpp (this folder).
#include "tessera/local/fft_plan.hpp"
#include "tessera/local/context_cache.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "fft_dims.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/memory.hpp"

namespace tessera::local::fft {
namespace {

using detail::Dims;
using detail::product;

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
  check_device_usable(d.device);  // BackendUnavailable in a build without CUDA
  // Only an out-of-place c2r can clobber its input; a canonical key for everything else.
  if (d.kind != Kind::c2r || d.in_place) d.preserve_input = true;
  if (d.store_scale != 0 && (!d.store_multiply || d.store_spectral || !std::isfinite(d.store_scale)))
    bad(d, cat("store_scale=", d.store_scale, " needs store_multiply without store_spectral, and a finite value"));

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
     << (d.in_place ? " in-place" : "") << (d.preserve_input ? "" : " destroy-input")
     << (d.store_multiply ? (d.store_spectral ? " store-multiply-spectral" : " store-multiply") : "");
  if (d.store_scale != 0) os << " scale " << d.store_scale;
  os << " on "
     << d.device.str();
  return os.str();
}

// ---- Plan and cache -----------------------------------------------------------------------

Plan::Plan(const PlanDesc& desc) : desc_(normalize(desc)), backend_(detail::make_plan_backend(desc_)) {}

Plan::~Plan() = default;

std::size_t Plan::work_bytes() const noexcept { return backend_->work_bytes(); }

void Plan::execute(const void* in, void* out, Direction dir, const Stream& stream, void* work) const {
  if (desc_.store_multiply) {
    StoreMultiply m;
    if (desc_.store_scale != 0) m.scale = desc_.store_scale;
    return execute(in, out, dir, stream, m, work);
  }
  check(in, out, dir, stream);
  backend_->execute(in, out, dir, stream, work, nullptr);
}

void Plan::execute(const void* in, void* out, Direction dir, const Stream& stream, const StoreMultiply& mult,
                   void* work) const {
  check_multiply(mult);
  check(in, out, dir, stream);
  backend_->execute(in, out, dir, stream, work, &mult);
}

void Plan::execute_round_trip(const Plan& backward, const void* in, void* spectrum, void* out, const Stream& stream,
                              const StoreMultiply& mult, double backward_scale) const {
  check_pair(backward, backward_scale);
  check_multiply(mult);
  check(in, spectrum, Direction::forward, stream);
  backward.check(spectrum, out, Direction::backward, stream);
  if (backend_->round_trip(*backward.backend_, in, spectrum, out, stream, mult, backward_scale)) return;
  backend_->execute(in, spectrum, Direction::forward, stream, nullptr, &mult);
  StoreMultiply scale;
  scale.scale = backward_scale;
  backward.backend_->execute(spectrum, out, Direction::backward, stream, nullptr,
                             backward.desc_.store_multiply ? &scale : nullptr);
}

void Plan::check_pair(const Plan& backward, double backward_scale) const {
  const PlanDesc &f = desc_, &b = backward.desc_;
  const auto fail = [&](const std::string& why) {
    throw InvalidArgument(cat("fft round trip (", to_string(f), " then ", to_string(b), "): ", why), f.device);
  };
  if (!(f.kind == Kind::r2c && b.kind == Kind::c2r) && !(f.kind == Kind::c2c && b.kind == Kind::c2c))
    fail(cat("a ", name(f.kind), " plan does not pair with a ", name(b.kind), " one (r2c with c2r, c2c with c2c)"));
  if (f.device != b.device || f.precision != b.precision || f.rank != b.rank || f.n != b.n || f.batch != b.batch)
    fail("the plans differ in device, precision, sizes or batch");
  if (f.onembed != b.inembed || f.ostride != b.istride || f.odist != b.idist)
    fail("the backward's input is not laid out as the forward's output");
  if (!b.store_multiply && backward_scale != 1.0)
    fail(cat("backward scale ", backward_scale, " needs a store_multiply backward plan"));
  if (b.store_scale != 0 && backward_scale != b.store_scale)
    fail(cat("backward scale ", backward_scale, " differs from the backward plan's store_scale ", b.store_scale));
}

void Plan::check_multiply(const StoreMultiply& mult) const {
  if (!desc_.store_multiply)
    throw InvalidArgument(cat("fft execute (", to_string(desc_), "): a StoreMultiply needs a store_multiply plan"),
                          desc_.device);
  if (mult.spectral != StoreMultiply::Spectral::none && !desc_.store_spectral)
    throw InvalidArgument(cat("fft execute (", to_string(desc_), "): a spectral StoreMultiply needs a plan made with ",
                              "store_spectral"), desc_.device);
  if (desc_.store_scale != 0 && mult.scale != desc_.store_scale)
    throw InvalidArgument(cat("fft execute (", to_string(desc_), "): StoreMultiply scale ", mult.scale,
                              " differs from the plan's store_scale ", desc_.store_scale), desc_.device);
  if (mult.dims < 0 || mult.dims > 4 || (mult.spectral != StoreMultiply::Spectral::none && mult.dims == 0))
    throw InvalidArgument(cat("fft execute (", to_string(desc_), "): StoreMultiply dims ", mult.dims,
                              " must be 1..4 with a spectral factor (0..4 without)"), desc_.device);
  for (int a = 0; a < mult.dims; ++a)
    if (mult.block[a] < 1 || mult.n[a] < 0)
      throw InvalidArgument(cat("fft execute (", to_string(desc_), "): StoreMultiply block[", a, "]=", mult.block[a],
                                " must be >= 1 and n[", a, "]=", mult.n[a], " >= 0"), desc_.device);
}

void Plan::check(const void* in, const void* out, Direction dir, const Stream& stream) const {
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
}

void Plan::execute(const void* in, void* out, Direction dir) const {
  execute(in, out, dir, Stream::default_for(desc_.device));
}

namespace {
// The current context's plans: they end with it (before the CUDA driver and MPI do).
struct PlanTag;
using PlanCache = ContextCache<PlanTag, PlanDesc, const Plan, 0, std::hash<PlanDesc>>;
}  // namespace

std::shared_ptr<const Plan> get_plan(const PlanDesc& desc) {
  const PlanDesc key = normalize(desc);
  return PlanCache::current().get(key, [&] { return std::make_shared<const Plan>(key); });
}

std::size_t plan_cache_size() { return PlanCache::current().size(); }

void clear_plan_cache() { PlanCache::current().clear(); }

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
  mix(d.store_multiply);
  mix(d.store_spectral);
  mix(static_cast<long long>(std::bit_cast<std::uint64_t>(d.store_scale)));
  return h;
}
