// Zarr interop with zarr-python 2 (run by tests/io/io_zarr.cmake under mpirun):
//   zarr_interop write DIR   writes the arrays that zarr_check.py check DIR verifies;
//   zarr_interop read DIR    loads the arrays that zarr_check.py write DIR made and checks them
//                            (exit 77, skipped, when DIR has no such arrays: no zarr-python);
//   zarr_interop write3 DIR / read3 DIR: the same for Zarr v3 with tensorstore_interop.py (on the
//                            GPU machine, where tensorstore is: launch/gpu-check io).
// Values follow value() below and in zarr_check.py; exit 0 when every rank agrees all is well.
// `write` also writes Zarr v3 with Compressor::zlib (a store, and a checkpoint as the README
// does), whose zarr.json and gzip chunks zarr_check.py reads without zarr-python (2 has no v3).
#include <mpi.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/io/checkpoint.hpp"
#include "tessera/io/zarr.hpp"
#include "zarr_values.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;

using tessera::testing::zarr_values::flat_of;
using tessera::testing::zarr_values::value;

int failures = 0;

template <class T, int R>
Array<T, R> make(const Layout<R>& l) {
  Array<T, R> a(l, Device::host());
  const auto b = l.local_box();
  for (index_t k = 0; k < b.size(); ++k) a.interior().data()[k] = value<T>(flat_of<R>(b, l.global_shape(), k));
  return a;
}

template <class T, int R>
void write(const std::string& path, const Layout<R>& l, Index<R> chunks, const io::ZarrWriteOptions& o) {
  io::save_zarr(path, make<T, R>(l), chunks, o);
}

// Checks this rank's block; `fill_from`: flat indices from there on hold `fill` (never written).
template <class T, int R>
void check(const std::string& path, const Layout<R>& l, index_t fill_from = -1, T fill = T()) {
  const auto a = io::load_zarr<T, R>(path, l, Device::host());
  const auto b = l.local_box();
  local::Array<T, R> h(b.shape(), Device::host());
  local::copy(h, a.interior());
  for (index_t k = 0; k < b.size(); ++k) {
    const index_t f = flat_of<R>(b, l.global_shape(), k);
    const T want = fill_from >= 0 && f >= fill_from ? fill : value<T>(f);
    if (!(h.data()[k] == want)) {
      std::fprintf(stderr, "[rank %d] %s: element %lld differs\n", l.grid().rank(), path.c_str(), (long long)f);
      ++failures;
      return;
    }
  }
}

// The v2 compressors of zarr_check.py's CODECS, by the same names.
std::vector<std::pair<std::string, io::Codec>> codecs() {
  using io::BloscCodec, io::Codec, io::Compressor, io::Shuffle;
  return {{"none", Compressor::none},
          {"zlib", Compressor::zlib},
          {"gzip", Compressor::gzip},
          {"zstd", Compressor::zstd},
          {"blosc_lz4_shuffle", Codec{}},
          {"blosc_lz4hc_noshuffle", Codec::make_blosc(BloscCodec::lz4hc, 3, Shuffle::none)},
          {"blosc_blosclz_bitshuffle", Codec::make_blosc(BloscCodec::blosclz, 5, Shuffle::bit)},
          {"blosc_zstd", Codec::make_blosc(BloscCodec::zstd, 2)},
          {"blosc_zlib", Codec::make_blosc(BloscCodec::zlib, 1)}};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    if (argc != 3) {
      std::fprintf(stderr, "usage: zarr_interop write|read|write3|read3 DIR\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const std::string mode = argv[1], dir = argv[2];
    auto world = comm::ProcessGroup::world();
    ProcessGrid g1(world);
    auto g2 = ProcessGrid::balanced(world, 2);
    using io::Compressor;
    try {
      if (mode == "write3") {
        io::ZarrWriteOptions o{io::Compressor::zstd};
        o.format = 3;
        write<float, 3>(dir + "/v3_f4_zstd", Layout<3>::block(g2, {37, 29, 11}), {8, 8, 11}, o);
        o.compressor = io::Codec{}, o.shard = {16, 16, 11};
        write<double, 3>(dir + "/v3_f8_shard_blosc", Layout<3>::block(g2, {37, 29, 11}), {8, 8, 11}, o);
        o.compressor = io::Compressor::gzip, o.shard = {}, o.fortran_order = o.big_endian = true;
        write<std::int32_t, 3>(dir + "/v3_i4_F_BE_gzip", Layout<3>(g1, {37, 29, 11}, {-1, 0, -1}), {8, 8, 11}, o);
        o.compressor = io::Compressor::zlib, o.fortran_order = o.big_endian = false;  // the gzip codec in v3
        write<float, 3>(dir + "/v3_f4_zlib", Layout<3>::block(g2, {37, 29, 11}), {8, 8, 11}, o);
      } else if (mode == "read3") {
        if (!std::filesystem::exists(dir + "/done")) {
          if (world.rank() == 0) std::printf("no arrays from tensorstore in %s: skipped\n", dir.c_str());
          MPI_Finalize();
          return 77;
        }
        check<float, 3>(dir + "/ts_f4_zstd", Layout<3>::block(g2, {37, 29, 11}));
        check<double, 3>(dir + "/ts_f8_shard_blosc", Layout<3>(g1, {37, 29, 11}, {0, -1, -1}));
        check<std::int32_t, 3>(dir + "/ts_i4_transpose_gzip", Layout<3>::block(g2, {37, 29, 11}));
      } else if (mode == "write") {
        write<double, 2>(dir + "/f8_2d_zlib", Layout<2>::block(g2, {17, 13}), {5, 4}, {Compressor::zlib});
        write<float, 2>(dir + "/f4_2d_none", Layout<2>(g1, {9, 6}, {-1, 0}), {4, 4}, {Compressor::none});
        write<std::int32_t, 3>(dir + "/i4_3d_zlib", Layout<3>::block(ProcessGrid::balanced(world, 3), {7, 5, 3}),
                               {3, 2, 2}, {Compressor::zlib});
        write<std::int64_t, 1>(dir + "/i8_1d_none", Layout<1>(g1, {11}, {0}), {4}, {Compressor::none});
        write<bool, 2>(dir + "/b1_2d_zlib", Layout<2>::block(g2, {6, 7}), {4, 3}, {Compressor::zlib});
        write<std::complex<float>, 1>(dir + "/c8_1d_none", Layout<1>(g1, {10}, {0}), {3}, {Compressor::none});
        write<std::complex<double>, 2>(dir + "/c16_2d_zlib", Layout<2>::block(g2, {5, 4}), {2, 3}, {Compressor::zlib});
        for (const auto& [name, c] : codecs()) {
          write<float, 3>(dir + "/codec_" + name + "_f4", Layout<3>::block(g2, {7, 5, 4}), {3, 2, 4}, {c});
          write<std::complex<double>, 2>(dir + "/codec_" + name + "_c16", Layout<2>(g1, {6, 5}, {0, -1}), {4, 2}, {c});
        }
        io::ZarrWriteOptions fbe;
        fbe.fortran_order = fbe.big_endian = true;
        write<double, 3>(dir + "/f8_3d_F_BE", Layout<3>::block(g2, {6, 5, 4}), {4, 3, 2}, fbe);
        io::ZarrWriteOptions v3{Compressor::zlib};
        v3.format = 3;
        write<double, 2>(dir + "/v3_f8_2d_zlib", Layout<2>::block(g2, {17, 13}), {5, 4}, v3);
        v3.compressor.level = 6;
        write<std::int32_t, 3>(dir + "/v3_i4_3d_zlib6", Layout<3>(g1, {7, 5, 3}, {0, -1, -1}), {3, 5, 2}, v3);
        io::CheckpointWriter w(dir + "/ckpt_v3", world);
        w.add("phi", make<float, 3>(Layout<3>::block(g2, {9, 6, 4})), Compressor::zlib);
        w.commit();
      } else {
        if (!std::filesystem::exists(dir + "/done")) {
          if (world.rank() == 0) std::printf("no arrays from zarr-python in %s: skipped\n", dir.c_str());
          MPI_Finalize();
          return 77;
        }
        check<double, 2>(dir + "/f8_2d_zlib", Layout<2>::block(g2, {17, 13}));
        check<float, 2>(dir + "/f4_2d_none", Layout<2>(g1, {9, 6}, {-1, 0}));
        check<float, 2>(dir + "/f4_2d_nested", Layout<2>(g1, {9, 6}, {0, -1}));
        check<std::int32_t, 3>(dir + "/i4_3d_zlib", Layout<3>::block(ProcessGrid::balanced(world, 3), {7, 5, 3}));
        check<std::int64_t, 1>(dir + "/i8_1d_none", Layout<1>(g1, {11}, {0}));
        check<bool, 2>(dir + "/b1_2d_zlib", Layout<2>::block(g2, {6, 7}));
        check<std::complex<float>, 1>(dir + "/c8_1d_none", Layout<1>(g1, {10}, {0}));
        check<std::complex<double>, 2>(dir + "/c16_2d_zlib", Layout<2>::block(g2, {5, 4}));
        check<double, 1>(dir + "/f8_1d_fill", Layout<1>(g1, {20}, {0}), 5, 7.0);  // chunks 2..4 missing
        for (const auto& [name, c] : codecs()) {
          check<float, 3>(dir + "/codec_" + name + "_f4", Layout<3>::block(g2, {7, 5, 4}));
          check<std::complex<double>, 2>(dir + "/codec_" + name + "_c16", Layout<2>(g1, {6, 5}, {0, -1}));
        }
        check<double, 3>(dir + "/f8_3d_F_BE", Layout<3>::block(g2, {6, 5, 4}));
        check<std::int32_t, 2>(dir + "/i4_2d_F_BE_blosc", Layout<2>(g1, {9, 7}, {-1, 0}));
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[rank %d] %s\n", world.rank(), e.what());
      ++failures;
    }
    int any = failures;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    rc = any ? 1 : 0;
    if (world.rank() == 0) std::printf("zarr_interop %s %s: %s\n", mode.c_str(), dir.c_str(), rc ? "FAILED" : "ok");
  }
  MPI_Finalize();
  return rc;
}
