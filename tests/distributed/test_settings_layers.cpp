// The settings of the layers above local (comm, distributed, io): each reads and validates its own
// variables, prints them, and declares them in the registry (docs/settings.md is made from it).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tessera/comm/settings.hpp"
#include "tessera/distributed/settings.hpp"
#include "tessera/io/settings.hpp"
#include "tessera/local/error.hpp"

namespace {
using Env = std::map<std::string, std::string>;
tessera::config::Lookup lookup(const Env& env) { return tessera::config::lookup_of(env); }
template <class S> std::string error_of(const Env& env) {
  try {
    (void)S::parse(lookup(env));
  } catch (const tessera::InvalidArgument& e) {
    return e.what();
  }
  return "";
}
// Every declared variable of S is printed by str(), and every printed one is declared.
template <class S> void declared_and_printed(const std::string& layer) {
  const std::string lines = S::parse(lookup({})).str(), table = tessera::config::markdown_table();
  for (const auto& v : S::variables()) {
    EXPECT_NE(lines.find(v.name + "="), std::string::npos) << v.name;
    EXPECT_NE(table.find("| `" + v.name + "` | " + layer + " |"), std::string::npos) << v.name << "\n" << table;
  }
  for (std::size_t at = 0; at < lines.size(); at = lines.find('\n', at) + 1) {
    const std::string name = lines.substr(at, lines.find('=', at) - at);
    bool declared = false;
    for (const auto& v : S::variables()) declared = declared || v.name == name;
    EXPECT_TRUE(declared) << name;
  }
}
}  // namespace

TEST(LayerSettings, Comm) {
  using S = tessera::comm::Settings;
  const S d = S::parse(lookup({}));
  EXPECT_TRUE(d.nccl);
  EXPECT_DOUBLE_EQ(d.comm_timeout, 300.0);
  const S s = S::parse(lookup({{"TESSERA_NCCL", "0"}, {"TESSERA_COMM_TIMEOUT", "2.5"}}));
  EXPECT_FALSE(s.nccl);
  EXPECT_DOUBLE_EQ(s.comm_timeout, 2.5);
  const std::string t = error_of<S>({{"TESSERA_COMM_TIMEOUT", "-3"}});
  EXPECT_NE(t.find("TESSERA_COMM_TIMEOUT='-3'"), std::string::npos) << t;
  EXPECT_NE(t.find("seconds > 0"), std::string::npos) << t;
  EXPECT_NE(error_of<S>({{"TESSERA_NCCL", "maybe"}}).find("TESSERA_NCCL='maybe'"), std::string::npos);
  declared_and_printed<S>("comm");
}

TEST(LayerSettings, Distributed) {
  using S = tessera::distributed::Settings;
  using tessera::distributed::Transport;
  const S d = S::parse(lookup({}));
  EXPECT_FALSE(d.check);
  EXPECT_EQ(d.exchange_chunks, 0);
  EXPECT_EQ(d.chunks_for(true), 8);
  EXPECT_EQ(d.chunks_for(false), 1);
  EXPECT_EQ(d.fft_chunks_for(true), 4);
  EXPECT_EQ(d.fft_chunks_for(true, std::uint64_t{64} << 20), 4);   // 512^3 c64 on 4 GPUs
  EXPECT_EQ(d.fft_chunks_for(true, std::uint64_t{512} << 20), 8);  // 1024^3 c64 on 4 GPUs
  EXPECT_EQ(d.fft_chunks_for(false, std::uint64_t{512} << 20), 1);
  EXPECT_EQ(d.exchange_chunk_mib, 16);
  EXPECT_TRUE(d.exchange_taper);
  EXPECT_EQ(d.copy_blocks_per_sm, 2);
  EXPECT_EQ(d.transport, Transport::automatic);
  const S s = S::parse(lookup({{"TESSERA_CHECK", "true"},
                               {"TESSERA_EXCHANGE_CHUNKS", "3"},
                               {"TESSERA_EXCHANGE_CHUNK_MIB", "0"},
                               {"TESSERA_EXCHANGE_TAPER", "0"},
                               {"TESSERA_FFT_CHUNKS", "8"},
                               {"TESSERA_COPY_BLOCKS_PER_SM", "4"},
                               {"TESSERA_COPY_ENGINE", "on"},
                               {"TESSERA_TRANSPORT", "nccl-window"}}));
  EXPECT_TRUE(s.check);
  EXPECT_EQ(s.chunks_for(true), 3);
  EXPECT_EQ(s.chunks_for(false), 3);
  EXPECT_EQ(s.fft_chunks_for(false), 8);
  EXPECT_EQ(s.exchange_chunk_mib, 0);
  EXPECT_FALSE(s.exchange_taper);
  EXPECT_EQ(s.copy_blocks_per_sm, 4);
  EXPECT_TRUE(s.copy_engine);
  EXPECT_EQ(s.transport, Transport::nccl_window);
  for (const char* t : {"auto", "nccl", "nccl-window", "ipc", "mpi"})
    EXPECT_EQ(tessera::distributed::transport_name(*tessera::distributed::transport_from_name(t)), t);
  const std::string bad = error_of<S>({{"TESSERA_TRANSPORT", "carrier-pigeon"}});
  EXPECT_NE(bad.find("TESSERA_TRANSPORT='carrier-pigeon'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("nccl-window"), std::string::npos) << bad;
  const std::string c = error_of<S>({{"TESSERA_EXCHANGE_CHUNKS", "four"}});
  EXPECT_NE(c.find("TESSERA_EXCHANGE_CHUNKS='four'"), std::string::npos) << c;
  EXPECT_NE(c.find("integer >= 0"), std::string::npos) << c;
  EXPECT_FALSE(error_of<S>({{"TESSERA_COPY_BLOCKS_PER_SM", "0"}}).empty());
  EXPECT_FALSE(error_of<S>({{"TESSERA_FFT_CHUNKS", "2x"}}).empty());
  for (const char* name : {"TESSERA_EXCHANGE_CHUNKS=3", "TESSERA_FFT_CHUNKS=8", "TESSERA_TRANSPORT=nccl-window"})
    EXPECT_NE(s.str().find(name), std::string::npos) << name << "\n" << s.str();
  const S saved = tessera::distributed::settings();
  S changed = saved;
  changed.exchange_chunks = 7;
  tessera::distributed::set_settings(changed);
  EXPECT_EQ(tessera::distributed::settings().exchange_chunks, 7);
  tessera::distributed::set_settings(saved);
  declared_and_printed<S>("distributed");
}

TEST(LayerSettings, Io) {
  using S = tessera::io::Settings;
  EXPECT_FALSE(S::parse(lookup({})).mpiio_collective.has_value());  // chosen by the MPI
  const S s = S::parse(lookup({{"TESSERA_MPIIO_COLLECTIVE", "yes"}, {"TESSERA_IO_THREADS", "6"}}));
  EXPECT_EQ(s.mpiio_collective, std::optional<bool>(true));
  EXPECT_EQ(S::parse(lookup({{"TESSERA_MPIIO_COLLECTIVE", "0"}})).mpiio_collective, std::optional<bool>(false));
  EXPECT_EQ(s.io_threads, 6);
  EXPECT_FALSE(error_of<S>({{"TESSERA_IO_THREADS", "-1"}}).empty());
  EXPECT_NE(s.str().find("TESSERA_IO_THREADS=6"), std::string::npos);
  declared_and_printed<S>("io");
}

TEST(LayerSettings, TheRegistryListsTheLayersBottomUp) {
  std::string order;
  for (const auto& l : tessera::config::layers()) order += l.name + " ";
  EXPECT_EQ(order, "local comm distributed io ");
  // No variable is declared by two layers.
  std::map<std::string, int> seen;
  for (const auto& l : tessera::config::layers())
    for (const auto& v : l.variables()) EXPECT_EQ(++seen[v.name], 1) << v.name;
}
