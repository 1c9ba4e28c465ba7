// tessera_kernel_cache: the runtime kernel compiler's disk cache (TESSERA_KERNEL_CACHE_DIR).
//   tessera_kernel_cache            the directory, its kernel files and their total size
//   tessera_kernel_cache --clear    removes them (exit 0; the count is printed)
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "tessera/local/error.hpp"
#include "tessera/local/jit/compiler.hpp"
#include "tessera/local/settings.hpp"

int main(int argc, char** argv) {
  try {
    const bool clear = argc > 1 && std::strcmp(argv[1], "--clear") == 0;
    if (argc > 1 && !clear) {
      std::fprintf(stderr, "usage: tessera_kernel_cache [--clear]\n");
      return 2;
    }
    const tessera::local::jit::DiskCache cache(tessera::Settings::from_environment().kernel_cache_dir);
    if (cache.dir().empty()) {
      std::printf("kernel cache: off (TESSERA_KERNEL_CACHE_DIR is empty)\n");
      return 0;
    }
    if (clear) {
      std::printf("%s: removed %zu kernel files\n", cache.dir().c_str(), cache.clear());
      return 0;
    }
    std::uintmax_t bytes = 0;
    const auto files = cache.list();
    for (const auto& f : files) {
      std::error_code ec;
      const auto n = std::filesystem::file_size(f, ec);
      bytes += ec ? 0 : n;
      std::printf("%10ju  %s\n", static_cast<std::uintmax_t>(ec ? 0 : n), f.c_str());
    }
    std::printf("%s: %zu kernel files, %ju bytes (NVRTC %s)\n", cache.dir().c_str(), files.size(), bytes,
                tessera::local::jit::nvrtc_version().c_str());
    return 0;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera_kernel_cache: %s\n", e.what());
    return 1;
  }
}
