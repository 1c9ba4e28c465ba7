// Layout<Rank>: how a global array of shape `global` lies on a ProcessGrid.
//  - split[a] is the grid axis that array axis `a` is divided over, or -1 (whole on every rank);
//    each grid axis splits at most one array axis. Grid axes that split nothing replicate.
//  - blocks: balanced (n = q*p + r: the first r coordinates get q+1) or explicit offsets per
//    axis (p+1 non-decreasing values from 0 to n). Empty blocks are legal.
//  - halo[a]: ghost cells on both sides of axis a in each rank's shard (the shard is the block
//    plus halos); periodic[a]: whether halo exchange wraps around axis a.
#pragma once
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "tessera/distributed/box.hpp"
#include "tessera/distributed/grid.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/error.hpp"

namespace tessera::distributed {

/// Operands whose layouts do not fit the operation (different blocks or process groups).
class LayoutMismatch : public Error { using Error::Error; };

/// How a global array lies on a ProcessGrid: splits, blocks, halos, periodicity.
template <int Rank>
class Layout {
 public:
  using Split = std::array<int, Rank>;
  using Offsets = std::array<std::vector<index_t>, Rank>;

  /// Balanced blocks. split defaults to: array axis a over grid axis a (for a < grid dims).
  Layout(ProcessGrid grid, Index<Rank> global, Split split, Index<Rank> halo = {},
         std::optional<std::array<bool, Rank>> periodic = std::nullopt)
      : grid_(std::move(grid)), global_(global), split_(split), halo_(halo) {
    check_basics();
    for (int a = 0; a < Rank; ++a) {
      const int parts = split_[a] < 0 ? 1 : grid_.dims()[split_[a]];
      const index_t q = global_[a] / parts, r = global_[a] % parts;
      offsets_[a].resize(parts + 1);
      for (int c = 0; c <= parts; ++c) offsets_[a][c] = c * q + std::min<index_t>(c, r);
    }
    set_periodic(periodic);
  }
  /// Explicit block offsets per axis (offsets[a].size() == parts + 1).
  Layout(ProcessGrid grid, Index<Rank> global, Split split, Offsets offsets, Index<Rank> halo,
         std::optional<std::array<bool, Rank>> periodic = std::nullopt)
      : grid_(std::move(grid)), global_(global), split_(split), halo_(halo), offsets_(std::move(offsets)) {
    check_basics();
    for (int a = 0; a < Rank; ++a) {
      const auto& o = offsets_[a];
      const std::size_t parts = split_[a] < 0 ? 1 : grid_.dims()[split_[a]];
      bool ok = o.size() == parts + 1 && o.front() == 0 && o.back() == global_[a];
      for (std::size_t i = 1; ok && i < o.size(); ++i) ok = o[i] >= o[i - 1];
      if (!ok)
        throw InvalidArgument("Layout: offsets of axis " + std::to_string(a) + " must be " + std::to_string(parts + 1) +
                              " non-decreasing values from 0 to " + std::to_string(global_[a]));
    }
    set_periodic(periodic);
  }
  /// Array axis a split over grid axis a, for every grid axis (the usual block layout).
  static Layout block(ProcessGrid grid, Index<Rank> global, Index<Rank> halo = {}) {
    Split s{};
    for (int a = 0; a < Rank; ++a) s[a] = a < grid.ndims() ? a : -1;
    return Layout(std::move(grid), global, s, halo);
  }

  /// Grid, global shape and size, splits, halo widths, periodicity, block offsets of an axis.
  const ProcessGrid& grid() const noexcept { return grid_; }
  const Index<Rank>& global_shape() const noexcept { return global_; }
  index_t global_size() const { return local::shape_size(global_); }
  const Split& split() const noexcept { return split_; }
  const Index<Rank>& halo() const noexcept { return halo_; }
  const std::array<bool, Rank>& periodic() const noexcept { return periodic_; }
  const std::vector<index_t>& offsets(int axis) const {
    if (axis < 0 || axis >= Rank)  // a tessera::Error (rank, device), not std::out_of_range
      throw InvalidArgument("Layout::offsets: axis " + std::to_string(axis) + " out of range for rank " +
                            std::to_string(Rank));
    return offsets_[axis];
  }

  /// The block (interior, global indices) of `rank`, and of this rank; this rank's block shape.
  Box<Rank> local_box(int rank) const {
    const auto c = grid_.coords(rank);
    Box<Rank> b;
    for (int a = 0; a < Rank; ++a) {
      const int k = split_[a] < 0 ? 0 : c[split_[a]];
      b.lo[a] = offsets_[a][k];
      b.hi[a] = offsets_[a][k + 1];
    }
    return b;
  }
  Box<Rank> local_box() const { return local_box(grid_.rank()); }
  Index<Rank> local_shape() const { return local_box().shape(); }
  /// The shard: the block plus halos on both sides.
  Index<Rank> padded_shape() const {
    auto s = local_shape();
    for (int a = 0; a < Rank; ++a) s[a] += 2 * halo_[a];
    return s;
  }
  /// The rank holding global index i (on grid axes that split nothing: coordinate 0).
  int owner(const Index<Rank>& i) const {
    std::vector<int> c(grid_.ndims(), 0);
    for (int a = 0; a < Rank; ++a) {
      if (i[a] < 0 || i[a] >= global_[a])
        throw InvalidArgument("Layout::owner: index " + idx_str(i) + " outside global shape " + idx_str(global_));
      if (split_[a] < 0) continue;
      const auto& o = offsets_[a];
      int k = static_cast<int>(std::upper_bound(o.begin(), o.end(), i[a]) - o.begin()) - 1;
      while (k + 1 < static_cast<int>(o.size()) && o[k + 1] <= i[a]) ++k;  // skip empty blocks
      c[split_[a]] = k;
    }
    return grid_.rank_at(c);
  }

  /// Equal layouts hold the same elements on every rank with the same halos: same grid, global
  /// shape, blocks (same_blocks: other split lists may give them, e.g. on one rank) and halo
  /// widths, and the same periodicity on axes that have a halo (elsewhere it changes nothing).
  /// split() may still differ between equal layouts.
  bool operator==(const Layout& o) const {
    if (halo_ != o.halo_ || !same_blocks(o)) return false;
    for (int a = 0; a < Rank; ++a)
      if (halo_[a] > 0 && periodic_[a] != o.periodic_[a]) return false;
    return true;
  }
  bool operator!=(const Layout& o) const { return !(*this == o); }
  /// Same blocks (interiors): what elementwise operations need; halos may differ.
  bool same_blocks(const Layout& o) const {
    if (global_ != o.global_ || !(grid_ == o.grid_)) return false;
    if (split_ == o.split_ && offsets_ == o.offsets_) return true;
    for (int r = 0; r < grid_.size(); ++r)  // other splits can still give the same boxes
      if (!(local_box(r) == o.local_box(r))) return false;
    return true;
  }

  /// A copy with other halo widths.
  Layout with_halo(Index<Rank> halo) const {
    Layout l = *this;
    l.halo_ = halo;
    l.check_basics();
    l.check_halo();
    return l;
  }

  /// For messages: global shape, grid, splits, blocks and halos.
  std::string str() const {
    std::string s = "Layout" + idx_str(global_) + " on " + grid_.str() + ", split {";
    for (int a = 0; a < Rank; ++a) s += (a ? "," : "") + std::to_string(split_[a]);
    s += "}, blocks {";
    for (int a = 0; a < Rank; ++a) {
      s += a ? "; " : "";
      for (std::size_t i = 0; i < offsets_[a].size(); ++i) s += (i ? "," : "") + std::to_string(offsets_[a][i]);
    }
    s += "}, halo " + idx_str(halo_);
    return s;
  }

  /// "[a,b,c]".
  static std::string idx_str(const Index<Rank>& i) { return local::shape_str(i); }

 private:
  void check_basics() const {
    std::vector<bool> used(grid_.ndims(), false);
    for (int a = 0; a < Rank; ++a) {
      if (global_[a] < 0)
        throw InvalidArgument("Layout: negative extent in global shape " + idx_str(global_));
      if (halo_[a] < 0) throw InvalidArgument("Layout: negative halo width in " + idx_str(halo_));
      const int g = split_[a];
      if (g < -1 || g >= grid_.ndims())
        throw InvalidArgument("Layout: array axis " + std::to_string(a) + " split over grid axis " + std::to_string(g) +
                              " of a " + std::to_string(grid_.ndims()) + "-D " + grid_.str());
      if (g >= 0 && used[g])
        throw InvalidArgument("Layout: grid axis " + std::to_string(g) + " splits two array axes");
      if (g >= 0) used[g] = true;
    }
  }
  // Default periodicity: the grid's flag for split axes, none for whole axes.
  void set_periodic(const std::optional<std::array<bool, Rank>>& requested) {
    for (int a = 0; a < Rank; ++a)
      periodic_[a] = requested ? (*requested)[a] : (split_[a] >= 0 && grid_.periodic()[split_[a]]);
    check_halo();
  }
  // A halo wider than a non-empty block would need data from beyond the next neighbour (checked
  // for every block, so that every rank throws).
  void check_halo() const {
    for (int a = 0; a < Rank; ++a) {
      if (halo_[a] == 0 || split_[a] < 0) continue;
      for (std::size_t k = 0; k + 1 < offsets_[a].size(); ++k) {
        const index_t n = offsets_[a][k + 1] - offsets_[a][k];
        if (n > 0 && halo_[a] > n)
          throw InvalidArgument("Layout: halo " + std::to_string(halo_[a]) + " on axis " + std::to_string(a) +
                                " is wider than block " + std::to_string(k) + " of " + std::to_string(n) +
                                " elements in " + idx_str(global_));
      }
    }
  }

  ProcessGrid grid_;
  Index<Rank> global_{};
  Split split_{};
  Index<Rank> halo_{};
  Offsets offsets_{};
  std::array<bool, Rank> periodic_{};
};

}  // namespace tessera::distributed
