// matmul (SUMMA), batched matmul and matvec against serial products of the gathered operands:
// uneven, empty and halo'd blocks, 1-D and 2-D grids, every op, small panels, k = 0.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "algo_test_util.hpp"
#include "device_test.hpp"
#include "tessera/distributed/linalg.hpp"
#include "tessera/distributed/redistribute.hpp"

namespace {
using namespace tessera;
using namespace tessera::distributed;
using namespace tessera::distributed::testing;
using comm::ProcessGroup;
using tessera::testing::DeviceTest;
using cf = std::complex<float>;
using cd = std::complex<double>;

template <class T> T val(index_t g, int salt) {
  const double re = std::sin(0.3 * double(g) + salt), im = std::cos(0.7 * double(g) - salt);
  if constexpr (std::is_same_v<T, cf> || std::is_same_v<T, cd>) return T(re, im);
  else return T(re);
}
template <class T> T conj_if(T v, bool c) {
  if constexpr (std::is_same_v<T, cf> || std::is_same_v<T, cd>) return c ? std::conj(v) : v;
  else return v;
}
template <class T> double tol() { return std::is_same_v<T, float> || std::is_same_v<T, cf> ? 1e-4 : 1e-11; }

// Layouts of a 2-D {r, c} operand: 2-D blocks (with halos), rows over a 1-D grid, uneven and
// skewed offsets, a 1 x p grid (the first operand's 2-D grid is the product's).
std::vector<Layout<2>> layouts2(index_t r, index_t c) {
  const auto world = tessera::testing::world();
  const int p = world.size();
  const ProcessGrid g1(world), g2 = ProcessGrid::balanced(world, 2);
  return {Layout<2>::block(g2, {r, c}), Layout<2>::block(g2, {r, c}, {1, 1}), Layout<2>(g1, {r, c}, {0, -1}),
          Layout<2>(g1, {r, c}, {-1, 0}, {std::vector<index_t>{0, r}, uneven(c, p)}, {0, 0}),
          Layout<2>(g1, {r, c}, {0, -1}, {skewed(r, p), std::vector<index_t>{0, c}}, {0, 0}),
          Layout<2>::block(ProcessGrid(world, {1, p}), {r, c}, {0, 1})};  // SUMMA on a 1 x p grid
}

// op(x) as a dense row-major {rows, cols} matrix from x's global {xr, xc} data.
template <class T>
std::vector<T> apply(const std::vector<T>& x, index_t xr, index_t xc, Op op) {
  if (op == Op::none) return x;
  std::vector<T> t(x.size());
  for (index_t i = 0; i < xr; ++i)
    for (index_t j = 0; j < xc; ++j) t[j * xr + i] = conj_if(x[i * xc + j], op == Op::conj_trans);
  return t;
}

template <class T>
void check_product(Device d, index_t m, index_t k, index_t n, Op oa, Op ob, index_t panel) {
  const index_t ar = oa == Op::none ? m : k, ac = oa == Op::none ? k : m;
  const index_t br = ob == Op::none ? k : n, bc = ob == Op::none ? n : k;
  const auto av = serial<T>(ar * ac, [](index_t g) { return val<T>(g, 1); });
  const auto bv = serial<T>(br * bc, [](index_t g) { return val<T>(g, 2); });
  const auto A = apply(av, ar, ac, oa), B = apply(bv, br, bc, ob);
  std::vector<T> ref(m * n, T(0));
  for (index_t i = 0; i < m; ++i)
    for (index_t l = 0; l < k; ++l)
      for (index_t j = 0; j < n; ++j) ref[i * n + j] += A[i * k + l] * B[l * n + j];
  const auto las = layouts2(ar, ac), lbs = layouts2(br, bc);
  for (std::size_t i = 0; i < las.size(); ++i) {
    const auto& la = las[i];
    const auto& lb = lbs[(i + 2) % lbs.size()];
    SCOPED_TRACE(la.str() + " @ " + lb.str());
    const auto a = filled<T>(la, d, [](index_t g) { return val<T>(g, 1); }, T(1e6));
    const auto b = filled<T>(lb, d, [](index_t g) { return val<T>(g, 2); }, T(-1e6));
    const auto c = matmul(a, b, oa, ob, MatmulOptions{panel});
    ASSERT_EQ(c.global_shape(), (Index<2>{m, n}));
    const auto got = gather_to_host(c);
    for (index_t e = 0; e < m * n; ++e)
      ASSERT_LE(std::abs(got[e] - ref[e]), tol<T>() * (1 + double(k))) << "element " << e;
  }
}

template <class K> class Linalg : public DeviceTest<K> {};
TYPED_TEST_SUITE(Linalg, tessera::testing::DeviceKinds, tessera::testing::DeviceKindNames);

TYPED_TEST(Linalg, MatmulRealOfEveryShapeAndOp) {
  const Device d = this->device();
  for (Op oa : {Op::none, Op::trans})
    for (Op ob : {Op::none, Op::trans}) {
      check_product<double>(d, 13, 11, 7, oa, ob, 0);
      check_product<float>(d, 5, 17, 9, oa, ob, 3);  // many small panels
    }
  check_product<double>(d, 1, 1, 1, Op::none, Op::none, 0);
  check_product<double>(d, 6, 0, 4, Op::none, Op::none, 0);  // k = 0: zeros
  check_product<double>(d, 0, 5, 3, Op::trans, Op::none, 0);  // an empty result
}

TYPED_TEST(Linalg, MatmulComplexWithConjugateTransposes) {
  const Device d = this->device();
  check_product<cd>(d, 9, 10, 6, Op::conj_trans, Op::none, 4);
  check_product<cd>(d, 9, 10, 6, Op::none, Op::conj_trans, 0);
  check_product<cf>(d, 7, 8, 5, Op::trans, Op::conj_trans, 2);
}

TYPED_TEST(Linalg, BatchedMatmulAndMatvec) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const index_t nb = 5, m = 4, k = 6, n = 3;
  const ProcessGrid g2 = ProcessGrid::balanced(world, 2);
  const auto a = filled<double>(Layout<3>::block(g2, {nb, m, k}), d, [](index_t g) { return val<double>(g, 1); });
  const auto b = filled<double>(Layout<3>(ProcessGrid(world), {nb, n, k}, {-1, 0, -1}), d,
                                [](index_t g) { return val<double>(g, 2); });
  const auto c = gather_to_host(matmul(a, b, Op::none, Op::trans));
  for (index_t q = 0; q < nb; ++q)
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        double r = 0;
        for (index_t l = 0; l < k; ++l) r += val<double>(q * m * k + i * k + l, 1) * val<double>(q * n * k + j * k + l, 2);
        ASSERT_NEAR(c[(q * m + i) * n + j], r, 1e-12) << q << "," << i << "," << j;
      }
  for (const auto& la : layouts2(11, 6)) {
    SCOPED_TRACE(la.str());
    const auto A = filled<cd>(la, d, [](index_t g) { return val<cd>(g, 3); });
    const auto x = filled<cd>(Layout<1>(ProcessGrid(world), {6}, {0}, {uneven(6, world.size())}, {0}), d,
                              [](index_t g) { return val<cd>(g, 4); });
    const auto y = gather_to_host(matvec(A, x));
    for (index_t i = 0; i < 11; ++i) {
      cd r = 0;
      for (index_t l = 0; l < 6; ++l) r += val<cd>(i * 6 + l, 3) * val<cd>(l, 4);
      ASSERT_NEAR(std::abs(y[i] - r), 0.0, 1e-12) << i;
    }
  }
}

TYPED_TEST(Linalg, MismatchedShapesThrowOnEveryRank) {
  const Device d = this->device();
  const auto world = tessera::testing::world();
  const auto a = filled<double>(Layout<2>::block(ProcessGrid(world), {4, 5}), d, [](index_t g) { return double(g); });
  const auto b = filled<double>(Layout<2>::block(ProcessGrid(world), {4, 3}), d, [](index_t g) { return double(g); });
  try {
    (void)matmul(a, b);
    FAIL() << "no exception";
  } catch (const ShapeMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("[4,5] @ [4,3]"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)matmul(a, b, Op::trans));  // [5,4] @ [4,3]
}

}  // namespace
