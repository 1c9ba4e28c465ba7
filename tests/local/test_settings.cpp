// Settings: parsed once from a lookup, validated with messages that name the variable, the value
// and what is accepted; the defaults documented in the README.
#include <gtest/gtest.h>

#include <cstdint>

#include <map>
#include <string>

#include "tessera/local/error.hpp"
#include "tessera/local/settings.hpp"

namespace {
using tessera::Settings;

Settings from(const std::map<std::string, std::string>& env) {
  return Settings::parse([&](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

std::string error_of(const std::map<std::string, std::string>& env) {
  try {
    from(env);
  } catch (const tessera::InvalidArgument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Settings, Defaults) {
  const Settings s = from({});
  EXPECT_EQ(s.device, "");
  EXPECT_TRUE(s.nccl);
  EXPECT_DOUBLE_EQ(s.comm_timeout, 300.0);
  EXPECT_FALSE(s.check);
  EXPECT_EQ(s.exchange_chunks, 0);
  EXPECT_EQ(s.chunks_for(true), 8);
  EXPECT_EQ(s.chunks_for(false), 1);
  EXPECT_EQ(s.fft_chunks_for(true), 4);
  EXPECT_EQ(s.fft_chunks_for(true, std::uint64_t{64} << 20), 4);   // 512^3 c64 on 4 GPUs
  EXPECT_EQ(s.fft_chunks_for(true, std::uint64_t{512} << 20), 8);  // 1024^3 c64 on 4 GPUs
  EXPECT_EQ(s.fft_chunks_for(false, std::uint64_t{512} << 20), 1);
  EXPECT_EQ(s.exchange_chunk_mib, 16);
  EXPECT_EQ(s.copy_blocks_per_sm, 2);
  EXPECT_FALSE(s.mpiio_collective.has_value());  // chosen by the MPI
  EXPECT_EQ(s.launcher_rank, -1);
}

TEST(Settings, ReadsEveryVariable) {
  const Settings s = from({{"TESSERA_DEVICE", "cuda:1"},
                           {"TESSERA_VERBOSE", "1"},
                           {"TESSERA_NCCL", "0"},
                           {"TESSERA_COMM_TIMEOUT", "2.5"},
                           {"TESSERA_CHECK", "true"},
                           {"TESSERA_POOL_RELEASE_THRESHOLD", "1048576"},
                           {"TESSERA_EXCHANGE_CHUNKS", "3"},
                           {"TESSERA_EXCHANGE_CHUNK_MIB", "0"},
                           {"TESSERA_EXCHANGE_TAPER", "0"},
                           {"TESSERA_FFT_CHUNKS", "8"},
                           {"TESSERA_COPY_BLOCKS_PER_SM", "4"},
                           {"TESSERA_COPY_ENGINE", "on"},
                           {"TESSERA_REDUCE_BLOCKS_PER_SM", "8"},
                           {"TESSERA_MPIIO_COLLECTIVE", "yes"},
                           {"TESSERA_IO_THREADS", "6"},
                           {"TESSERA_TRANSPORT", "nccl-window"},
                           {"TESSERA_FFT_CALLBACKS", "0"},
                           {"TESSERA_FFT_PATIENT_JIT", "1"},
                           {"TESSERA_FFT_AXIS_KERNEL", "scaled"},
                           {"TESSERA_FFT_AXIS_TILE", "64"},
                           {"OMPI_COMM_WORLD_RANK", "5"}});
  EXPECT_EQ(s.device, "cuda:1");
  EXPECT_TRUE(s.verbose);
  EXPECT_FALSE(s.nccl);
  EXPECT_DOUBLE_EQ(s.comm_timeout, 2.5);
  EXPECT_TRUE(s.check);
  EXPECT_EQ(s.pool_release_threshold, 1048576u);
  EXPECT_EQ(s.chunks_for(true), 3);
  EXPECT_EQ(s.chunks_for(false), 3);
  EXPECT_EQ(s.fft_chunks_for(false), 8);
  EXPECT_EQ(s.exchange_chunk_mib, 0);
  EXPECT_FALSE(s.exchange_taper);
  EXPECT_TRUE(from({}).exchange_taper);
  EXPECT_EQ(s.copy_blocks_per_sm, 4);
  EXPECT_TRUE(s.copy_engine);
  EXPECT_EQ(s.reduce_blocks_per_sm, 8);
  EXPECT_EQ(from({}).reduce_blocks_per_sm, 4);
  EXPECT_FALSE(error_of({{"TESSERA_REDUCE_BLOCKS_PER_SM", "0"}}).empty());
  EXPECT_EQ(s.mpiio_collective, std::optional<bool>(true));
  EXPECT_EQ(from({{"TESSERA_MPIIO_COLLECTIVE", "0"}}).mpiio_collective, std::optional<bool>(false));
  EXPECT_EQ(s.launcher_rank, 5);
  EXPECT_EQ(s.io_threads, 6);
  EXPECT_THROW(from({{"TESSERA_IO_THREADS", "-1"}}), tessera::InvalidArgument);
  EXPECT_EQ(s.transport, tessera::Transport::nccl_window);
  EXPECT_FALSE(s.fft_callbacks);
  EXPECT_TRUE(s.fft_patient_jit);
  EXPECT_EQ(s.fft_axis_kernel, Settings::FftAxisKernel::scaled);
  EXPECT_EQ(s.fft_axis_tile, 64);
  EXPECT_EQ(from({}).fft_axis_kernel, Settings::FftAxisKernel::all);
  EXPECT_EQ(from({}).fft_axis_tile, 128);
  EXPECT_FALSE(error_of({{"TESSERA_FFT_AXIS_KERNEL", "sometimes"}}).empty());
  EXPECT_FALSE(error_of({{"TESSERA_FFT_AXIS_TILE", "96"}}).empty());
  EXPECT_EQ(from({}).transport, tessera::Transport::automatic);
  for (const char* t : {"auto", "nccl", "nccl-window", "ipc", "mpi"})
    EXPECT_EQ(tessera::transport_name(*tessera::transport_from_name(t)), t);
  const std::string bad = error_of({{"TESSERA_TRANSPORT", "carrier-pigeon"}});
  EXPECT_NE(bad.find("TESSERA_TRANSPORT='carrier-pigeon'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("nccl-window"), std::string::npos) << bad;
  for (const char* name : {"TESSERA_DEVICE=cuda:1", "TESSERA_NCCL=0", "TESSERA_EXCHANGE_CHUNKS=3", "TESSERA_FFT_CHUNKS=8",
                           "TESSERA_IO_THREADS=6", "TESSERA_TRANSPORT=nccl-window", "TESSERA_FFT_CALLBACKS=0",
                           "TESSERA_FFT_AXIS_KERNEL=scaled", "TESSERA_FFT_AXIS_TILE=64"})
    EXPECT_NE(s.str().find(name), std::string::npos) << name << " missing from\n" << s.str();
}

TEST(Settings, BadValuesNameVariableValueAndWhatIsAccepted) {
  const std::string t = error_of({{"TESSERA_COMM_TIMEOUT", "-3"}});
  EXPECT_NE(t.find("TESSERA_COMM_TIMEOUT='-3'"), std::string::npos) << t;
  EXPECT_NE(t.find("seconds > 0"), std::string::npos) << t;
  const std::string c = error_of({{"TESSERA_EXCHANGE_CHUNKS", "four"}});
  EXPECT_NE(c.find("TESSERA_EXCHANGE_CHUNKS='four'"), std::string::npos) << c;
  EXPECT_NE(c.find("integer >= 0"), std::string::npos) << c;
  const std::string b = error_of({{"TESSERA_NCCL", "maybe"}});
  EXPECT_NE(b.find("TESSERA_NCCL='maybe'"), std::string::npos) << b;
  const std::string d = error_of({{"TESSERA_DEVICE", "gpu7"}});
  EXPECT_NE(d.find("TESSERA_DEVICE='gpu7'"), std::string::npos) << d;
  EXPECT_NE(d.find("cuda:N"), std::string::npos) << d;
  EXPECT_FALSE(error_of({{"TESSERA_COPY_BLOCKS_PER_SM", "0"}}).empty());
  EXPECT_FALSE(error_of({{"TESSERA_FFT_CHUNKS", "2x"}}).empty());
}

TEST(Settings, InstalledSettingsAreWhatSettingsReturns) {
  const Settings saved = tessera::settings();
  Settings s = saved;
  s.exchange_chunks = 7;
  tessera::set_settings(s);
  EXPECT_EQ(tessera::settings().exchange_chunks, 7);
  tessera::set_settings(saved);
  EXPECT_EQ(tessera::settings().exchange_chunks, saved.exchange_chunks);
}

TEST(Settings, RuntimeKernelCompiler) {
  EXPECT_EQ(from({}).jit, Settings::Jit::automatic);
  EXPECT_EQ(from({{"TESSERA_JIT", "on"}}).jit, Settings::Jit::on);
  EXPECT_EQ(from({{"TESSERA_JIT", "off"}}).jit, Settings::Jit::off);
  const std::string bad = error_of({{"TESSERA_JIT", "yes"}});
  EXPECT_NE(bad.find("TESSERA_JIT"), std::string::npos) << bad;
  EXPECT_NE(bad.find("auto, on or off"), std::string::npos) << bad;
  EXPECT_EQ(from({{"HOME", "/h"}}).kernel_cache_dir, "/h/.cache/tessera/kernels");
  EXPECT_EQ(from({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}}).kernel_cache_dir, "/x/tessera/kernels");
  EXPECT_EQ(from({{"HOME", "/h"}, {"TESSERA_KERNEL_CACHE_DIR", "/k"}}).kernel_cache_dir, "/k");
  EXPECT_EQ(from({{"HOME", "/h"}, {"TESSERA_KERNEL_CACHE_DIR", ""}}).kernel_cache_dir, "") << "empty: memory only";
  EXPECT_NE(from({{"TESSERA_KERNEL_CACHE_DIR", "/k"}}).str().find("TESSERA_KERNEL_CACHE_DIR=/k"), std::string::npos);
}
