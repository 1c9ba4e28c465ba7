// The stages of a distributed FFT from shapes and counts alone (stages.hpp).
#include "stages.hpp"

#include <cmath>

#include "tessera/distributed/rule.hpp"
#include "tessera/local/error.hpp"

namespace tessera::fft::detail {
namespace {
std::string shape_str(const std::vector<local::index_t>& s) {
  std::string r = "[";
  for (std::size_t a = 0; a < s.size(); ++a) r += (a ? "," : "") + std::to_string(s[a]);
  return r + "]";
}
// A stage transforming axes [s0, s1] with array axis k split by grid axis splits[k] (the rest whole).
StageShape stage(int rank, int s0, int s1, std::vector<int> splits, int grid_axes) {
  splits.resize(static_cast<std::size_t>(rank), -1);
  return {s0, s1, std::move(splits), grid_axes};
}
}  // namespace

StagePlan make_stages(const std::vector<local::index_t>& shape, int ranks, Decomposition want, const Device& device) {
  const int R = static_cast<int>(shape.size());
  for (local::index_t n : shape)
    if (n < 1) throw InvalidArgument("fft: global shape " + shape_str(shape) + " has an empty axis", device);
  if (want == Decomposition::pencil && R != 3)
    throw InvalidArgument("fft: a pencil decomposition needs a 3-D array, not " + std::to_string(R) + "-D", device);
  if ((want == Decomposition::four_step || want == Decomposition::bluestein) && R != 1)
    throw InvalidArgument(std::string("fft: the ") + decomposition_name(want) + " decomposition is for 1-D arrays, not " +
                          std::to_string(R) + "-D", device);
  if (want == Decomposition::automatic)
    want = distributed::rule::fft_pencil(R, ranks, shape[0]) ? Decomposition::pencil : Decomposition::slab;
  StagePlan p;
  p.decomposition = R == 1 ? Decomposition::slab : want;
  if (R == 1 && ranks > 1) return p;  // fft1d's four-step or Bluestein transform
  if (ranks == 1 || R == 1) {
    p.stages.push_back(stage(R, 0, R - 1, {}, 0));
  } else if (p.decomposition == Decomposition::slab) {
    // Axes 1.. of slabs along axis 0, then axis 0 of slabs along axis 1.
    p.stages.push_back(stage(R, 1, R - 1, {0}, 1));
    p.stages.push_back(stage(R, 0, 0, {-1, 0}, 1));
  } else {
    // Pencils: axis 2 whole, then axis 1, then axis 0, on a 2-D grid.
    p.stages.push_back(stage(R, 2, 2, {0, 1, -1}, 2));
    p.stages.push_back(stage(R, 1, 1, {0, -1, 1}, 2));
    p.stages.push_back(stage(R, 0, 0, {-1, 0, 1}, 2));
  }
  return p;
}

std::string str(const StagePlan& p) {
  std::string s = decomposition_name(p.decomposition);
  s += ":";
  for (std::size_t i = 0; i < p.stages.size(); ++i) {
    const auto& st = p.stages[i];
    s += (i ? "; axes " : " axes ") + std::to_string(st.first_axis) + ".." + std::to_string(st.last_axis) + " on [";
    for (std::size_t a = 0; a < st.split.size(); ++a) s += (a ? " " : "") + std::to_string(st.split[a]);
    s += "] of " + std::to_string(st.grid_axes) + " grid axes";
  }
  return s;
}

double norm_factor(Norm norm, bool forward, double points) {
  if (norm == Norm::ortho) return 1.0 / std::sqrt(points);
  if (norm == Norm::none) return 1.0;
  return (norm == Norm::forward) == forward ? 1.0 / points : 1.0;
}

}  // namespace tessera::fft::detail
