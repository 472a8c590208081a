// pybind11 binding of the accountant kernels (kernels/accountant.hpp) as sharpdp._core.accountant.
// Converts numpy arrays to pointers and sizes, allocates the outputs, releases the GIL around the
// kernels; std::invalid_argument / std::domain_error become ValueError. Return shapes are those the
// Python engine (python/sharpdp/shuffle/_lattice.py) unpacks.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/accountant.hpp"
#include "kernels/lognormal_cells.hpp"
#include "kernels/pairwise_sums.hpp"
#include "kernels/stop_loss_chords.hpp"
#include "kernels/stop_loss_fill.hpp"
#include "kernels/two_atom.hpp"
#include "kernels/window_max.hpp"

namespace py = pybind11;
using Arr = py::array_t<double, py::array::c_style | py::array::forcecast>;
using CArr = py::array_t<std::complex<double>, py::array::c_style | py::array::forcecast>;

namespace sharpdp {
namespace {

std::size_t size0(const py::array& a) { return static_cast<std::size_t>(a.shape(0)); }

kernels::Cells cells(const Arr& m, const Arr& w, const Arr& em, const Arr& ew, const char* who) {
  const std::size_t NC = size0(m);
  if (size0(w) != NC || size0(em) != NC || size0(ew) != NC)
    throw std::invalid_argument(std::string(who) + ": cell arrays must have equal length, a multiple of J");
  return {m.data(), w.data(), em.data(), ew.data(), NC};
}

std::tuple<Arr, Arr> assemble(Arr m, Arr w, Arr em, Arr ew, double lo_mass, double lo_err, double hi_mass,
                              double hi_err, std::int64_t J) {
  const kernels::Cells c = cells(m, w, em, ew, "assemble");
  const auto K1 = static_cast<py::ssize_t>(kernels::lattice_size(c.ncells, J, "assemble") + 1);
  Arr psi(K1), eta(K1);
  double *p = psi.mutable_data(), *e = eta.mutable_data();
  {
    py::gil_scoped_release nogil;
    kernels::assemble(c, J, {lo_mass, lo_err, hi_mass, hi_err}, p, e);
  }
  return {psi, eta};
}

std::tuple<Arr, Arr, Arr> lower_lattice(Arr m, Arr w, Arr em, Arr ew, std::int64_t J, double lo_mass, double lo_err,
                                        double hi_mass, double hi_err, bool down) {
  const kernels::Cells c = cells(m, w, em, ew, "lower_lattice");
  const auto K1 = static_cast<py::ssize_t>(kernels::lattice_size(c.ncells, J, "lower_lattice") + 1);
  Arr psi(K1), eta(K1), merr(K1);
  double *p = psi.mutable_data(), *e = eta.mutable_data(), *me = merr.mutable_data();
  {
    py::gil_scoped_release nogil;
    kernels::lower_lattice(c, J, {lo_mass, lo_err, hi_mass, hi_err}, down, p, e, me);
  }
  return {psi, eta, merr};
}

double solve_theta(Arr g, std::int64_t k0, double h, double theta_floor) {
  const double* p = g.data();
  const std::size_t K = size0(g);
  py::gil_scoped_release nogil;
  return kernels::solve_theta(p, K, k0, h, theta_floor);
}

py::tuple tilt(Arr g, Arr eta, std::int64_t k0, double h, double theta) {
  if (size0(eta) != size0(g)) throw std::invalid_argument("tilt: g and eta must have equal length");
  Arr out(g.shape(0));
  double* o = out.mutable_data();
  const double *gp = g.data(), *ep = eta.data();
  const std::size_t K = size0(g);
  kernels::Tilt t;
  {
    py::gil_scoped_release nogil;
    t = kernels::tilt(gp, ep, K, k0, h, theta, o);
  }
  return py::make_tuple(out, t.log_mgf, t.mean, t.var, t.tau, t.mass);
}

py::tuple log_mgf(Arr g, std::int64_t k0, double h, double lam) {
  const double* gp = g.data();
  const std::size_t K = size0(g);
  kernels::Mgf r;
  {
    py::gil_scoped_release nogil;
    r = kernels::log_mgf(gp, K, k0, h, lam);
  }
  return py::make_tuple(r.L, r.d1, r.d2);
}

double chernoff_edge(Arr gt, std::int64_t k0, double h, double n, double log_target, int dir, double lam_scale) {
  const double* p = gt.data();
  const std::size_t K = size0(gt);
  py::gil_scoped_release nogil;
  return kernels::chernoff_edge(p, K, k0, h, n, log_target, dir, lam_scale);
}

py::tuple chernoff_edge_bound(Arr gt, std::int64_t k0, double h, double n, double log_target, int dir,
                              double lam_scale) {
  const double* p = gt.data();
  const std::size_t K = size0(gt);
  kernels::ChernoffEdge r;
  {
    py::gil_scoped_release nogil;
    r = kernels::chernoff_edge_bound(p, K, k0, h, n, log_target, dir, lam_scale);
  }
  return py::make_tuple(r.edge, r.allowance);
}

py::tuple power(CArr z, double n, double e, std::int64_t N, Arr y, double thr, double max_work) {
  if (N < 1 || static_cast<std::int64_t>(size0(y)) < N) throw std::invalid_argument("power: y must hold N entries");
  CArr out(z.shape(0));
  std::complex<double>* o = out.mutable_data();
  const std::complex<double>* zp = z.data();
  const double* yp = y.data();
  const std::size_t M = size0(z);
  kernels::Power r;
  {
    py::gil_scoped_release nogil;
    r = kernels::power(zp, M, n, e, N, yp, thr, max_work, o);
  }
  return py::make_tuple(out, r.err_norm, r.q_norm, r.recomputed);
}

py::tuple dft_low(Arr y, std::int64_t K) {
  const std::int64_t N = static_cast<std::int64_t>(size0(y));
  if (K < 0 || 2 * K > N) throw std::invalid_argument("dft_low: need 0 <= K <= N / 2");
  CArr out(K + 1);
  std::complex<double>* o = out.mutable_data();
  const double* yp = y.data();
  double e;
  {
    py::gil_scoped_release nogil;
    e = kernels::dft_low(yp, N, K, o);
  }
  return py::make_tuple(out, e);
}

py::tuple window_sums(Arr q, std::int64_t nk0, std::int64_t sa, double h, double theta, double t, double v) {
  const double* qp = q.data();
  const std::size_t N = size0(q);
  kernels::WindowSums r;
  {
    py::gil_scoped_release nogil;
    r = kernels::window_sums(qp, N, nk0, sa, h, theta, t, v);
  }
  return py::make_tuple(r.E, r.fnorm, r.gap, r.gnorm, r.Ea, r.ga);
}

// (sum w q, sum |w q|, sum w w) in numpy's pairwise order (docs/accountant_tail.md §80; the last 0.0 unless squares)
py::tuple weighted_sums(Arr w, Arr q, bool squares) {
  if (w.ndim() != 1 || q.ndim() != 1 || size0(q) != size0(w))
    throw std::invalid_argument("weighted_sums: w and q must be 1-D arrays of equal length");
  const std::size_t n = size0(w);
  const double *pw = w.data(), *pq = q.data();
  kernels::pairwise::Sums r;
  {
    py::gil_scoped_release nogil;
    r = kernels::pairwise::weighted_sums(pw, pq, n, squares);
  }
  return py::make_tuple(r.s, r.a, r.ss);
}

// the stop-loss grid's bracket between its evaluated nodes (jump.py's stop_loss_grid, the same doubles;
// docs/accountant_tail.md §80): (lo, up) on the k = idx[-1] + 1 nodes t0 + j dt
std::tuple<Arr, Arr> stop_loss_fill(double t0, double dt,
                                    py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> idx,
                                    Arr lo_c, Arr up_c, Arr pa, Arr ta) {
  if (idx.ndim() != 1 || lo_c.ndim() != 1 || up_c.ndim() != 1 || pa.ndim() != 1 || ta.ndim() != 1)
    throw std::invalid_argument("stop_loss_fill: idx, lo_c, up_c, pa, ta must be 1-D");
  const std::size_t m = size0(idx);
  if (m < 2 || size0(lo_c) != m || size0(up_c) != m || size0(pa) != m || size0(ta) != m)
    throw std::invalid_argument("stop_loss_fill: idx, lo_c, up_c, pa, ta need one equal length >= 2");
  const std::int64_t* pi = idx.data();
  if (pi[0] != 0) throw std::invalid_argument("stop_loss_fill: idx must start at 0");
  for (std::size_t i = 1; i < m; ++i)
    if (pi[i] <= pi[i - 1]) throw std::invalid_argument("stop_loss_fill: idx must be increasing");
  const auto k = static_cast<py::ssize_t>(pi[m - 1] + 1);
  Arr lo(k), up(k);
  const kernels::stop_loss_fill::Nodes nd{pi, lo_c.data(), up_c.data(), pa.data(), ta.data(), m};
  double *pl = lo.mutable_data(), *pu = up.mutable_data();
  {
    py::gil_scoped_release nogil;
    kernels::stop_loss_fill::fill(t0, dt, nd, pl, pu);
  }
  return {lo, up};
}

// (max w, min w, max w[:i0], max (w - (x - s0) c)[i0:]) as numpy's np.max / np.min (tv_weight.py; accountant_tail.md §80)
py::tuple window_maxima(Arr w, Arr x, std::int64_t i0, double s0, double c) {
  if (w.ndim() != 1 || x.ndim() != 1 || size0(x) != size0(w))
    throw std::invalid_argument("window_maxima: w and x must be 1-D arrays of equal length");
  const std::size_t n = size0(w);
  if (i0 < 0 || static_cast<std::size_t>(i0) > n) throw std::invalid_argument("window_maxima: need 0 <= i0 <= len(w)");
  const double *pw = w.data(), *px = x.data();
  kernels::window_max::Maxima r;
  {
    py::gil_scoped_release nogil;
    r = kernels::window_max::maxima(pw, px, n, static_cast<std::size_t>(i0), s0, c);
  }
  return py::make_tuple(r.w_max, r.w_min, r.below, r.above);
}

// the certified bracket of a two-atom law's D_up (docs/accountant_atoms.md §12): (lower, upper, charge,
// m_lo, m_hi, c_terms, ok); ok False: the start sum would need an unbounded walk (the caller falls back)
py::tuple two_atom_bracket(double a1, double a2, double p2, double gamma, std::int64_t n) {
  kernels::two_atom::Result r;
  {
    py::gil_scoped_release nogil;
    r = kernels::two_atom::bracket(a1, a2, p2, gamma, n);
  }
  return py::make_tuple(r.lower, r.upper, r.charge, r.m_lo, r.m_hi, r.c_terms, r.ok);
}

// the certified hat-lattice cells of a lognormal law (kernels/lognormal_cells.hpp, docs/accountant.md §2.3):
// (m, w, em, ew) of the cells k = 0..K-1 of the grid x0 + h k, weighted
// (rule != 0, e.g. True: the narrower cells by 2, 3 or 4 nodes, docs/accountant_tail.md §64.1)
std::tuple<Arr, Arr, Arr, Arr> lognormal_cells(double a, double G, double S, double r, double v_lo, double v_hi,
                                               double weight, double x0, double h, std::int64_t K, int rule) {
  const kernels::lognormal::Law law(a, G, S, r, v_lo, v_hi, weight, rule);
  kernels::lognormal::check_grid(x0, h, K);
  const auto n = static_cast<py::ssize_t>(K);
  Arr m(n), w(n), em(n), ew(n);
  double *pm = m.mutable_data(), *pw = w.mutable_data(), *pem = em.mutable_data(), *pew = ew.mutable_data();
  {
    py::gil_scoped_release nogil;
    law.cells(x0, h, 0, K, pm, pw, pem, pew);
  }
  return {m, w, em, ew};
}

// V where L = x, elementwise (the cells' edge formula), for an array x of any shape
Arr lognormal_v(double a, double G, double S, double r, Arr x) {
  const kernels::lognormal::Law law(a, G, S, r, -kernels::lognormal::kInf, kernels::lognormal::kInf, 1.0);
  Arr out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
  const double* px = x.data();
  double* po = out.mutable_data();
  const auto n = static_cast<std::size_t>(x.size());
  {
    py::gil_scoped_release nogil;
    for (std::size_t i = 0; i < n; ++i) po[i] = law.v(px[i]);
  }
  return out;
}

// lognormal_stop_loss where t has at least `least` (> 0) finite sorted thresholds: the kernel at every 32nd and the
// chords / secants between (docs/accountant_tail.md §71.1; gaps not within 1e-9 relative by the kernel too)
std::tuple<Arr, Arr> lognormal_stop_loss_chords(double a, double G, double S, double r, double v_lo, double v_hi,
                                                double weight, Arr t, std::size_t least) {
  const kernels::lognormal::Law law(a, G, S, r, v_lo, v_hi, weight);
  const auto n = static_cast<py::ssize_t>(t.size());
  Arr lo(n), up(n);
  const double* pt = t.data();
  double *pl = lo.mutable_data(), *pu = up.mutable_data();
  {
    py::gil_scoped_release nogil;
    const auto un = static_cast<std::size_t>(n);
    if (least > 0 && un >= least && kernels::chords::sorted_finite(pt, un)) {
      const auto exact = [&law](const double* x, std::size_t k, double* l, double* u) { law.stop_loss(x, k, l, u); };
      kernels::chords::chord_bracket(exact, pt, un, pl, pu, 32, 1e-9);
    } else {
      law.stop_loss(pt, un, pl, pu);
    }
  }
  return {lo, up};
}

// the bracket (lo, up) of E[(L - t)_+] at each threshold t, weighted
std::tuple<Arr, Arr> lognormal_stop_loss(double a, double G, double S, double r, double v_lo, double v_hi,
                                         double weight, Arr t) {
  return lognormal_stop_loss_chords(a, G, S, r, v_lo, v_hi, weight, t, 0);  // (least 0: the kernel at each t)
}

// P(z1 < Z < z2) on the small side with its error bound, elementwise over equal-shaped arrays
std::tuple<Arr, Arr> lognormal_interval_prob(Arr z1, Arr z2) {
  if (z1.ndim() != z2.ndim() || !std::equal(z1.shape(), z1.shape() + z1.ndim(), z2.shape()))
    throw std::invalid_argument("lognormal_interval_prob: z1 and z2 must have the same shape");
  const std::vector<py::ssize_t> shape(z1.shape(), z1.shape() + z1.ndim());
  Arr p(shape), e(shape);
  const double *a = z1.data(), *b = z2.data();
  double *pp = p.mutable_data(), *pe = e.mutable_data();
  const auto n = static_cast<std::size_t>(z1.size());
  {
    py::gil_scoped_release nogil;
    for (std::size_t i = 0; i < n; ++i) {
      const kernels::lognormal::Prob q = kernels::lognormal::interval_prob(a[i], b[i]);
      pp[i] = q.p;
      pe[i] = q.err;
    }
  }
  return {p, e};
}

std::tuple<double, double> lognormal_interval_prob1(double z1, double z2) {
  const kernels::lognormal::Prob q = kernels::lognormal::interval_prob(z1, z2);
  return {q.p, q.err};
}

// the same at one float (no array round trip: the scalar probabilities and tails)
double lognormal_v1(double a, double G, double S, double r, double x) {
  return kernels::lognormal::Law(a, G, S, r, -kernels::lognormal::kInf, kernels::lognormal::kInf, 1.0).v(x);
}

}  // namespace

void register_accountant(py::module_& m) {
  m.def("assemble", &assemble, "hat-rounding lattice pmf and its error bound");
  m.def("lower_lattice", &lower_lattice, "convex-order lower lattice pmf, its error bounds, moment error");
  m.def("solve_theta", &solve_theta, "tilt parameter (Lambda'(theta)=0, floored)");
  m.def("tilt", &tilt, "tilted pmf, Lambda, mean, variance, tau, mass bound");
  m.def("log_mgf", &log_mgf, "log-mgf of a lattice pmf and its first two derivatives");
  m.def("chernoff_edge", &chernoff_edge, "edge of the window certified by a Chernoff bound");
  m.def("chernoff_edge_bound", &chernoff_edge_bound,
        "chernoff_edge and the proven allowance a of its exponent: P(S beyond edge) <= exp(log_target + a)");
  m.def("power", &power, "z^n with its error bound");
  m.def("dft_low", &dft_low, py::arg("y"), py::arg("K"),
        "(z[0..K], e): the DFT of y's low frequencies by blocks with a Taylor expansion of the phase and a bound e on "
        "every |z~_k - z_k| (docs/accountant_tail.md §72.2)");
  m.def("set_dft_simd", [](bool on) { return kernels::set_dft_simd(on ? 1 : 0); },
        "allow (True, the default) or forbid the power step's accurate DFT in AVX2 lanes (the same doubles, "
        "docs/accountant_tail.md section 67.1); returns whether the AVX2 path runs");
  m.def("window_sums", &window_sums, "positive-part and gap sums over the window");
  m.def("weighted_sums", &weighted_sums, py::arg("w"), py::arg("q"), py::arg("squares"),
        "(sum w q, sum |w q|, sum w w) in numpy's pairwise order (docs/accountant_tail.md section 80)");
  m.def("window_maxima", &window_maxima, py::arg("w"), py::arg("x"), py::arg("i0"), py::arg("s0"), py::arg("c"),
        "(max w, min w, max w[:i0], max (w - (x - s0) c)[i0:]) as numpy's (accountant_tail.md section 80)");
  m.def("stop_loss_fill", &stop_loss_fill, py::arg("t0"), py::arg("dt"), py::arg("idx"), py::arg("lo_c"),
        py::arg("up_c"), py::arg("pa"), py::arg("ta"),
        "a stop-loss grid's bracket between its evaluated nodes (jump.py's stop_loss_grid; accountant_tail.md section 80)");
  m.def("two_atom_bracket", &two_atom_bracket,
        "certified bracket of D_up of a two-atom law in O(sqrt n) (docs/accountant_atoms.md section 12)");
  m.def("lognormal_cells",
        [](double a, double G, double S, double r, double v_lo, double v_hi, double weight, double x0, double h,
           std::int64_t K) { return lognormal_cells(a, G, S, r, v_lo, v_hi, weight, x0, h, K, 0); },
        "certified (m, w, em, ew) of a lognormal law's hat-lattice cells (docs/accountant.md section 2.3)");
  m.def("lognormal_cells", &lognormal_cells,
        "the same, the narrower cells by fewer nodes where rule != 0 (docs/accountant_tail.md section 64.1)");
  m.def("lognormal_stop_loss", &lognormal_stop_loss, "bracket of a lognormal law's E[(L - t)_+], elementwise");
  m.def("round_out",
        [](Arr x, bool upward) {
          Arr out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
          const double* px = x.data();
          double* po = out.mutable_data();
          const auto n = static_cast<std::size_t>(x.size());
          {
            py::gil_scoped_release nogil;
            kernels::round_out(px, n, po, upward);
          }
          return out;
        },
        "x -+ 4u |x| -+ 1e-300 elementwise, mgf.dn / mgf.up in one pass (accountant_tail.md §71.3)");
  m.def("lognormal_stop_loss_chords", &lognormal_stop_loss_chords,
        "lognormal_stop_loss, from `least` sorted thresholds on by chords between every 32nd (accountant_tail.md §71.1)");
  m.def("lognormal_interval_prob", &lognormal_interval_prob, "P(z1 < Z < z2) with its error bound, elementwise");
  m.def("lognormal_interval_prob1", &lognormal_interval_prob1, "P(z1 < Z < z2) with its error bound, one pair");
  m.def("lognormal_v", &lognormal_v, "V where a lognormal law's L = x, elementwise");
  m.def("lognormal_v1", &lognormal_v1, "V where a lognormal law's L = x, at one float");
  // session 48, gauss48: the cells' small-argument exp / expm1 (tests: Lemma 76.1 against mpmath)
  m.def(
      "lognormal_small_exp",
      [](Arr x, bool m1) {
        Arr out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
        const double* px = x.data();
        double* po = out.mutable_data();
        const auto n = static_cast<std::size_t>(x.size());
        for (std::size_t i = 0; i < n; ++i) {
          if (!kernels::lognormal::small_arg(px[i]))
            throw std::invalid_argument("lognormal_small_exp: |x| must be <= 2^-7 (kSmallArg)");
          po[i] = m1 ? kernels::lognormal::expm1_small(px[i]) : kernels::lognormal::exp_small(px[i]);
        }
        return out;
      },
      "exp (m1 False) or expm1 (m1 True) of |x| <= 2^-7 by the cells' polynomials, elementwise "
      "(accountant_tail.md section 76.1)");
}

}  // namespace sharpdp
