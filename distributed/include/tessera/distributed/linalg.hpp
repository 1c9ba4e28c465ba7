// Dense linear algebra of distributed arrays: matmul (SUMMA), batched matmul, matvec.
//
// matmul(a, b, op_a, op_b) = op_a(a) @ op_b(b), op = none, trans (A^T) or conj_trans (A^H), for
// float, double, complex64 and complex128. The product runs on a 2-D process grid: a's grid if it
// is 2-D, else a balanced 2-D grid of a's group (made once per group and cached). Operands whose
// blocks are not the SUMMA layouts below are redistributed first (halos are fine, they are skipped):
//   op(a) = a   : a {m,k}, rows over grid axis 0, columns over grid axis 1, balanced blocks
//   op(a) = a^T : a {k,m}, rows over grid axis 1, columns over grid axis 0 (so a panel of k is rows)
//   b likewise with (k, n); the result {m,n}: rows over grid axis 0, columns over grid axis 1.
// SUMMA: k is cut at every block edge of a and b and into panels of at most `panel` columns; the
// grid column holding a panel of op(a) broadcasts it along each grid row, the grid row holding the
// panel of op(b) broadcasts it down each grid column, and every rank adds the panel product to its
// block of C. Broadcasts run on the device's comm stream, double-buffered, so that the broadcast
// of panel j+1 overlaps the local GEMM of panel j. On one rank (a 1x1 grid) it is a single GEMM
// on the shards. Local GEMMs: cuBLAS on GPUs, OpenBLAS (cblas) on the host.
//
// matmul of 3-D arrays multiplies the matrices of a leading batch axis: batch split over a 1-D grid
// of the group, matrices whole on their rank (strided-batched cuBLAS, or a loop of host GEMMs).
// matvec(a, x) = a @ x of a 2-D {m,n} and a 1-D {n} array: a's rows over a 1-D grid of the group,
// x gathered on every rank, the result {m} in the same row blocks. (dot of 1-D arrays: reduce.hpp.)
// Errors: ShapeMismatch (inner extents differ), DeviceMismatch, LayoutMismatch (other groups).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tessera/distributed/array.hpp"
#include "tessera/distributed/settings.hpp"

namespace tessera::distributed {

/// How an operand enters a product: as is, transposed, or conjugate-transposed.
enum class Op { none, trans, conj_trans };

/// Options of matmul; panel: most k-columns per SUMMA step (0: min(1024, the k block)); grid: the
/// SUMMA grid {rows, columns} where a's grid is not 2-D (empty: balanced); tune: how the panel
/// and grid left automatic are chosen (unset: TESSERA_TUNE; docs/tuning.md).
struct MatmulOptions {
  index_t panel = 0;
  std::vector<int> grid;
  std::optional<Tune> tune;
};
/// A tuner's candidate name of matmul options, "<rows>x<columns>/<panel>" ("2x2/auto", "4x1/256"),
/// and back (tune off; InvalidArgument for a name that is not one).
std::string candidate_name(const MatmulOptions& o);
MatmulOptions matmul_candidate(const std::string& name);

/// op_a(a) @ op_b(b) of 2-D arrays (SUMMA, see above).
template <class T>
Array<T, 2> matmul(const Array<T, 2>& a, const Array<T, 2>& b, Op op_a = Op::none, Op op_b = Op::none,
                   const MatmulOptions& opt = {});
/// Batched: a {batch,m,k} @ b {batch,k,n} -> {batch,m,n}, batch split over a 1-D grid.
template <class T>
Array<T, 3> matmul(const Array<T, 3>& a, const Array<T, 3>& b, Op op_a = Op::none, Op op_b = Op::none);
/// a {m,n} @ x {n} -> {m}, a's rows over a 1-D grid.
template <class T>
Array<T, 1> matvec(const Array<T, 2>& a, const Array<T, 1>& x);

}  // namespace tessera::distributed
