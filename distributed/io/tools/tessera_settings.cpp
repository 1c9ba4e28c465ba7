// tessera_settings: prints the settings the TESSERA_* environment gives (what a Runtime would read),
// or the error naming the bad variable (exit 1). `tessera-run --print-settings` runs it.
#include <cstdio>

#include "tessera/local/error.hpp"
#include "tessera/local/settings.hpp"

int main() {
  try {
    std::fputs(tessera::Settings::from_environment().str().c_str(), stdout);
    return 0;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera_settings: %s\n", e.what());
    return 1;
  }
}
