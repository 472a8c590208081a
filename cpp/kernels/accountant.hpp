// Python-free kernels of the certified FFT accountant (docs/accountant.md §3-§4; the Python side
// is python/sharpdp/shuffle/_lattice.py, which computes the law's cell statistics and calls
// scipy.fft between these steps). Arrays are caller-allocated, plain pointers and sizes; errors
// are thrown as std::invalid_argument or std::domain_error (ValueError in Python). Each bound is
// derived in the docs section named at the function.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

namespace sharpdp {
namespace kernels {

// Fine cells of a law on [x0, x0 + ncells h/J]: mass m_i, local moment w_i = E[(L - x_i)/(h/J); cell i]
// and their absolute error bounds em_i, ew_i (arrays of length ncells).
struct Cells {
  const double* m;
  const double* w;
  const double* em;
  const double* ew;
  std::size_t ncells;
};

// The clamp atoms at node 0 (mass below x0) and node K (mass above x0 + K h), with error bounds.
struct ClampAtoms {
  double lo_mass, lo_err, hi_mass, hi_err;
};

// K = ncells / J, the number of lattice steps; throws std::invalid_argument (naming `who`) unless
// J >= 1 divides ncells.
std::size_t lattice_size(std::size_t ncells, std::int64_t J, const char* who);

// Hat-rounding upper lattice law (docs/accountant.md §3.2): psi, eta of length K + 1.
void assemble(const Cells& cells, std::int64_t J, const ClampAtoms& atoms, double* psi, double* eta);

// Convex-order lower lattice law, "centroid on the lattice" (docs/accountant.md §4.2): psi, eta and
// the moment-error bounds mom_err (lattice units), each of length K + 1. down: sweep from the top.
void lower_lattice(const Cells& cells, std::int64_t J, const ClampAtoms& atoms, bool down, double* psi,
                   double* eta, double* mom_err);

// log sum_k g_k exp(lam (k0 + k) h) (L) and its first two derivatives in lam (mean d1, variance d2);
// err >= |L - the exact value| for the stored g and exact nodes (k0 + k) h (docs/accountant.md §3.5.1;
// +inf when the bound's conditions fail).
struct Mgf {
  double L, d1, d2, err;
};
Mgf log_mgf(const double* g, std::size_t K, std::int64_t k0, double h, double lam);

// theta >= theta_floor with Lambda'(theta) = 0 if that root exceeds the floor (docs/accountant.md §3.4);
// std::domain_error when g has no positive mass.
double solve_theta(const double* g, std::size_t K, std::int64_t k0, double h, double theta_floor);

// Tilted pmf (written to out, length K) and its certified summaries (docs/accountant.md §3.6.1).
struct Tilt {
  double log_mgf;  // Lambda(theta)
  double mean, var;  // tilted mean and variance (per user)
  double tau;  // sum of the tilted pmf error bounds, rounding of the tilt included
  double mass;  // computed tilted mass, rounded up by its relative error bound
};
Tilt tilt(const double* g, const double* eta, std::size_t K, std::int64_t k0, double h, double theta, double* out);

// Smallest edge b certified by one Chernoff bound on the n-fold sum of gt (docs/accountant.md §3.5):
// P(S >= b) <= exp(log_target) (dir = +1) or P(S <= b) <= exp(log_target) (dir = -1).
double chernoff_edge(const double* gt, std::size_t K, std::int64_t k0, double h, double n, double log_target,
                     int dir, double lam_scale);
// The same edge and a proven allowance a: the computed b satisfies P(S >= b) <= exp(log_target + a)
// (dir = +1; P(S <= b) for dir = -1) for the stored gt, rounding of the exponent included (§3.5.1).
struct ChernoffEdge {
  double edge, allowance;
};
ChernoffEdge chernoff_edge_bound(const double* gt, std::size_t K, std::int64_t k0, double h, double n,
                                 double log_target, int dir, double lam_scale);

// How many of ``count`` fixed points z of glibc clog's x^2 + y^2 - 1 branch give another complex logarithm in the
// power step's clog_same than std::log (0 on the platforms where it runs: docs/accountant_tail.md §42.1).
std::size_t clog_same_mismatches(std::size_t count);

// The power step's accurate DFT in AVX2 lanes where this CPU has AVX2 (docs/accountant_tail.md §67.1; the same
// doubles as the plain path): on != 0 allows it (the default), 0 forces the plain path. Returns whether the AVX2 path
// now runs (false on other CPUs and builds).
bool set_dft_simd(int on);

// x - 4u |x| - 1e-300 (upward false) or x + 4u |x| + 1e-300 (upward true) at each of n doubles, u = 2^-53: the
// closed form's rounding helpers mgf.dn / mgf.up (docs/accountant_tail.md §18 (h)) in one pass over the array, the
// same IEEE operations on the same operands in the same order as numpy's t = |x|, t *= 4u, t = x -+ t, t -+= 1e-300
// (docs/accountant_tail.md §71.3; this file is built with -ffp-contract=off: no product fused into the sum).
void round_out(const double* x, std::size_t n, double* out, bool upward);

// Power step Q = exp(n Log z) per frequency with its error bound (docs/accountant.md §3.6.3-3.6.4).
// z, out: length M (rfft of the folded tilted pmf y of length N); e: the FFT's componentwise bound.
struct Power {
  double err_norm;  // l2 norm over the full (Hermitian) spectrum of the bound on |Q~ - Q|
  double q_norm;  // l2 norm of Q~
  std::int64_t recomputed;  // frequencies recomputed by the accurate DFT
};
Power power(const std::complex<double>* z, std::size_t M, double n, double e, std::int64_t N, const double* y,
            double thr, double max_work, std::complex<double>* out);

// z[0..K] of the folded pmf y (N entries) by blocks with a Taylor expansion of the phase (docs/accountant_tail.md
// §72.2); returns e >= |z~_k - z_k| for every k <= K (complex modulus; +inf where the expansion does not apply).
double dft_low(const double* y, std::int64_t N, std::int64_t K, std::complex<double>* z);

// Sums over the window {sa, ..., sa + N - 1} of the circular n-fold pmf q (length N; position r
// holds s = n k0 + r mod N), docs/accountant.md §3.6.2:
//   E = sum_{s>0} s h e^{-theta s h} q(s), fnorm = ||s_+ h e^{-theta s h}||_2, Ea = sum |terms|,
//   gap, gnorm, ga: the same with weights Psi((|s h| - t)_+) (v > 0 only; 0 otherwise).
struct WindowSums {
  double E, fnorm, gap, gnorm, Ea, ga;
};
WindowSums window_sums(const double* q, std::size_t N, std::int64_t nk0, std::int64_t sa, double h, double theta,
                       double t, double v);

}  // namespace kernels
}  // namespace sharpdp
