// bench_collectives: nccl-tests style bandwidth of Tessera's collectives, optionally side by side
// with the same calls made on a raw NCCL communicator (--raw, --both). Sizes and bus bandwidth
// follow nccl-tests: size is the per-rank total the op moves (all_gather: bytes received,
// reduce_scatter and all_to_all: bytes sent); count is the count argument of the call (per rank
// for all_gather and reduce_scatter, per peer for all_to_all); busbw = algbw * factor, so that
// busbw is comparable across ops and rank counts. Time: max over ranks of (iters launches +
// stream sync) / iters. Only rank 0 prints.
#include <boost/program_options.hpp>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if TESSERA_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include "tessera/comm/nccl_check.hpp"
#endif

namespace po = boost::program_options;
using tessera::Device;
using tessera::DType;
using tessera::comm::ReduceOp;

namespace {
enum class Op { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce };
const char* const op_names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"};
bool reduces(Op op) { return op == Op::all_reduce || op == Op::reduce_scatter || op == Op::reduce; }

struct Options {
  Op op = Op::all_reduce;
  std::string type_name = "float", red_name = "sum";
  DType type = DType::float32;
  ReduceOp red = ReduceOp::sum;
  Device dev;
  std::size_t min_bytes = 0, max_bytes = 0;
  int factor = 2, iters = 20, warmup = 5, root = 0;
  bool check = false, tessera = true, raw = false;
};

// "8", "64K", "128M", "1G" (powers of 1024, as nccl-tests' parsesize).
std::size_t parse_size(const std::string& s) {
  std::size_t pos = 0;
  if (s.empty() || s[0] < '0' || s[0] > '9') throw std::invalid_argument("bad size '" + s + "'");
  const unsigned long long v = std::stoull(s, &pos);
  const std::string unit = s.substr(pos);
  const std::size_t mult = unit.empty() ? 1
                           : (unit == "K" || unit == "k") ? std::size_t(1) << 10
                           : (unit == "M" || unit == "m") ? std::size_t(1) << 20
                           : (unit == "G" || unit == "g") ? std::size_t(1) << 30
                                                          : 0;
  if (mult == 0) throw std::invalid_argument("bad size '" + s + "' (suffixes: K, M, G)");
  return v * mult;
}

// Rank r's send element j. Small integers keep every sum, min and max exact in every type; prod
// multiplies 1s and 2s (powers of two stay exact in float, and integers wrap as NCCL's do).
template <class T>
T pattern(int r, std::size_t j, bool prod) {
  return static_cast<T>(prod ? 1 + (r + j) % 2 : (13 * static_cast<std::size_t>(r) + j) % 31);
}
template <class T>
T combine(T a, T b, ReduceOp op) {
  using U = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>, std::type_identity<T>>::type;
  switch (op) {
    case ReduceOp::sum: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case ReduceOp::prod: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case ReduceOp::min: return std::min(a, b);
    case ReduceOp::max: return std::max(a, b);
  }
  return a;
}

// Wrong elements of this rank's receive buffer after one call with `c` as its count.
template <class T>
long long count_wrong(const Options& o, int me, int n, std::size_t c, const std::vector<T>& got) {
  const bool prod = reduces(o.op) && o.red == ReduceOp::prod;
  auto reduced = [&](std::size_t j) {
    T acc = pattern<T>(0, j, prod);
    for (int r = 1; r < n; ++r) acc = combine(acc, pattern<T>(r, j, prod), o.red);
    return acc;
  };
  long long wrong = 0;
  for (std::size_t q = 0; q < (o.op == Op::all_gather || o.op == Op::all_to_all ? std::size_t(n) : 1); ++q)
    for (std::size_t i = 0; i < c; ++i) {
      T want{};
      switch (o.op) {
        case Op::all_reduce: want = reduced(i); break;
        case Op::reduce: if (me != o.root) return 0; want = reduced(i); break;  // recv is root's only
        case Op::broadcast: want = pattern<T>(o.root, i, prod); break;
        case Op::all_gather: want = pattern<T>(int(q), i, prod); break;
        case Op::reduce_scatter: want = reduced(me * c + i); break;
        case Op::all_to_all: want = pattern<T>(int(q), me * c + i, prod); break;
      }
      wrong += got[q * c + i] != want;
    }
  return wrong;
}

#if TESSERA_HAVE_NCCL
ncclDataType_t nccl_type(DType t) {
  return t == DType::int32 ? ncclInt32 : t == DType::int64 ? ncclInt64 : t == DType::float64 ? ncclFloat64 : ncclFloat32;
}
ncclRedOp_t nccl_op(ReduceOp op) {
  return op == ReduceOp::prod ? ncclProd : op == ReduceOp::min ? ncclMin : op == ReduceOp::max ? ncclMax : ncclSum;
}
// The calls nccl-tests makes (all_to_all: one group of per-peer send/recv, as alltoall.cu).
void raw_launch(const Options& o, ncclComm_t comm, int n, const void* sb, void* rb, std::size_t c,
                const tessera::Stream& s) {
  const auto st = static_cast<cudaStream_t>(s.native());
  const ncclDataType_t t = nccl_type(o.type);
  switch (o.op) {
    case Op::all_reduce: TESSERA_CHECK_NCCL(ncclAllReduce(sb, rb, c, t, nccl_op(o.red), comm, st)); break;
    case Op::all_gather: TESSERA_CHECK_NCCL(ncclAllGather(sb, rb, c, t, comm, st)); break;
    case Op::reduce_scatter: TESSERA_CHECK_NCCL(ncclReduceScatter(sb, rb, c, t, nccl_op(o.red), comm, st)); break;
    case Op::broadcast: TESSERA_CHECK_NCCL(ncclBroadcast(sb, rb, c, t, o.root, comm, st)); break;
    case Op::reduce: TESSERA_CHECK_NCCL(ncclReduce(sb, rb, c, t, nccl_op(o.red), o.root, comm, st)); break;
    case Op::all_to_all: {
      const std::size_t block = c * tessera::dtype_size(o.type);
      TESSERA_CHECK_NCCL(ncclGroupStart());
      for (int p = 0; p < n; ++p) {
        TESSERA_CHECK_NCCL(ncclSend(static_cast<const char*>(sb) + p * block, c, t, p, comm, st));
        TESSERA_CHECK_NCCL(ncclRecv(static_cast<char*>(rb) + p * block, c, t, p, comm, st));
      }
      TESSERA_CHECK_NCCL(ncclGroupEnd());
      break;
    }
  }
}
#endif

// nccl-tests' timing: barrier, warmup, sync, barrier, then the wall clock around `iters`
// back-to-back launches and one sync; the slowest rank's time per iteration, in us.
double time_us(const std::function<void()>& launch, const tessera::Stream& s, const Options& o, MPI_Comm comm) {
  TESSERA_CHECK_MPI(MPI_Barrier(comm));
  for (int i = 0; i < o.warmup; ++i) launch();
  s.synchronize();
  TESSERA_CHECK_MPI(MPI_Barrier(comm));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) launch();
  s.synchronize();
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  TESSERA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &sec, 1, MPI_DOUBLE, MPI_MAX, comm));
  return sec / o.iters * 1e6;
}

template <class T>
long long bench(const Options& o, tessera::Runtime& rt) {
  auto& w = rt.world();
  const int me = w.rank(), n = w.size();
  const MPI_Comm comm = w.mpi_comm();
  const auto& s = tessera::Stream::default_for(o.dev);
  const std::size_t e = sizeof(T);
  // One pair of buffers at the largest size serves every size (each op needs at most max_bytes
  // on either side). The send pattern depends only on the element index, so it is filled once;
  // filling it also keeps NaNs and denormals out of the timed host reductions.
  const std::size_t cap = std::max(o.max_bytes, n * e) / e;
  tessera::Buffer sendbuf(cap * e, s), recvbuf(cap * e, s);
  std::vector<T> host(cap), sentinel(o.check ? cap : 0, T(-1));  // -1 is never a right answer
  for (std::size_t j = 0; j < cap; ++j) host[j] = pattern<T>(me, j, reduces(o.op) && o.red == ReduceOp::prod);
  tessera::detail::memcpy_any(sendbuf.data(), o.dev, host.data(), Device::host(), cap * e, s);
  s.synchronize();

#if TESSERA_HAVE_NCCL
  ncclComm_t raw = nullptr;
  if (o.raw) {  // our own communicator, made as nccl-tests makes it under MPI
    ncclUniqueId id;
    if (me == 0) TESSERA_CHECK_NCCL(ncclGetUniqueId(&id));
    TESSERA_CHECK_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));
    tessera::make_current(o.dev);
    TESSERA_CHECK_NCCL(ncclCommInitRank(&raw, n, id, me));
  }
#endif
  const double bus_factor = o.op == Op::all_reduce                            ? 2.0 * (n - 1) / n
                            : o.op == Op::broadcast || o.op == Op::reduce ? 1.0
                                                                             : double(n - 1) / n;
  const bool per_rank = o.op == Op::all_gather || o.op == Op::reduce_scatter || o.op == Op::all_to_all;
  const char* red = reduces(o.op) ? o.red_name.c_str() : "none";
  const bool both = o.tessera && o.raw;
  if (me == 0) {
    std::printf("#\n# %12s  %12s  %8s  %6s  %7s  %10s  %8s  %8s  %7s%s\n", "size", "count", "type", "redop", "impl",
                "time", "algbw", "busbw", "#wrong", both ? "   ratio" : "");
    std::printf("# %12s  %12s  %8s  %6s  %7s  %10s  %8s  %8s  %7s%s\n", "(B)", "(elements)", "", "", "", "(us)",
                "(GB/s)", "(GB/s)", "", both ? "  (busbw)" : "");
  }
  long long total_wrong = 0;
  double sum_bus[2] = {0, 0};
  int rows = 0;
  for (std::size_t size = o.min_bytes; size <= o.max_bytes; size *= o.factor) {
    const std::size_t c = per_rank ? size / (n * e) : size / e;  // the call's count
    const std::size_t bytes = per_rank ? c * n * e : c * e;
    const std::size_t recv_elems = o.op == Op::all_gather || o.op == Op::all_to_all ? c * n : c;
    if (c > 0) {
      struct Row { double us = 0, bus = 0; long long wrong = -1; } rows_of[2];
      for (int impl = 0; impl < 2; ++impl) {  // 0: Tessera, 1: raw NCCL
        if (!(impl == 0 ? o.tessera : o.raw)) continue;
        std::function<void()> launch;
        if (impl == 0)
          launch = [&] {
            const void* sb = sendbuf.data();
            void* rb = recvbuf.data();
            switch (o.op) {
              case Op::all_reduce: w.all_reduce(sb, rb, c, o.type, o.red, s); break;
              case Op::all_gather: w.all_gather(sb, rb, c, o.type, s); break;
              case Op::reduce_scatter: w.reduce_scatter(sb, rb, c, o.type, o.red, s); break;
              case Op::all_to_all: w.all_to_all(sb, rb, c, o.type, s); break;
              case Op::broadcast: w.broadcast(sb, rb, c, o.type, o.root, s); break;
              case Op::reduce: w.reduce(sb, rb, c, o.type, o.red, o.root, s); break;
            }
          };
#if TESSERA_HAVE_NCCL
        else
          launch = [&] { raw_launch(o, raw, n, sendbuf.data(), recvbuf.data(), c, s); };
#endif
        Row& r = rows_of[impl];
        r.us = time_us(launch, s, o, comm);
        if (impl == 0) w.synchronize(s);  // throws CommError if the group failed while timed
        r.bus = bytes / 1e3 / r.us * bus_factor;
        if (o.check) {  // one more call into a poisoned receive buffer, then compare on the host
          tessera::detail::memcpy_any(recvbuf.data(), o.dev, sentinel.data(), Device::host(), recv_elems * e, s);
          launch();
          if (impl == 0) w.synchronize(s);
          s.synchronize();
          tessera::detail::memcpy_any(host.data(), Device::host(), recvbuf.data(), o.dev, recv_elems * e, s);
          s.synchronize();
          r.wrong = count_wrong<T>(o, me, n, c, host);
          TESSERA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &r.wrong, 1, MPI_LONG_LONG, MPI_SUM, comm));
          total_wrong += r.wrong;
        }
        sum_bus[impl] += r.bus;
      }
      ++rows;
      for (int impl = 0; impl < 2 && me == 0; ++impl) {
        if (!(impl == 0 ? o.tessera : o.raw)) continue;
        const Row& r = rows_of[impl];
        const std::string wrong = r.wrong < 0 ? "N/A" : std::to_string(r.wrong);
        std::printf("  %12zu  %12zu  %8s  %6s  %7s  %10.2f  %8.2f  %8.2f  %7s", bytes, c, o.type_name.c_str(), red,
                    impl == 0 ? "tessera" : "nccl", r.us, bytes / 1e3 / r.us, r.bus, wrong.c_str());
        if (both && impl == 0) std::printf("  %6.3f", rows_of[1].bus > 0 ? r.bus / rows_of[1].bus : 0.0);
        std::printf("\n");
      }
      if (me == 0) std::fflush(stdout);
    }
    if (size > o.max_bytes / o.factor) break;  // the next step would overflow
  }
  if (me == 0 && rows > 0) {
    if (o.tessera) std::printf("# Avg bus bandwidth (tessera): %.3f GB/s\n", sum_bus[0] / rows);
    if (o.raw) std::printf("# Avg bus bandwidth (nccl)   : %.3f GB/s\n", sum_bus[1] / rows);
    if (o.check) std::printf("# Wrong elements: %lld\n", total_wrong);
  }
#if TESSERA_HAVE_NCCL
  if (raw) TESSERA_CHECK_NCCL(ncclCommDestroy(raw));
#endif
  return total_wrong;
}
}  // namespace

int main(int argc, char** argv) {
  tessera::Runtime rt(argc, argv);  // first: MPI_Init may strip its own arguments
  const int me = rt.rank(), n = rt.size();
  Options o;
  std::string op = "all_reduce", device, minb = "32M", maxb = "32M";
  po::options_description opts("bench_collectives: nccl-tests style bandwidth of Tessera's collectives");
  opts.add_options()("help,h", "show this help")(
      "minbytes,b", po::value(&minb)->default_value(minb), "smallest size (suffixes K, M, G)")(
      "maxbytes,e", po::value(&maxb)->default_value(maxb), "largest size (suffixes K, M, G)")(
      "stepfactor,f", po::value(&o.factor)->default_value(o.factor), "size multiplier between rows")(
      "op", po::value(&op)->default_value(op),
      "all_reduce|all_gather|reduce_scatter|all_to_all|broadcast|reduce")(
      "dtype", po::value(&o.type_name)->default_value(o.type_name), "float|double|int32|int64")(
      "reduce", po::value(&o.red_name)->default_value(o.red_name), "sum|prod|min|max")(
      "device", po::value(&device), "host|cuda|cuda:N (default: the Runtime's device)")(
      "iters", po::value(&o.iters)->default_value(o.iters), "timed iterations per size")(
      "warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed iterations per size")(
      "check", po::bool_switch(&o.check), "verify one call per size against known data")(
      "raw", po::bool_switch(&o.raw), "time raw NCCL calls instead (cuda + NCCL)")(
      "both", po::bool_switch(), "time Tessera and raw NCCL, print busbw ratio tessera/nccl");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      if (me == 0) std::cout << opts;
      return 0;
    }
    o.min_bytes = parse_size(minb);
    o.max_bytes = parse_size(maxb);
    const auto it = std::find(std::begin(op_names), std::end(op_names), op);
    if (it == std::end(op_names)) throw std::invalid_argument("unknown --op '" + op + "'");
    o.op = static_cast<Op>(it - std::begin(op_names));
    const std::string& t = o.type_name;
    o.type = t == "float" || t == "float32" ? DType::float32 : t == "double" || t == "float64" ? DType::float64
           : t == "int32" ? DType::int32 : t == "int64" ? DType::int64
           : throw std::invalid_argument("unknown --dtype '" + t + "'");
    const std::string& r = o.red_name;
    o.red = r == "sum" ? ReduceOp::sum : r == "prod" ? ReduceOp::prod : r == "min" ? ReduceOp::min
          : r == "max" ? ReduceOp::max : throw std::invalid_argument("unknown --reduce '" + r + "'");
    if (o.min_bytes == 0 || o.min_bytes > o.max_bytes) throw std::invalid_argument("need 0 < minbytes <= maxbytes");
    if (o.factor < 2 || o.iters < 1 || o.warmup < 0)
      throw std::invalid_argument("need stepfactor >= 2, iters >= 1, warmup >= 0");
    if (vm["both"].as<bool>()) o.raw = true;
    else if (o.raw) o.tessera = false;
  } catch (const std::exception& e) {
    if (me == 0) std::cerr << "bench_collectives: " << e.what() << "\n" << opts;
    return 2;
  }
  try {
    // "cuda" means the GPU the Runtime bound this rank to; cuda:N forces one.
    if (device.empty()) o.dev = rt.device();
    else if (device == "cuda" && rt.device().is_cuda()) o.dev = rt.device();
    else o.dev = Device::parse(device);
    tessera::check_device_usable(o.dev);
    if (o.raw && (!TESSERA_HAVE_NCCL || !o.dev.is_cuda())) {
      if (me == 0)
        std::cerr << "bench_collectives: --raw/--both need CUDA device buffers and a build with NCCL (device "
                  << o.dev.str() << ", NCCL " << (TESSERA_HAVE_NCCL ? "built" : "not built") << ")\n";
      return 2;
    }
    // Header: each rank's host and device, gathered to rank 0 in fixed-size records.
    char line[512], host[MPI_MAX_PROCESSOR_NAME];  // room for the longest host name
    int len = 0;
    TESSERA_CHECK_MPI(MPI_Get_processor_name(host, &len));
    std::snprintf(line, sizeof line, "#  Rank %3d on %s device %s: %s", me, host, o.dev.str().c_str(),
                  tessera::device_description(o.dev).c_str());
    std::vector<char> lines(me == 0 ? sizeof line * n : 0);
    TESSERA_CHECK_MPI(MPI_Gather(line, sizeof line, MPI_CHAR, lines.data(), sizeof line, MPI_CHAR, 0,
                                 rt.world().mpi_comm()));
    // Collective on the group (it may decide the transport now), so every rank asks.
    const std::string transport = o.dev.is_cuda() ? rt.world().device_transport_str(o.dev)
                                                   : std::string("mpi (host buffers)");
    if (me == 0) {
      std::printf("# bench_collectives: op %s  dtype %s  redop %s  ranks %d  minbytes %zu  maxbytes %zu  "
                  "stepfactor %d  warmup %d  iters %d  check %d  impl %s\n",
                  op_names[int(o.op)], o.type_name.c_str(), o.red_name.c_str(), n, o.min_bytes, o.max_bytes,
                  o.factor, o.warmup, o.iters, int(o.check), o.tessera && o.raw ? "tessera+nccl" : o.raw ? "nccl" : "tessera");
      for (int r = 0; r < n; ++r) std::printf("%s\n", &lines[r * sizeof line]);
      std::printf("# Tessera device transport: %s\n", transport.c_str());
      std::fflush(stdout);
    }
    long long wrong = 0;
    switch (o.type) {
      case DType::float64: wrong = bench<double>(o, rt); break;
      case DType::int32: wrong = bench<std::int32_t>(o, rt); break;
      case DType::int64: wrong = bench<std::int64_t>(o, rt); break;
      default: wrong = bench<float>(o, rt); break;
    }
    return wrong > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    // Other ranks may be inside a collective: abort the job rather than hang it.
    std::fprintf(stderr, "bench_collectives: rank %d: %s\n", me, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return 3;
}
