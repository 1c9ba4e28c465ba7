// tessera_settings: prints the settings the TESSERA_* environment gives, every layer's (what a
// Runtime would read), or the error naming the bad variable (exit 1); --markdown prints the table
// of every variable that docs/settings.md holds. `tessera-run --print-settings` runs it.
#include <cstdio>
#include <cstring>

#include "tessera/comm/settings.hpp"
#include "tessera/distributed/settings.hpp"
#include "tessera/io/settings.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/settings.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--markdown") == 0) {
    std::fputs(tessera::config::markdown_table().c_str(), stdout);
    return 0;
  }
  if (argc > 1) {
    std::fprintf(stderr, "usage: tessera_settings [--markdown]\n");
    return 2;
  }
  try {
    tessera::config::install_all();
    // Each layer registers its variables when its library loads: use every one, so that the
    // linker keeps them all.
    (void)tessera::settings(), (void)tessera::comm::settings(), (void)tessera::distributed::settings(),
        (void)tessera::io::settings();
    std::fputs(tessera::config::str_all().c_str(), stdout);
    return 0;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera_settings: %s\n", e.what());
    return 1;
  }
}
