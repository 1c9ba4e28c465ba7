// The kernel compiler's disk cache and keys (jit/compiler.hpp). A file holds: the magic
// "TSRKRN01", the key's length and text (the full key, so that a hash collision or a foreign
// file is told apart), the cubin's length and bytes, and an FNV-1a checksum of everything before
// it. Anything else is not trusted: the kernel is compiled again and the file replaced.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "tessera/config.hpp"
#include "tessera/local/jit/compiler.hpp"

namespace tessera::local::jit {
namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'T', 'S', 'R', 'K', 'R', 'N', '0', '1'};

void put_u64(std::string& s, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
bool get_u64(const std::string& s, std::size_t& at, std::uint64_t& v) {
  if (at + 8 > s.size()) return false;
  v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  at += 8;
  return true;
}
std::string hex(std::uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}
// One warning per process for an unusable directory (ranks print theirs).
void warn_once(const std::string& dir, const std::string& why) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr, "tessera: warning: kernel cache directory %s is not usable (%s); kernels stay in memory\n",
                 dir.c_str(), why.c_str());
}
}  // namespace

std::uint64_t fnv1a(const void* data, std::size_t n, std::uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string disk_key(const std::string& source, int arch) {
  std::ostringstream o;
  o << "tessera " << TESSERA_VERSION_STRING << "\nnvrtc " << nvrtc_version() << "\narch sm_" << arch << "\noptions";
  for (const auto& opt : nvrtc_options(arch)) o << ' ' << opt;
  o << "\n" << source;
  return o.str();
}

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {}

std::string DiskCache::path_of(const std::string& key) const {
  return (fs::path(dir_) / ("kernel_" + hex(fnv1a(key.data(), key.size())) + ".cubin")).string();
}

std::optional<std::vector<char>> DiskCache::load(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  std::ifstream f(path_of(key), std::ios::binary);
  if (!f) return std::nullopt;
  const std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (s.size() < sizeof kMagic + 24 || std::memcmp(s.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  std::size_t at = sizeof kMagic;
  std::uint64_t klen = 0, ilen = 0, sum = 0;
  if (!get_u64(s, at, klen) || klen > s.size() - at || s.compare(at, klen, key) != 0) return std::nullopt;
  at += klen;
  if (!get_u64(s, at, ilen) || ilen > s.size() - at) return std::nullopt;
  const std::size_t image_at = at;
  at += ilen;
  const std::size_t checked = at;
  if (!get_u64(s, at, sum) || at != s.size() || sum != fnv1a(s.data(), checked)) return std::nullopt;
  return std::vector<char>(s.begin() + static_cast<std::ptrdiff_t>(image_at),
                           s.begin() + static_cast<std::ptrdiff_t>(image_at + ilen));
}

bool DiskCache::store(const std::string& key, const std::vector<char>& image) const {
  if (dir_.empty()) return false;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    warn_once(dir_, ec.message());
    return false;
  }
  std::string s(kMagic, sizeof kMagic);
  put_u64(s, key.size());
  s += key;
  put_u64(s, image.size());
  s.append(image.data(), image.size());
  put_u64(s, fnv1a(s.data(), s.size()));
  // A name of its own per writer: ranks storing the same kernel at once each rename a whole file.
  std::random_device rd;
  const std::string final_path = path_of(key);
  const std::string tmp = final_path + ".tmp." + std::to_string(::getpid()) + "." + hex((std::uint64_t(rd()) << 32) | rd());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !f.write(s.data(), static_cast<std::streamsize>(s.size())) || !f.flush()) {
      f.close();
      fs::remove(tmp, ec);
      warn_once(dir_, "cannot write " + tmp);
      return false;
    }
  }
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    warn_once(dir_, "cannot rename into " + final_path);
    return false;
  }
  return true;
}

std::vector<std::string> DiskCache::list() const {
  std::vector<std::string> files;
  std::error_code ec;
  if (dir_.empty() || !fs::is_directory(dir_, ec)) return files;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("kernel_", 0) == 0 && e.path().extension() == ".cubin") files.push_back(e.path().string());
  }
  return files;
}

std::size_t DiskCache::clear() const {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& f : list()) n += fs::remove(f, ec) ? 1 : 0;
  return n;
}

std::vector<char> cubin_for(const Kernel& k, const std::string& name, int arch, const DiskCache& cache, Origin* origin,
                            const std::function<std::vector<char>(const std::string&, const std::string&, int)>& compile) {
  return cubin_of_source(generate_cuda(k, name), name, arch, cache, origin, compile);
}

std::vector<char> cubin_of_source(const std::string& source, const std::string& name, int arch, const DiskCache& cache,
                                  Origin* origin,
                                  const std::function<std::vector<char>(const std::string&, const std::string&, int)>& compile) {
  const std::string key = disk_key(source, arch);
  if (auto image = cache.load(key)) {
    if (origin) *origin = Origin::disk;
    return *image;
  }
  auto image = compile ? compile(source, name, arch) : compile_cubin(source, name, arch);
  cache.store(key, image);
  if (origin) *origin = Origin::compiled;
  return image;
}

}  // namespace tessera::local::jit
