// W translations of ONE class at once (SIMD across translations; the CPU
// pipeline's batched M2L, fmm/pipeline_impl.hpp): an expansion's math
// templates run on Lanes<T, W>, a value of W independent lanes, so every
// multiply-add of its operator is a W-wide vector operation with the same
// per-lane arithmetic as the scalar code (the reductions inside the math,
// which the compiler may not reorder, become W independent chains).
#pragma once

namespace gpufmm {
namespace fmm {

template <class T, int W>
struct Lanes {
  T v[W];
  Lanes() = default;
  Lanes(T s) {  // NOLINT: implicit broadcast, as the math writes T(0), T(1)
    for (int i = 0; i < W; ++i) v[i] = s;
  }
  Lanes& operator+=(const Lanes& o) {
    for (int i = 0; i < W; ++i) v[i] += o.v[i];
    return *this;
  }
  Lanes& operator-=(const Lanes& o) {
    for (int i = 0; i < W; ++i) v[i] -= o.v[i];
    return *this;
  }
  Lanes& operator*=(const Lanes& o) {
    for (int i = 0; i < W; ++i) v[i] *= o.v[i];
    return *this;
  }
  friend Lanes operator+(Lanes a, const Lanes& b) { return a += b; }
  friend Lanes operator-(Lanes a, const Lanes& b) { return a -= b; }
  friend Lanes operator*(Lanes a, const Lanes& b) { return a *= b; }
  friend Lanes operator-(Lanes a) {
    for (int i = 0; i < W; ++i) a.v[i] = -a.v[i];
    return a;
  }
};

// 32 bytes of lanes (4 doubles, 8 floats).
template <class C>
constexpr int kLanesOf = 32 / int(sizeof(C));

}  // namespace fmm
}  // namespace gpufmm
