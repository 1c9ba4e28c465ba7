// heat3d's slices as pictures a person reads: each snapshot's plane is saved as data (a .npy and
// a .json of what the picture needs) and plot_slice.py (matplotlib) draws the PNGs once the run is
// over, with axes in units of the box, a colour bar and the step and time in the title. Where no
// Python here imports matplotlib, heat3d writes its bare colour-map PNGs instead (png.hpp).
#pragma once
#include <array>
#include <string>
#include <vector>

namespace heat3d {

// What plot_slice.py needs besides the values (written beside the slice as STEM.json).
struct SliceInfo {
  long long step = 0;
  double time = 0;
  std::array<long long, 3> shape{};    // the global array's
  int axis = 0;                         // the plane is index `index` along `axis`
  long long index = 0;
  std::array<double, 3> lengths{};     // the box
  std::string dtype, colour_map;
};

// Writes info as JSON to path (rank 0's job). Throws tessera::io::IoError naming the path.
void write_slice_info(const std::string& path, const SliceInfo& info);

// The plotting script and the Python that runs it; rank 0 asks once, before the timed loop.
class SlicePlotter {
 public:
  // Looks for plot_slice.py (installed beside the binary's share/, else the source tree) and runs
  // `python plot_slice.py --probe` once: usable() says whether matplotlib can draw here.
  static SlicePlotter probe();
  bool usable() const { return usable_; }
  const std::string& why_not() const { return why_not_; }  // when not usable, in a few words
  // Slices (their .npy paths) that draw() turns into PNGs beside them.
  void add(const std::string& slice_npy) { pending_.push_back(slice_npy); }
  bool empty() const { return pending_.empty(); }
  // One run of the script for every slice added; prints the PNGs' paths. False (having printed
  // why on stderr) when the script fails.
  bool draw();

 private:
  bool usable_ = false;
  std::string python_, script_, why_not_;
  std::vector<std::string> pending_;
};

}  // namespace heat3d
