// The serial reference of the FFT tests: the DFT of one sequence, with phases computed in long
// double: radix 2 where the length is a power of two (n log n: the direct sum made these tests
// most of the sanitizer run's time at -O0), else the direct sum. Raw arrays, no std::complex:
// at -O0 each of its operators is a call.
#pragma once

#include <cmath>
#include <numbers>
#include <utility>
#include <vector>

namespace tessera::testing {

// (re, im) <- sum_j x_j exp(sign 2 pi i j k / n), unscaled; sign -1 forward, +1 backward. The
// phases are tabulated once per length and direction: make one and apply it to every sequence.
template <class F>
class ReferenceDft {
 public:
  ReferenceDft(long long n, int sign) : n_(n), wr_(n), wi_(n) {
    for (long long m = 0; m < n; ++m) {
      const long double phi = sign * 2 * std::numbers::pi_v<long double> * m / n;
      wr_[m] = static_cast<F>(std::cos(phi)), wi_[m] = static_cast<F>(std::sin(phi));
    }
  }

  void operator()(std::vector<F>& re, std::vector<F>& im) const {
    const long long n = n_;
    F *xr = re.data(), *xi = im.data();
    const F *cr = wr_.data(), *ci = wi_.data();
    if (n & (n - 1)) {
      const std::vector<F> tr = re, ti = im;
      for (long long k = 0; k < n; ++k) {
        F sr = 0, si = 0;
        for (long long j = 0, jk = 0; j < n; ++j, jk = (jk + k) % n) {
          sr += tr[j] * cr[jk] - ti[j] * ci[jk];
          si += tr[j] * ci[jk] + ti[j] * cr[jk];
        }
        xr[k] = sr, xi[k] = si;
      }
      return;
    }
    for (long long i = 1, j = 0; i < n; ++i) {  // bit-reversed order, then butterflies
      long long bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(xr[i], xr[j]), std::swap(xi[i], xi[j]);
    }
    for (long long len = 2; len <= n; len <<= 1) {
      const long long half = len / 2, step = n / len;
      for (long long i = 0; i < n; i += len)
        for (long long j = 0; j < half; ++j) {
          const F c = cr[j * step], s = ci[j * step];
          const long long u = i + j, v = u + half;
          const F tr = xr[v] * c - xi[v] * s, ti = xr[v] * s + xi[v] * c;
          xr[v] = xr[u] - tr, xi[v] = xi[u] - ti;
          xr[u] += tr, xi[u] += ti;
        }
    }
  }

 private:
  long long n_;
  std::vector<F> wr_, wi_;
};

}  // namespace tessera::testing
