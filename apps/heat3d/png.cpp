// PNG output through libpng's simplified API (png_image_write_to_file), when HEAT3D_HAVE_PNG.
#include "png.hpp"

#include <algorithm>
#include <cmath>

#include <tessera/io/error.hpp>

#if HEAT3D_HAVE_PNG
#include <png.h>
#endif

namespace heat3d {

namespace {
constexpr long long kMinPixels = 512;
// c0 + t*(c1 + t*(c2 + ...)) per channel (Matt Zucker's fits of the matplotlib maps).
constexpr double kViridis[7][3] = {
    {0.2777273272234177, 0.005407344544966578, 0.3340998053353061}, {0.1050930431085774, 1.404613529898575, 1.384590162594685},
    {-0.3308618287255563, 0.214847559468213, 0.09509516302823659}, {-4.634230498983486, -5.799100973351585, -19.33244095627987},
    {6.228269936347081, 14.17993336680509, 56.69055260068105},      {4.776384997670288, -13.74514537774601, -65.35303263337234},
    {-5.435455855934631, 4.645852612178535, 26.3124352495832}};
constexpr double kInferno[7][3] = {
    {0.0002189403691192265, 0.001651004631001012, -0.01948089843709184}, {0.1065134194856116, 0.5639564367884091, 3.932712388889277},
    {11.60249308247187, -3.972853965665698, -15.9423941062914},          {-41.70399613139459, 17.43639888205313, 44.35414519872813},
    {77.162935699427, -33.40235894210092, -81.80730925738993},           {-71.31942824499214, 32.62606426397723, 73.20951985803202},
    {25.13112622477341, -12.24266895238567, -23.07032500287172}};
}  // namespace

bool known_colour_map(const std::string& map) { return map == "viridis" || map == "inferno"; }

std::array<std::uint8_t, 3> colour(const std::string& map, double t) {
  const auto& c = map == "inferno" ? kInferno : kViridis;
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  std::array<std::uint8_t, 3> rgb{};
  for (int ch = 0; ch < 3; ++ch) {
    double v = c[6][ch];
    for (int p = 5; p >= 0; --p) v = c[p][ch] + t * v;
    rgb[ch] = static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(v, 0.0, 1.0)));
  }
  return rgb;
}

#if HEAT3D_HAVE_PNG
bool png_available() { return true; }

void write_png(const std::string& path, const std::vector<double>& values, long long rows, long long cols, double lo,
               double hi, const std::string& map) {
  if (rows <= 0 || cols <= 0 || values.size() != static_cast<std::size_t>(rows * cols))
    throw tessera::io::IoError("write_png " + path + ": " + std::to_string(values.size()) + " values for a " +
                               std::to_string(rows) + " x " + std::to_string(cols) + " image");
  const double scale = hi > lo ? 1.0 / (hi - lo) : 0.0;
  const long long zoom = std::max(1LL, kMinPixels / std::max(rows, cols));  // small slices: whole pixels
  const long long w = cols * zoom, h = rows * zoom;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(w * h) * 3);
  for (long long y = 0; y < h; ++y)
    for (long long x = 0; x < w; ++x) {
      const auto c = colour(map, (values[(y / zoom) * cols + x / zoom] - lo) * scale);
      std::copy(c.begin(), c.end(), rgb.begin() + 3 * (y * w + x));
    }
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(w);
  img.height = static_cast<png_uint_32>(h);
  img.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&img, path.c_str(), 0, rgb.data(), 0, nullptr))
    throw tessera::io::IoError("write_png " + path + ": " + img.message);
}
#else
bool png_available() { return false; }

void write_png(const std::string& path, const std::vector<double>&, long long, long long, double, double,
               const std::string&) {
  throw tessera::BackendUnavailable("write_png " + path + ": heat3d was built without libpng (install libpng-dev)");
}
#endif

}  // namespace heat3d
