// The local layer's settings and the registry every layer's settings go through (config.hpp):
// parsed once from a lookup, validated with messages that name the variable, the value and what
// is accepted; each layer registers its variables (the docs' table is made from them).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "tessera/local/config.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/settings.hpp"

namespace {
using tessera::Settings;
using Env = std::map<std::string, std::string>;

tessera::config::Lookup lookup(const Env& env) { return tessera::config::lookup_of(env); }
Settings from(const Env& env) { return Settings::parse(lookup(env)); }

std::string error_of(const Env& env) {
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
  EXPECT_FALSE(s.verbose);
  EXPECT_EQ(s.pool_release_threshold, UINT64_MAX);
  EXPECT_EQ(s.reduce_blocks_per_sm, 4);
  EXPECT_TRUE(s.fft_callbacks);
  EXPECT_EQ(s.fft_axis_kernel, Settings::FftAxisKernel::all);
  EXPECT_EQ(s.fft_axis_tile, 128);
  EXPECT_EQ(s.fft_plane_kernel, Settings::FftPlaneKernel::automatic);
  EXPECT_TRUE(s.fft_halves);
  EXPECT_EQ(s.launcher_rank, -1);
}

TEST(Settings, ReadsEveryVariable) {
  const Settings s = from({{"TESSERA_DEVICE", "cuda:1"},
                           {"TESSERA_VERBOSE", "1"},
                           {"TESSERA_POOL_RELEASE_THRESHOLD", "1048576"},
                           {"TESSERA_REDUCE_BLOCKS_PER_SM", "8"},
                           {"TESSERA_FFT_CALLBACKS", "0"},
                           {"TESSERA_FFT_PATIENT_JIT", "1"},
                           {"TESSERA_FFT_AXIS_KERNEL", "scaled"},
                           {"TESSERA_FFT_AXIS_TILE", "64"},
                           {"TESSERA_FFT_PLANE_KERNEL", "on"},
                           {"TESSERA_FFT_HALVES", "0"},
                           {"OMPI_COMM_WORLD_RANK", "5"}});
  EXPECT_EQ(s.device, "cuda:1");
  EXPECT_TRUE(s.verbose);
  EXPECT_EQ(s.pool_release_threshold, 1048576u);
  EXPECT_EQ(s.reduce_blocks_per_sm, 8);
  EXPECT_FALSE(s.fft_callbacks);
  EXPECT_TRUE(s.fft_patient_jit);
  EXPECT_EQ(s.fft_axis_kernel, Settings::FftAxisKernel::scaled);
  EXPECT_EQ(s.fft_axis_tile, 64);
  EXPECT_EQ(s.fft_plane_kernel, Settings::FftPlaneKernel::on);
  EXPECT_FALSE(s.fft_halves);
  EXPECT_EQ(s.launcher_rank, 5);
  for (const char* name : {"TESSERA_DEVICE=cuda:1", "TESSERA_REDUCE_BLOCKS_PER_SM=8", "TESSERA_FFT_CALLBACKS=0",
                           "TESSERA_FFT_AXIS_KERNEL=scaled", "TESSERA_FFT_AXIS_TILE=64",
                           "TESSERA_FFT_PLANE_KERNEL=on", "TESSERA_FFT_HALVES=0"})
    EXPECT_NE(s.str().find(name), std::string::npos) << name << " missing from\n" << s.str();
}

TEST(Settings, BadValuesNameVariableValueAndWhatIsAccepted) {
  const std::string d = error_of({{"TESSERA_DEVICE", "gpu7"}});
  EXPECT_NE(d.find("TESSERA_DEVICE='gpu7'"), std::string::npos) << d;
  EXPECT_NE(d.find("cuda:N"), std::string::npos) << d;
  const std::string v = error_of({{"TESSERA_VERBOSE", "maybe"}});
  EXPECT_NE(v.find("TESSERA_VERBOSE='maybe'"), std::string::npos) << v;
  EXPECT_NE(v.find("on, off"), std::string::npos) << v;
  EXPECT_FALSE(error_of({{"TESSERA_REDUCE_BLOCKS_PER_SM", "0"}}).empty());
  EXPECT_FALSE(error_of({{"TESSERA_POOL_RELEASE_THRESHOLD", "lots"}}).empty());
  const std::string k = error_of({{"TESSERA_FFT_AXIS_KERNEL", "sometimes"}});
  EXPECT_NE(k.find("off, scaled or all"), std::string::npos) << k;
  EXPECT_FALSE(error_of({{"TESSERA_FFT_AXIS_TILE", "96"}}).empty());
}

// TESSERA_FFT_PLANE_KERNEL was a 0/1 switch before it had auto: both spellings read.
TEST(Settings, PlaneKernelTakesAutoOnOffAndTheOldSwitch) {
  using Mode = Settings::FftPlaneKernel;
  EXPECT_EQ(from({{"TESSERA_FFT_PLANE_KERNEL", "auto"}}).fft_plane_kernel, Mode::automatic);
  EXPECT_EQ(from({{"TESSERA_FFT_PLANE_KERNEL", "off"}}).fft_plane_kernel, Mode::off);
  EXPECT_EQ(from({{"TESSERA_FFT_PLANE_KERNEL", "0"}}).fft_plane_kernel, Mode::off);
  EXPECT_EQ(from({{"TESSERA_FFT_PLANE_KERNEL", "1"}}).fft_plane_kernel, Mode::on);
  EXPECT_EQ(from({{"TESSERA_FFT_PLANE_KERNEL", ""}}).fft_plane_kernel, Mode::automatic);
  const std::string bad = error_of({{"TESSERA_FFT_PLANE_KERNEL", "yes"}});
  EXPECT_NE(bad.find("TESSERA_FFT_PLANE_KERNEL='yes'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("off, auto or on"), std::string::npos) << bad;
}

TEST(Settings, InstalledSettingsAreWhatSettingsReturns) {
  const Settings saved = tessera::settings();
  Settings s = saved;
  s.reduce_blocks_per_sm = 7;
  tessera::set_settings(s);
  EXPECT_EQ(tessera::settings().reduce_blocks_per_sm, 7);
  tessera::set_settings(saved);
  EXPECT_EQ(tessera::settings().reduce_blocks_per_sm, saved.reduce_blocks_per_sm);
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

TEST(SettingsRegistry, TheLocalLayerDeclaresEveryVariableItReads) {
  const auto layers = tessera::config::layers();
  ASSERT_FALSE(layers.empty());
  EXPECT_EQ(layers.front().name, "local");
  const std::string lines = from({}).str(), table = tessera::config::markdown_table();
  for (const auto& v : Settings::variables()) {
    EXPECT_NE(lines.find(v.name + "="), std::string::npos) << v.name << " is declared but not printed";
    EXPECT_NE(table.find("| `" + v.name + "` | local |"), std::string::npos) << table;
    EXPECT_FALSE(v.doc.empty()) << v.name;
  }
  // Each printed line is a declared variable.
  for (std::size_t at = 0; at < lines.size();) {
    const std::string name = lines.substr(at, lines.find('=', at) - at);
    bool declared = false;
    for (const auto& v : Settings::variables()) declared = declared || v.name == name;
    EXPECT_TRUE(declared) << name << " is printed but not declared";
    at = lines.find('\n', at) + 1;
  }
}

TEST(SettingsRegistry, InstallAllStopsAtTheFirstBadValue) {
  const Settings saved = tessera::settings();
  EXPECT_THROW(tessera::config::install_all(lookup({{"TESSERA_VERBOSE", "sometimes"}})), tessera::InvalidArgument);
  EXPECT_EQ(tessera::settings().verbose, saved.verbose);  // nothing of a bad layer is installed
  tessera::config::install_all(lookup({{"TESSERA_REDUCE_BLOCKS_PER_SM", "6"}}));
  EXPECT_EQ(tessera::settings().reduce_blocks_per_sm, 6);
  tessera::set_settings(saved);
}

TEST(SettingsRegistry, ParsersNameTheVariable) {
  namespace c = tessera::config;
  const auto get = lookup({{"A", "12"}, {"B", "x"}, {"C", "on"}, {"D", ""}});
  EXPECT_EQ(c::parse_int(get, "A", 0, 0, "n"), 12);
  EXPECT_EQ(c::parse_int(get, "D", 3, 0, "n"), 3) << "empty: the default";
  EXPECT_THROW(c::parse_int(get, "A", 0, 13, "an integer >= 13"), tessera::InvalidArgument);
  EXPECT_TRUE(c::parse_bool(get, "C", false));
  constexpr std::string_view names[] = {"x", "y"};
  EXPECT_EQ(c::parse_choice(get, "B", names, 1), 0);
  try {
    (void)c::parse_choice(get, "A", names, 0);
    FAIL() << "no error";
  } catch (const tessera::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("A='12': expected x or y"), std::string::npos) << e.what();
  }
}
