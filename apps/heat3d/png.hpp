// PNG images of 2-D slices through a colour map (libpng; optional at build time).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace heat3d {

// False when the app was built without libpng (write_png then throws BackendUnavailable).
bool png_available();

// Polynomial fits of matplotlib's viridis and inferno (max error about 1/255), t in [0, 1].
std::array<std::uint8_t, 3> colour(const std::string& map, double t);
bool known_colour_map(const std::string& map);

// Writes rows x cols values (row-major) as an 8-bit RGB PNG, [lo, hi] mapped onto the colour map
// (values outside clamp). Slices under 512 pixels are enlarged by a whole factor. Throws tessera::io::IoError naming the path on failure.
void write_png(const std::string& path, const std::vector<double>& values, long long rows, long long cols, double lo,
               double hi, const std::string& map);

}  // namespace heat3d
