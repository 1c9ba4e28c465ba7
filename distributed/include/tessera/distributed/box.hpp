// Boxes of global indices, one geometry for two kinds: Box<R>, of a rank known when compiling
// (layouts, the exchange), and DynBox, of a rank known at run time (the file formats' chunk
// grids, front ends that choose the rank at run time). Both call the functions of box_geometry.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "tessera/local/array.hpp"
#include "tessera/local/error.hpp"

namespace tessera::distributed {

using local::index_t;
/// A global index (or shape).
template <int Rank> using Index = local::Shape<Rank>;

/// The geometry of half-open boxes [lo, hi), on any indexable lo/hi of equal length.
namespace box_geometry {
/// Extents (0 where hi <= lo).
template <class V>
V shape(const V& lo, const V& hi) {
  V s = lo;
  for (std::size_t a = 0; a < s.size(); ++a) s[a] = hi[a] > lo[a] ? hi[a] - lo[a] : 0;
  return s;
}
/// The element count.
template <class V>
index_t size(const V& lo, const V& hi) {
  index_t n = 1;
  for (std::size_t a = 0; a < lo.size(); ++a) n *= hi[a] > lo[a] ? hi[a] - lo[a] : 0;
  return n;
}
/// The common part of [alo, ahi) and [blo, bhi) into [lo, hi) (empty: hi == lo on some axis).
template <class V>
void intersect(const V& alo, const V& ahi, const V& blo, const V& bhi, V& lo, V& hi) {
  for (std::size_t a = 0; a < lo.size(); ++a)
    lo[a] = std::max(alo[a], blo[a]), hi[a] = std::max(lo[a], std::min(ahi[a], bhi[a]));
}
/// Whether index i lies in [lo, hi).
template <class V, class I>
bool contains(const V& lo, const V& hi, const I& i) {
  for (std::size_t a = 0; a < lo.size(); ++a)
    if (i[a] < lo[a] || i[a] >= hi[a]) return false;
  return true;
}
/// The row-major offset of index i inside [lo, hi).
template <class V, class I>
index_t offset_of(const V& lo, const V& hi, const I& i) {
  index_t o = 0;
  for (std::size_t a = 0; a < lo.size(); ++a) o = o * (hi[a] - lo[a]) + (i[a] - lo[a]);
  return o;
}
/// Whether the part [plo, phi) of the row-major box [lo, hi) is one contiguous run of it: whole
/// along every axis after the first it spans more than one index of.
template <class V>
bool is_run(const V& lo, const V& hi, const V& plo, const V& phi) {
  std::size_t a = 0;
  while (a < lo.size() && phi[a] - plo[a] == 1) ++a;
  for (std::size_t b = a + 1; b < lo.size(); ++b)
    if (plo[b] != lo[b] || phi[b] != hi[b]) return false;
  return true;
}
/// "[lo0:hi0, lo1:hi1]".
template <class V>
std::string str(const V& lo, const V& hi) {
  std::string s = "[";
  for (std::size_t a = 0; a < lo.size(); ++a) s += (a ? ", " : "") + std::to_string(lo[a]) + ":" + std::to_string(hi[a]);
  return s + "]";
}
}  // namespace box_geometry

struct DynBox;

/// A half-open box [lo, hi) of global indices.
template <int Rank>
struct Box {
  Index<Rank> lo{}, hi{};
  /// Extents (0 where hi <= lo), element count, emptiness.
  Index<Rank> shape() const { return box_geometry::shape(lo, hi); }
  index_t size() const { return box_geometry::size(lo, hi); }
  bool empty() const { return size() == 0; }
  /// The common part of two boxes (empty if none).
  Box intersect(const Box& o) const {
    Box r;
    box_geometry::intersect(lo, hi, o.lo, o.hi, r.lo, r.hi);
    return r;
  }
  /// True if i lies in the box.
  bool contains(const Index<Rank>& i) const { return box_geometry::contains(lo, hi, i); }
  bool operator==(const Box&) const = default;
  /// For messages: "[lo0:hi0, lo1:hi1]".
  std::string str() const { return box_geometry::str(lo, hi); }
};

/// A half-open box [lo, hi) of global indices whose rank is known at run time.
struct DynBox {
  std::vector<index_t> lo, hi;

  DynBox() = default;
  DynBox(std::vector<index_t> l, std::vector<index_t> h) : lo(std::move(l)), hi(std::move(h)) {
    if (lo.size() != hi.size())
      throw InvalidArgument("DynBox: lo has " + std::to_string(lo.size()) + " axes, hi " + std::to_string(hi.size()));
  }
  /// The same box as b.
  template <int Rank>
  explicit DynBox(const Box<Rank>& b) : lo(b.lo.begin(), b.lo.end()), hi(b.hi.begin(), b.hi.end()) {}

  int rank() const { return static_cast<int>(lo.size()); }
  std::vector<index_t> shape() const { return box_geometry::shape(lo, hi); }
  index_t size() const { return box_geometry::size(lo, hi); }
  bool empty() const { return size() == 0; }
  DynBox intersect(const DynBox& o) const {
    DynBox r{lo, hi};
    box_geometry::intersect(lo, hi, o.lo, o.hi, r.lo, r.hi);
    return r;
  }
  template <class I> bool contains(const I& i) const { return box_geometry::contains(lo, hi, i); }
  /// The row-major offset of index i (inside the box) in the box's elements.
  template <class I> index_t offset_of(const I& i) const { return box_geometry::offset_of(lo, hi, i); }
  /// Whether `part` (inside the box) is one contiguous run of the box's row-major elements.
  bool has_run(const DynBox& part) const { return box_geometry::is_run(lo, hi, part.lo, part.hi); }
  /// The box as a Box<Rank>; InvalidArgument for another rank.
  template <int Rank>
  Box<Rank> fixed() const {
    if (rank() != Rank)
      throw InvalidArgument("DynBox " + str() + " has " + std::to_string(rank()) + " axes, not " + std::to_string(Rank));
    Box<Rank> b;
    std::copy(lo.begin(), lo.end(), b.lo.begin());
    std::copy(hi.begin(), hi.end(), b.hi.begin());
    return b;
  }
  bool operator==(const DynBox&) const = default;
  std::string str() const { return box_geometry::str(lo, hi); }
};

}  // namespace tessera::distributed
