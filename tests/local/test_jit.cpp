// The runtime kernel compiler (jit/*.hpp), from a plain C++ translation unit:
//  - the IR and the generated source of a few expressions;
//  - every operation for every element type, on both kernel paths, compiles with NVRTC to a cubin
//    (no GPU needed; skipped in builds without CUDA);
//  - the disk cache: miss, hit, truncated / corrupt / foreign files, a version change, an unusable
//    directory, every rank compiling the same kernel at once (with a fake compiler);
//  - on a GPU: expressions through NVRTC against the nvcc executor (jit_reference.cu), bit for bit.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "device_test.hpp"
#include "tessera/config.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/expr.hpp"
#include "tessera/local/jit/compiler.hpp"
#include "tessera/local/jit/lower.hpp"
#include "tessera/local/jit/string_kernel.hpp"
#if TESSERA_HAVE_CUDA
#include "jit_reference.hpp"
#endif

namespace {
namespace tl = tessera::local;
namespace local = tessera::local;
namespace jit = tessera::local::jit;
using tessera::Device;
using tessera::DType;
using tl::Array;
using tl::index_t;

#include "jit_expressions.inc"

jit::Kernel lowered_kernel(const auto& dst, const auto& expr, bool linear) {
  auto e = tl::as_expr(expr);
  return tl::jit_lowering::lower_assignment(dst, e.bind(dst.shape()), linear).kernel;
}

TEST(JitIr, TriadLowersToLoadsScalarAndTwoNodes) {
  auto a = Array<float, 1>(tl::Shape<1>{8}, Device::host()), b = Array<float, 1>(tl::Shape<1>{8}, Device::host());
  const auto k = lowered_kernel(a, a + 2.0f * b, true);
  ASSERT_EQ(k.nodes.size(), 5u);
  EXPECT_EQ(k.nodes[0].op, jit::Op::load);
  EXPECT_EQ(k.nodes[1].op, jit::Op::scalar);
  EXPECT_EQ(k.nodes[3].op, jit::Op::mul);
  EXPECT_EQ(k.nodes[4].op, jit::Op::add);
  EXPECT_EQ(k.operands(), 2);
  EXPECT_EQ(k.scalars(), 1);
  EXPECT_EQ(k.unroll(), 4);  // 4-byte loads: four elements per thread, as the nvcc executor
  const std::string src = jit::generate_cuda(k, "triad");
  for (const char* want : {"extern \"C\" __global__ void triad(float* out, long long n, const float* p0, const float* p1, float c0)",
                           "const float v0 = p0[j];", "const float v1 = c0;", "const auto v3 = tj::mul(v1, v2);",
                           "const auto v4 = v0 + v3;", "r[k] = tj::convert<float>(v4);", "constexpr int U = 4;"})
    EXPECT_NE(src.find(want), std::string::npos) << want << "\n" << src;
}

// Elements per thread: 8-byte arithmetic streams one, 8-byte math functions take four (their
// latency hidden), and more than four loads take one whatever the types.
TEST(JitIr, ElementsPerThreadFollowTypesAndMath) {
  auto d = Array<double, 1>(tl::Shape<1>{8}, Device::host()), e = Array<double, 1>(tl::Shape<1>{8}, Device::host());
  auto f = Array<float, 1>(tl::Shape<1>{8}, Device::host());
  EXPECT_EQ(lowered_kernel(d, d * e + d, true).unroll(), 1);
  EXPECT_EQ(lowered_kernel(d, tl::exp(d) * e, true).unroll(), 4);
  EXPECT_EQ(lowered_kernel(d, d * tl::sin(e) + tl::exp(d), true).unroll(), 4);
  EXPECT_EQ(lowered_kernel(f, f * f + f, true).unroll(), 4);
  EXPECT_NE(jit::generate_cuda(lowered_kernel(d, tl::exp(d) * e, true), "k").find("constexpr int U = 4;"),
            std::string::npos);
}

TEST(JitIr, KeysDependOnStructureAndTypesNotSizes) {
  auto a = Array<double, 2>(tl::Shape<2>{4, 5}, Device::host()), b = Array<double, 2>(tl::Shape<2>{40, 50}, Device::host());
  const auto k1 = lowered_kernel(a, a * 3.0 + tl::sin(a), true), k2 = lowered_kernel(b, b * 7.0 + tl::sin(b), true);
  EXPECT_EQ(k1.key(), k2.key());
  EXPECT_NE(k1.key(), lowered_kernel(a, a * 3.0 + tl::cos(a), true).key());
  EXPECT_NE(k1.key(), lowered_kernel(a, a * 3.0 + tl::sin(a), false).key());
  auto f = Array<float, 2>(tl::Shape<2>{4, 5}, Device::host());
  EXPECT_NE(k1.key(), lowered_kernel(f, f * 3.0f + tl::sin(f), true).key());
}

TEST(JitIr, StridedPathBroadcastsWithZeroStrides) {
  auto a = Array<double, 2>(tl::Shape<2>{4, 5}, Device::host()), row = Array<double, 2>(tl::Shape<2>{1, 5}, Device::host());
  auto e = tl::as_expr(a * row);
  const auto L = tl::jit_lowering::lower_assignment(a, e.bind(a.shape()), false);
  ASSERT_EQ(L.args.operands.size(), 2u);
  EXPECT_EQ(L.args.operands[1].strides[0], 0);  // broadcast down axis 0
  EXPECT_EQ(L.args.operands[1].strides[1], 1);
  const std::string src = jit::generate_cuda(L.kernel, "bcast");
  EXPECT_NE(src.find("Dims shape, Dims ostr, const double* p0, Dims s0, const double* p1, Dims s1"), std::string::npos) << src;
  EXPECT_NE(src.find("unsigned rem"), std::string::npos) << "32-bit index arithmetic below 2^31 elements\n" << src;
}

TEST(JitIr, BadKernelsThrow) {
  jit::Kernel k;
  EXPECT_THROW(k.validate(), tessera::InvalidArgument);
  k.nodes.push_back({jit::Op::add, DType::float32, 0, 1});
  EXPECT_THROW(k.validate(), tessera::InvalidArgument);  // operands not earlier nodes
  k.nodes = {{jit::Op::load, DType::float32, -1, -1, -1, 0}, {jit::Op::sin, DType::float32, 0, 0}};
  EXPECT_THROW(k.validate(), tessera::InvalidArgument);  // sin takes one operand
}

TEST(JitIr, NumpyPromotion) {
  EXPECT_EQ(jit::promote(DType::int32, DType::float32), DType::float64);
  EXPECT_EQ(jit::promote(DType::float32, DType::float64), DType::float64);
  EXPECT_EQ(jit::promote(DType::boolean, DType::int32), DType::int32);
  EXPECT_EQ(jit::promote(DType::int32, DType::int64), DType::int64);
  EXPECT_EQ(jit::promote(DType::complex64, DType::float64), DType::complex128);
  EXPECT_EQ(jit::promote(DType::complex64, DType::float32), DType::complex64);
  EXPECT_EQ(jit::promote(DType::int64, DType::complex64), DType::complex128);
}

// One kernel per element type and path holding every operation the type takes (results unused
// but compiled), so that ~20 NVRTC calls cover the whole table.
jit::Kernel every_op_kernel(DType t, bool linear, bool index32) {
  using jit::Op;
  const bool cplx = t == DType::complex64 || t == DType::complex128;
  const bool fp = t == DType::float32 || t == DType::float64;
  const bool integer = t == DType::int32 || t == DType::int64;
  jit::Kernel k;
  k.out = t, k.rank = 3, k.linear = linear, k.index32 = index32;
  k.nodes.push_back({Op::load, t, -1, -1, -1, 0});
  k.nodes.push_back({Op::load, t, -1, -1, -1, 1});
  k.nodes.push_back({Op::scalar, t, -1, -1, -1, 0});
  std::vector<Op> unary, binary{Op::eq, Op::ne};
  if (!cplx) unary.push_back(Op::logical_not), binary.insert(binary.end(), {Op::logical_and, Op::logical_or});
  if (t != DType::boolean) unary.insert(unary.end(), {Op::neg, Op::abs}), binary.insert(binary.end(), {Op::add, Op::sub, Op::mul, Op::div});
  if (fp || cplx) unary.insert(unary.end(), {Op::sqrt, Op::exp, Op::log, Op::sin, Op::cos, Op::tan, Op::tanh}), binary.push_back(Op::pow);
  if (fp || integer) binary.insert(binary.end(), {Op::lt, Op::le, Op::gt, Op::ge, Op::minimum, Op::maximum});
  if (fp || cplx) unary.insert(unary.end(), {Op::sinh, Op::cosh, Op::asin, Op::acos, Op::atan, Op::arg});
  if (fp) unary.insert(unary.end(), {Op::rsqrt, Op::expm1, Op::log1p, Op::floor, Op::ceil, Op::round}), binary.push_back(Op::atan2);
  unary.insert(unary.end(), {Op::real, Op::imag, Op::conj, Op::positive});
  // NumPy's ufuncs beyond C++'s operators (what the Python package sends them: real operands,
  // reciprocal of floating ones, square of any but bool).
  if (fp || integer) unary.insert(unary.end(), {Op::isnan, Op::isinf, Op::isfinite, Op::sign}),
      binary.insert(binary.end(), {Op::floor_divide, Op::remainder});
  if (fp) unary.insert(unary.end(), {Op::log2, Op::log10, Op::exp2, Op::cbrt});
  if (fp || cplx) unary.push_back(Op::reciprocal);
  if (t != DType::boolean) unary.push_back(Op::square);
  if (!cplx) binary.push_back(Op::logical_xor);
  const int last_value = 2;
  for (Op op : unary) k.nodes.push_back({op, t, 0});
  for (Op op : binary) k.nodes.push_back({op, t, 1, last_value});
  k.nodes.push_back({Op::ne, DType::boolean, 0, 1});
  const int cond = static_cast<int>(k.nodes.size()) - 1;
  for (DType to : {DType::boolean, DType::int32, DType::int64, DType::float32, DType::float64, DType::complex64,
                   DType::complex128})
    k.nodes.push_back({Op::cast, to, 0});
  k.nodes.push_back({Op::where, t, cond, 0, 1});
  return k;
}

TEST(JitCompile, EveryOperationAndTypeCompilesToACubin) {
  if (!jit::nvrtc_available()) GTEST_SKIP() << "no NVRTC in this build (CUDA off)";
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 1) GTEST_SKIP() << "the table is compiled by the 1-rank run (NVRTC does not depend on ranks; CI's 2 cores)";
  int compiled = 0;
  for (DType t : {DType::boolean, DType::int32, DType::int64, DType::float32, DType::float64, DType::complex64,
                  DType::complex128})
    for (int path = 0; path < 3; ++path) {
      const auto k = every_op_kernel(t, path == 0, path == 1);
      const std::string src = jit::generate_cuda(k, "every_op");
      std::vector<char> cubin;
      ASSERT_NO_THROW(cubin = jit::compile_cubin(src, "every_op", 90)) << tessera::dtype_name(t) << " path " << path;
      ASSERT_GE(cubin.size(), 4u);
      EXPECT_EQ(std::memcmp(cubin.data(), "\x7f" "ELF", 4), 0) << "a cubin is an ELF image";
      ++compiled;
    }
  EXPECT_EQ(compiled, 21);
}

TEST(JitCompile, ARejectedSourceNamesTheKernelAndTheLine) {
  if (!jit::nvrtc_available()) GTEST_SKIP() << "no NVRTC in this build (CUDA off)";
  const std::string src = "extern \"C\" __global__ void broken(float* x) {\n  x[0] = undefined_thing;\n}\n";
  try {
    (void)jit::compile_cubin(src, "broken", 90);
    FAIL() << "no CompileError";
  } catch (const jit::CompileError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("broken"), std::string::npos) << m;
    EXPECT_NE(m.find("undefined_thing"), std::string::npos) << m;
    EXPECT_NE(m.find("line 2"), std::string::npos) << m;
  }
}

// ---- the disk cache, with a fake compiler ----
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    // Rank 0's name, shared: the ranks use one directory.
    long long stamp = rank == 0 ? static_cast<long long>(::getpid()) : 0;
    MPI_Bcast(&stamp, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    path = std::filesystem::temp_directory_path() / ("tessera_jit_" + tag + "_" + std::to_string(stamp));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) std::filesystem::remove_all(path);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::error_code ec;
    if (rank == 0) std::filesystem::remove_all(path, ec);
  }
};

jit::Kernel small_kernel() {
  jit::Kernel k;
  k.out = DType::float32;
  k.nodes = {{jit::Op::load, DType::float32, -1, -1, -1, 0}, {jit::Op::sin, DType::float32, 0}};
  return k;
}

struct FakeCompiler {
  std::atomic<int> calls{0};
  auto fn() {
    return [this](const std::string& src, const std::string&, int arch) {
      ++calls;
      std::vector<char> v(src.begin(), src.begin() + std::min<std::size_t>(src.size(), 64));
      v.push_back(static_cast<char>(arch));
      return v;
    };
  }
};

TEST(JitCache, MissThenHitThenRecompilesWhatItCannotTrust) {
  TempDir tmp("cache");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const jit::DiskCache cache((tmp.path / std::to_string(rank)).string());  // a directory per rank here
  FakeCompiler fc;
  jit::Origin o{};
  const auto first = jit::cubin_for(small_kernel(), "k", 90, cache, &o, fc.fn());
  EXPECT_EQ(o, jit::Origin::compiled);
  EXPECT_EQ(jit::cubin_for(small_kernel(), "k", 90, cache, &o, fc.fn()), first);
  EXPECT_EQ(o, jit::Origin::disk);
  EXPECT_EQ(fc.calls.load(), 1);
  ASSERT_EQ(cache.list().size(), 1u);
  const std::string file = cache.list()[0];
  const auto size = std::filesystem::file_size(file);
  auto damage = [&](auto how) {
    how();
    EXPECT_EQ(jit::cubin_for(small_kernel(), "k", 90, cache, &o, fc.fn()), first);
    EXPECT_EQ(o, jit::Origin::compiled) << "a damaged file is recompiled";
    EXPECT_EQ(jit::cubin_for(small_kernel(), "k", 90, cache, &o, fc.fn()), first);
    EXPECT_EQ(o, jit::Origin::disk) << "and replaced";
  };
  damage([&] { std::filesystem::resize_file(file, size / 2); });  // truncated
  damage([&] {                                                     // one byte flipped
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 12));
    f.put('\x55');
  });
  damage([&] { std::ofstream(file, std::ios::binary) << "not a kernel"; });  // foreign
  // Another architecture (or NVRTC / Tessera version: all in the key) is another file.
  (void)jit::cubin_for(small_kernel(), "k", 80, cache, &o, fc.fn());
  EXPECT_EQ(o, jit::Origin::compiled);
  EXPECT_EQ(cache.list().size(), 2u);
  EXPECT_NE(jit::disk_key("x", 90), jit::disk_key("x", 80));
  EXPECT_NE(jit::disk_key("x", 90).find(TESSERA_VERSION_STRING), std::string::npos);
  EXPECT_NE(jit::disk_key("x", 90).find("nvrtc " + jit::nvrtc_version()), std::string::npos);
  EXPECT_EQ(cache.clear(), 2u);
  EXPECT_TRUE(cache.list().empty());
}

TEST(JitCache, AnUnusableDirectoryFallsBackToCompiling) {
  TempDir tmp("ro");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const auto file = tmp.path / ("file" + std::to_string(rank));
  std::filesystem::create_directories(tmp.path);
  std::ofstream(file) << "a file where the cache directory should be";
  const jit::DiskCache cache((file / "kernels").string());
  FakeCompiler fc;
  jit::Origin o{};
  EXPECT_NO_THROW((void)jit::cubin_for(small_kernel(), "k", 90, cache, &o, fc.fn()));
  EXPECT_EQ(o, jit::Origin::compiled);
  EXPECT_FALSE(cache.store("key", {'x'}));
  const jit::DiskCache none("");
  EXPECT_FALSE(none.load("key").has_value());
}

TEST(JitCache, RanksCompilingOneKernelAtOnceShareOneFile) {
  TempDir tmp("shared");
  const jit::DiskCache cache(tmp.path.string());
  FakeCompiler fc;
  std::vector<char> image;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int rep = 0; rep < 20; ++rep) image = jit::cubin_for(small_kernel(), "k", 90, cache, nullptr, fc.fn());
  MPI_Barrier(MPI_COMM_WORLD);
  jit::Origin o{};
  EXPECT_EQ(jit::cubin_for(small_kernel(), "k", 90, cache, &o, fc.fn()), image);
  EXPECT_EQ(o, jit::Origin::disk);
  EXPECT_EQ(cache.list().size(), 1u) << "one file, no temporaries left";
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.path)) ++entries;
  EXPECT_EQ(entries, 1u);
}

// ---- string kernels ----
TEST(StringKernel, ParametersAndSource) {
  const auto in = jit::parse_params("T x, float64 y", false);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].type, "T");
  EXPECT_EQ(in[1].name, "y");
  EXPECT_THROW(jit::parse_params("T", false), tessera::InvalidArgument);
  EXPECT_THROW(jit::parse_params("T x y", false), tessera::InvalidArgument);
  EXPECT_THROW(jit::parse_params("", true), tessera::InvalidArgument);
  EXPECT_THROW(tl::ElementwiseKernel("T x", "T z", "z = x", "not a name"), tessera::InvalidArgument);
  auto params = in;
  params.push_back({"T", "z", true});
  const std::string src = jit::string_kernel_source(params, {DType::float32, DType::float64, DType::float32},
                                                    {false, false, false}, "z = x * sin(y)", "k", 1, true);
  for (const char* want : {"typedef float T;", "const float x = p0[i];", "const double y = p1[i];", "float& z = p2[i];",
                           "z = x * sin(y);"})
    EXPECT_NE(src.find(want), std::string::npos) << want << "\n" << src;
  if (jit::nvrtc_available()) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) EXPECT_NO_THROW((void)jit::compile_cubin(src, "k", 90));
  }
}

TEST(StringKernel, ReductionSourceCompiles) {
  std::vector<jit::Param> params = jit::parse_params("T x, float64 w", false);
  params.push_back({"T", "y", true});
  const jit::Reduction real{"x * x * w", "a + b", "y = sqrt(a / n_reduced)", "0", ""};
  const jit::Reduction cplx{"x * x", "a + b", "y = a", "0", ""};  // complex<float> * double is no C++ operator
  for (DType t : {DType::float32, DType::float64, DType::complex64})
    for (bool linear : {false, true}) {
      const auto& r = t == DType::complex64 ? cplx : real;
      const std::string src =
          jit::reduction_source(params, {t, DType::float64, t}, {false, true, false}, r, t, "rms", 2, linear);
      for (const char* want : {"_rows(long long rows, long long len, Dims shape", "_partial(long long n, Dims shape",
                               "_final(long long parts, long long n_reduced", "tessera_reduce(const", "tessera_map("})
        EXPECT_NE(src.find(want), std::string::npos) << want << "\n" << src;
      // A kernel's parameters are values: a reference parameter of a __global__ function would
      // carry the address of the host's copy (the strides read from address 0x1 on the GPU).
      for (std::size_t at = src.find("__global__"); at != std::string::npos; at = src.find("__global__", at + 1))
        EXPECT_EQ(src.substr(at, src.find(')', at) - at).find('&'), std::string::npos) << src.substr(at, 200);
      // Contiguous inputs load at the flat index; others from their multi-index and strides.
      EXPECT_EQ(src.find("o0 += idx[d] * s0.v[d]") == std::string::npos, linear) << src;
      int size = 0;
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      if (jit::nvrtc_available() && size == 1) EXPECT_NO_THROW((void)jit::compile_cubin(src, "rms", 90)) << src;
    }
  // A reduce type of two words (int64: long long) in the casts the source makes of the map and
  // the identity: NVRTC rejected "long long(...)" ("type name is not allowed").
  std::vector<jit::Param> count_params = jit::parse_params("T x", false);
  count_params.push_back({"int64", "c", true});
  const jit::Reduction count{"x > 0 ? 1 : 0", "a + b", "c = a", "0", "int64"};
  const std::string src = jit::reduction_source(count_params, {DType::int32, DType::int64}, {false, false}, count,
                                                DType::int64, "count", 2, true);
  EXPECT_EQ(src.find("long long("), std::string::npos) << src;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (jit::nvrtc_available() && size == 1) EXPECT_NO_THROW((void)jit::compile_cubin(src, "count", 90)) << src;
  EXPECT_THROW(tl::ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "bad name"), tessera::InvalidArgument);
}

TEST(StringKernel, HostArraysAreRefused) {
  tl::ElementwiseKernel k("T x", "T z", "z = x + 1");
  Array<float, 1> x(tl::Shape<1>{4}, Device::host()), z(tl::Shape<1>{4}, Device::host());
  EXPECT_THROW(k(x, z), tessera::BackendUnavailable);
}

// ---- on a GPU: NVRTC against the nvcc executor, bit for bit ----
template <class K> class JitDevice : public tessera::testing::DeviceTest<K> {};
TYPED_TEST_SUITE(JitDevice, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

template <class T> std::vector<T> values(index_t n, int seed) {
  std::vector<T> v(n);
  for (index_t i = 0; i < n; ++i) {
    const double x = std::sin(0.37 * i + seed) * 1.7 + 0.1 * seed;
    if constexpr (tessera::is_complex_v<T>) v[i] = T(static_cast<float>(x), static_cast<float>(std::cos(0.2 * i)));
    else v[i] = static_cast<T>(x);
  }
  return v;
}
template <class T, int R> Array<T, R> on(Device d, const tl::Shape<R>& s, int seed) {
  return tl::from_host(values<T>(tl::shape_size(s), seed), s, d);
}
template <class T, int R> bool bitwise_equal(const Array<T, R>& x, const Array<T, R>& y) {
  const auto a = tl::to_host(x), b = tl::to_host(y);
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TYPED_TEST(JitDevice, AgreesWithTheNvccExecutorBitForBit) {
  const Device d = this->device();
  if (d.is_host()) GTEST_SKIP() << "the host executor runs host arrays (no JIT)";
#if TESSERA_HAVE_CUDA
  namespace ref = tessera::testing::jit_reference;
  const index_t n = (1 << 20) + 3;  // not a multiple of the unroll
  const tl::Shape<1> s{n};
  {
    auto a = on<float, 1>(d, s, 1), b = on<float, 1>(d, s, 2), c = on<float, 1>(d, s, 3);
    auto x = Array<float, 1>(s, d), y = Array<float, 1>(s, d);
    expr_triad(x, a, b, 2.5f), ref::triad(y, a, b, 2.5f);
    EXPECT_TRUE(bitwise_equal(x, y)) << "triad f32";
    expr_sin_exp(x, a, b, c), ref::sin_exp(y, a, b, c);
    EXPECT_TRUE(bitwise_equal(x, y)) << "a*sin(b)+exp(c) f32";
    expr_more_math(x, a, b), ref::more_math(y, a, b);
    EXPECT_TRUE(bitwise_equal(x, y)) << "rsqrt, expm1, atan2, floor, round, sinh, asin, clip, log1p, acos f32";
  }
  {
    auto a = on<double, 1>(d, s, 1), b = on<double, 1>(d, s, 2), c = on<double, 1>(d, s, 3);
    auto x = Array<double, 1>(s, d), y = Array<double, 1>(s, d);
    expr_sin_exp(x, a, b, c), ref::sin_exp(y, a, b, c);
    EXPECT_TRUE(bitwise_equal(x, y)) << "a*sin(b)+exp(c) f64";
    expr_ten(x, a, b, c), ref::ten_operands(y, a, b, c);
    EXPECT_TRUE(bitwise_equal(x, y)) << "ten operations f64";
    expr_more_math(x, a, b), ref::more_math(y, a, b);
    EXPECT_TRUE(bitwise_equal(x, y)) << "rsqrt, expm1, atan2, floor, round, sinh, asin, clip, log1p, acos f64";
    auto i = Array<std::int32_t, 1>(s, d), j = Array<std::int32_t, 1>(s, d);
    expr_where_cast(i, a), ref::where_cast(j, a);
    EXPECT_TRUE(bitwise_equal(i, j)) << "where + cast";
  }
  {
    using C = std::complex<float>;
    auto a = on<C, 1>(d, s, 1), b = on<C, 1>(d, s, 2);
    auto x = Array<C, 1>(s, d), y = Array<C, 1>(s, d);
    expr_complex_triad(x, a, b, C(0.5f, -1.25f)), ref::complex_triad(y, a, b, C(0.5f, -1.25f));
    EXPECT_TRUE(bitwise_equal(x, y)) << "complex triad c64";
  }
  {
    const tl::Shape<2> big{513, 1031};
    auto a = on<double, 2>(d, big, 4);
    auto row = on<double, 2>(d, tl::Shape<2>{1, 1031}, 5);
    auto view = a.transpose();  // strided operand and destination
    auto x = Array<double, 2>(tl::Shape<2>{1031, 513}, d), y = Array<double, 2>(tl::Shape<2>{1031, 513}, d);
    auto rowt = on<double, 2>(d, tl::Shape<2>{1, 513}, 6);
    expr_strided(x, view, rowt), ref::strided(y, view, rowt);
    EXPECT_TRUE(bitwise_equal(x, y)) << "strided view with a broadcast row";
    auto xt = Array<double, 2>(big, d), yt = Array<double, 2>(big, d);
    expr_strided(xt.transpose(), view, rowt), ref::strided(yt.transpose(), view, rowt);
    EXPECT_TRUE(bitwise_equal(xt, yt)) << "strided destination";
    (void)row;
  }
  // (Not against the host executor: nvcc and NVRTC both contract a + s * b into one fused
  // multiply-add, the host does not, so the last bit may differ.)
#else
  GTEST_SKIP() << "no CUDA";
#endif
}

TYPED_TEST(JitDevice, StringKernelsLikeCupy) {
  const Device d = this->device();
  if (d.is_host()) GTEST_SKIP() << "string kernels run on GPU arrays";
  const index_t r = 300, c = 257;
  const tl::Shape<2> s{r, c};
  const auto xv = values<float>(r * c, 1), yv = values<float>(r * c, 2), rowv = values<float>(c, 3);
  auto x = tl::from_host(xv, s, d), y = tl::from_host(yv, s, d);
  auto row = tl::from_host(rowv, tl::Shape<2>{1, c}, d);
  tl::ElementwiseKernel k("T x, T y, T w", "T z", "z = x * sinf(y) + w + i % 3", "sin_row");
  auto z = k.returning<float, 2>(x, y, row);
  const auto zv = tl::to_host(z);
  for (index_t i = 0; i < r * c; ++i) {
    const float want = xv[i] * std::sin(yv[i]) + rowv[i % c] + static_cast<float>(i % 3);
    ASSERT_NEAR(zv[i], want, 1e-5f * (1 + std::abs(want))) << i;
  }
  // A scalar input takes the placeholder's type; a transposed (strided) operand.
  tl::ElementwiseKernel axpy("T a, T x, T y", "T z", "z = a * x + y", "axpy");
  Array<float, 2> zt(tl::Shape<2>{c, r}, d);
  axpy(2, x.transpose(), y.transpose(), zt);
  const auto ztv = tl::to_host(zt);
  for (index_t i = 0; i < r; i += 7)
    for (index_t j = 0; j < c; j += 5) ASSERT_FLOAT_EQ(ztv[j * r + i], 2 * xv[i * c + j] + yv[i * c + j]);
  // Mismatched placeholders and bodies that do not compile throw, naming the kernel.
  auto xd = tl::from_host(values<double>(r * c, 1), s, d);
  EXPECT_THROW(k(x, xd, row, z), tessera::InvalidArgument);
  tl::ElementwiseKernel broken("T x", "T z", "z = x + no_such_thing", "broken_body");
  try {
    broken(x, z);
    FAIL() << "no CompileError";
  } catch (const jit::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("broken_body"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no_such_thing"), std::string::npos) << e.what();
  }
}

TYPED_TEST(JitDevice, ReductionKernelsLikeCupy) {
  const Device d = this->device();
  if (d.is_host()) GTEST_SKIP() << "reduction kernels run on GPU arrays";
  const index_t r = 129, c = 1000;
  const auto xv = values<double>(r * c, 4);
  auto x = tl::from_host(xv, tl::Shape<2>{r, c}, d);
  tl::ReductionKernel sumsq("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_of_squares");
  Array<double, 2> total(tl::Shape<2>{1, 1}, d);
  sumsq(x, total);
  double want = 0;
  for (double v : xv) want += v * v;
  EXPECT_NEAR(tl::to_host(total)[0], want, 1e-10 * want);
  tl::ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2_rows");
  Array<double, 2> norms(tl::Shape<2>{r, 1}, d);
  l2.along_last_axis(x, norms);
  const auto nv = tl::to_host(norms);
  for (index_t i = 0; i < r; ++i) {
    double s2 = 0;
    for (index_t j = 0; j < c; ++j) s2 += xv[i * c + j] * xv[i * c + j];
    EXPECT_NEAR(nv[i], std::sqrt(s2), 1e-12 * std::sqrt(s2)) << i;
  }
  // A max along rows of a transposed (strided) view, float, with n_reduced in the post-map.
  auto xf = tl::from_host(values<float>(r * c, 5), tl::Shape<2>{r, c}, d);
  tl::ReductionKernel mx("T x", "T y", "x", "a > b ? a : b", "y = a + 0 * n_reduced", "-1e30f", "max_rows");
  Array<float, 2> m(tl::Shape<2>{c, 1}, d);
  mx.along_last_axis(xf.transpose(), m);
  const auto fv = tl::to_host(xf), mv = tl::to_host(m);
  for (index_t j = 0; j < c; j += 37) {
    float best = -1e30f;
    for (index_t i = 0; i < r; ++i) best = std::max(best, fv[i * c + j]);
    EXPECT_EQ(mv[j], best) << j;
  }
  Array<double, 2> wrong(tl::Shape<2>{r, 2}, d);
  EXPECT_THROW(l2.along_last_axis(x, wrong), tessera::ShapeMismatch);
}

}  // namespace
