// pybind11 binding of the sampler kernels (kernels/samplers.hpp) as sharpdp._core.samplers.
// Arrays are converted here, the GIL is released around every kernel call, and the kernels'
// std::invalid_argument becomes ValueError.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>

#include "bind_key.hpp"
#include "kernels/common.hpp"
#include "kernels/lattice_privunit.hpp"
#include "kernels/samplers.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

using DArr = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IArr = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

using U64Arr = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;
using U32Arr = py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>;

py::array_t<double> empty_like_rows(const DArr& x) {
  if (x.ndim() != 2) throw std::invalid_argument("x must be 2-dimensional (n, dim)");
  return py::array_t<double>({x.shape(0), x.shape(1)});
}

// The CDT arrays of sharpdp._tables.CdtTable as a kernel table (views: the arrays must outlive it).
kernels::CdtTable cdt_table(const U64Arr& cdt_hi, const U64Arr& cdt_lo, const U32Arr& guide) {
  if (cdt_hi.ndim() != 1 || cdt_lo.ndim() != 1 || cdt_hi.shape(0) != cdt_lo.shape(0) || cdt_hi.shape(0) < 1)
    throw std::invalid_argument("cdt_hi, cdt_lo must be 1-dimensional of the same length >= 1");
  const auto ng = static_cast<std::size_t>(guide.ndim() == 1 ? guide.shape(0) : 0);
  int guide_bits = 0;
  while (guide_bits < 25 && (std::size_t{1} << guide_bits) < ng) ++guide_bits;
  if (ng < 2 || (std::size_t{1} << guide_bits) != ng) throw std::invalid_argument("guide must have 2^b entries, b >= 1");
  const auto size = static_cast<std::size_t>(cdt_hi.shape(0));
  for (std::size_t b = 0; b < ng; ++b)
    if (guide.data()[b] >= size) throw std::invalid_argument("guide entries must be < len(cdt_hi)");
  return kernels::CdtTable{cdt_hi.data(), cdt_lo.data(), size, guide.data(), guide_bits};
}

py::array_t<double> bmg_grid_sample(const DArr& x, std::uint64_t blanket_threshold, int grid_bits, double scale,
                                    const U64Arr& cdt_hi, const U64Arr& cdt_lo, const U32Arr& guide,
                                    const py::bytes& key_bytes, int threads, double max_norm2,
                                    std::uint64_t row_offset,
                                    std::uint64_t total_rows) {
  py::array_t<double> out = empty_like_rows(x);
  const kernels::CdtTable table = cdt_table(cdt_hi, cdt_lo, guide);
  const double* in = x.data();
  double* y = out.mutable_data();
  const auto n = static_cast<std::size_t>(x.shape(0)), d = static_cast<std::size_t>(x.shape(1));
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::bmg_grid_sample(in, n, d, blanket_threshold, grid_bits, scale, table, key, threads, max_norm2, y,
                             row_offset, total_rows);
  }
  return out;
}

py::array_t<double> grid_gaussian_sample(const DArr& w, int grid_bits, const U64Arr& cdt_hi, const U64Arr& cdt_lo,
                                         const U32Arr& guide, const py::bytes& key_bytes, int threads) {
  if (w.ndim() != 1) throw std::invalid_argument("w must be 1-dimensional");
  const kernels::CdtTable table = cdt_table(cdt_hi, cdt_lo, guide);
  const auto n = static_cast<std::size_t>(w.shape(0));
  py::array_t<double> out(static_cast<py::ssize_t>(n));
  const double* in = w.data();
  double* y = out.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::grid_gaussian_sample(in, n, grid_bits, table, key, threads, y);
  }
  return out;
}

py::array_t<double> bmg_sample_float_reference(const DArr& x, double gamma, double sigma0, const py::bytes& key_bytes,
                                               int threads, double max_norm2, std::uint64_t row_offset,
                                               std::uint64_t total_rows) {
  py::array_t<double> out = empty_like_rows(x);
  const double* in = x.data();
  double* y = out.mutable_data();
  const auto n = static_cast<std::size_t>(x.shape(0)), d = static_cast<std::size_t>(x.shape(1));
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::bmg_sample_float_reference(in, n, d, gamma, sigma0, key, threads, max_norm2, y, row_offset,
                                        total_rows);
  }
  return out;
}

py::array_t<std::uint64_t> keystream_words(const py::bytes& key_bytes, std::uint64_t stream, std::size_t count) {
  py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(count));
  std::uint64_t* y = out.mutable_data();
  const StreamKey key = stream_key(key_bytes);
  {
    py::gil_scoped_release release;
    kernels::keystream_words(key, stream, count, y);
  }
  return out;
}

py::array_t<double> standard_normals(std::size_t count, const py::bytes& key_bytes, int threads) {
  py::array_t<double> out(static_cast<py::ssize_t>(count));
  double* y = out.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::standard_normals(count, key, threads, y);
  }
  return out;
}

py::array_t<std::int64_t> krr_sample(const IArr& x, std::int64_t k, std::uint64_t keep_threshold, const py::bytes& key_bytes,
                                     int threads) {
  if (x.ndim() != 1) throw std::invalid_argument("x must be 1-dimensional");
  const auto n = static_cast<std::size_t>(x.shape(0));
  py::array_t<std::int64_t> out(static_cast<py::ssize_t>(n));
  const std::int64_t* in = x.data();
  std::int64_t* y = out.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::krr_sample(in, n, k, keep_threshold, key, threads, y);
  }
  return out;
}

py::array_t<double> sphere_complete(const DArr& v, const DArr& t, const py::bytes& key_bytes, int threads) {
  if (v.ndim() != 2) throw std::invalid_argument("x must be 2-dimensional");
  if (t.ndim() != 1 || t.shape(0) != v.shape(0)) throw std::invalid_argument("t must have shape (n,)");
  const auto n = static_cast<std::size_t>(v.shape(0)), d = static_cast<std::size_t>(v.shape(1));
  py::array_t<double> out({v.shape(0), v.shape(1)});
  const double* vin = v.data();
  const double* tin = t.data();
  double* y = out.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::sphere_complete(vin, tin, n, d, key, threads, y);
  }
  return out;
}

py::array_t<std::int64_t> finite_sample(const IArr& lo, const U64Arr& up, const U64Arr& cum, const IArr& last,
                                        const py::bytes& key_bytes, int threads) {
  if (lo.ndim() != 1 || up.ndim() != 1 || lo.shape(0) != up.shape(0))
    throw std::invalid_argument("lo, up must be 1-dimensional of the same length");
  if (cum.ndim() != 2 || last.ndim() != 1 || last.shape(0) != cum.shape(0))
    throw std::invalid_argument("cum must have shape (rows, m) and last shape (rows,)");
  const auto n = static_cast<std::size_t>(lo.shape(0));
  const auto rows = static_cast<std::size_t>(cum.shape(0)), m = static_cast<std::size_t>(cum.shape(1));
  py::array_t<std::int64_t> out(static_cast<py::ssize_t>(n));
  const std::int64_t* plo = lo.data();
  const std::uint64_t* pup = up.data();
  const std::uint64_t* pcum = cum.data();
  const std::int64_t* plast = last.data();
  std::int64_t* y = out.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::finite_sample(plo, pup, n, pcum, plast, rows, m, key, threads, y);
  }
  return out;
}

py::tuple lattice_privunit_sample(const DArr& x, std::uint64_t p_num, int p_exp, double theta, int scale_bits,
                                  const py::bytes& key_bytes, std::uint64_t stream0, int threads, std::size_t width,
                                  std::uint64_t max_proposals) {
  if (x.ndim() != 2) throw std::invalid_argument("x must be 2-dimensional (n, dim)");
  if (width < 1 || width > static_cast<std::size_t>(kernels::kLatticeLimbs))
    throw std::invalid_argument("width must be in [1, 96]");
  const auto n = static_cast<std::size_t>(x.shape(0)), d = static_cast<std::size_t>(x.shape(1));
  py::array_t<std::uint64_t> limbs({x.shape(0), x.shape(1), static_cast<py::ssize_t>(width)});
  py::array_t<std::int32_t> row_bits(x.shape(0));
  const double* in = x.data();
  std::uint64_t* out = limbs.mutable_data();
  std::int32_t* bits = row_bits.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::lattice_privunit_sample(in, n, d, p_num, p_exp, theta, scale_bits, key, stream0, threads, width, out,
                                     bits, max_proposals);
  }
  return py::make_tuple(limbs, row_bits);
}

}  // namespace

void register_samplers(py::module_& m) {
  m.attr("BLOCK_ROWS") = kSamplerBlockRows;
  m.def("bmg_grid_sample", &bmg_grid_sample, py::arg("x"), py::arg("blanket_threshold"), py::arg("grid_bits"),
        py::arg("scale"), py::arg("cdt_hi"), py::arg("cdt_lo"), py::arg("guide"), py::arg("key"),
        py::arg("threads") = 0, py::arg("max_norm2") = 1.0, py::arg("row_offset") = 0, py::arg("total_rows") = 0,
        "Blanket-mixed Gaussian messages on the grid 2^-grid_bits Z for the rows of x (n, dim) -> (n, dim) "
        "float64 (exact multiples of the grid step): blanket iff a 64-bit word < blanket_threshold, input "
        "stochastically rounded after scaling by `scale`, noise from the 128-bit CDT (cdt_hi, cdt_lo, guide) "
        "with a uniform sign. Raises ValueError if a row is not finite or has squared L2 norm > max_norm2. "
        "row_offset / total_rows: as for a slice of a larger table (docs/sampling.md §2).");
  m.def("grid_gaussian_sample", &grid_gaussian_sample, py::arg("w"), py::arg("grid_bits"), py::arg("cdt_hi"),
        py::arg("cdt_lo"), py::arg("guide"), py::arg("key"), py::arg("threads") = 0,
        "Whitened Gaussian release on the grid h Z, h = 2^-grid_bits (docs/sampling.md §9): w (n,) float64 -> "
        "(n,) float64 exact multiples of h, h (R_i + D_i) with R_i the stochastic rounding of w_i / h (one "
        "64-bit word) and D_i a rounded-Gaussian integer from the 128-bit CDT (cdt_hi, cdt_lo, guide; s = 1 / h) "
        "with a uniform sign; kSamplerBlockRows values per ChaCha20 stream. Raises ValueError if some "
        "|w_i| >= 2^(52 - grid_bits) or is not finite.");
  m.def("_bmg_sample_float_reference", &bmg_sample_float_reference, py::arg("x"), py::arg("gamma"),
        py::arg("sigma0"), py::arg("key"), py::arg("threads") = 0, py::arg("max_norm2") = 1.0,
        py::arg("row_offset") = 0, py::arg("total_rows") = 0,
        "TESTS AND BENCHMARKS ONLY, NOT A RELEASE SAMPLER: the former floating-point BMG sampler "
        "(sigma0 Z + (1 - B) x, ziggurat), whose low-order bits leak x (docs/sampling.md §2).");
  m.def("keystream_words", &keystream_words, py::arg("key"), py::arg("stream"), py::arg("count"),
        "The first count 64-bit words (little-endian) of ChaCha20 stream `stream` under the 32-byte key: "
        "the generator behind every sampler (for tests against an independent ChaCha20).");
  m.def("standard_normals", &standard_normals, py::arg("count"), py::arg("key"), py::arg("threads") = 0,
        "count standard normals (ziggurat), deterministic in seed for any thread count.");
  m.def("krr_sample", &krr_sample, py::arg("x"), py::arg("k"), py::arg("keep_threshold"), py::arg("key"),
        py::arg("threads") = 0,
        "k-ary randomized response on categories x in [0, k) (int64, shape (n,)), blanket form: keep x_i iff a "
        "64-bit word < keep_threshold, else a uniform category of [0, k) (exact, Lemire).");
  m.def("sphere_complete", &sphere_complete, py::arg("v"), py::arg("t"), py::arg("key"), py::arg("threads") = 0,
        "Y = t v + sqrt(1 - t^2) w, w uniform on the sphere orthogonal to v (rows of v unit).");
  m.def("finite_sample", &finite_sample, py::arg("lo"), py::arg("up"), py::arg("cum"), py::arg("last"),
        py::arg("key"), py::arg("threads") = 0,
        "Finite randomizer (docs/sampling.md §10): per value, row lo_i + [u < up_i] for a 64-bit word u, then "
        "the output index min{j < last[row] : v < cum[row, j]} (else last[row]) for a second word v: exact "
        "inverse CDF on 64-bit integer thresholds. lo (n,) int64, up (n,) uint64, cum (rows, m) uint64, last "
        "(rows,) int64 -> (n,) int64. Raises ValueError on a row index outside the table.");
  m.def("lattice_privunit_sample", &lattice_privunit_sample, py::arg("x"), py::arg("p_num"), py::arg("p_exp"),
        py::arg("theta"), py::arg("scale_bits"), py::arg("key"), py::arg("stream0"), py::arg("threads") = 0,
        py::arg("width") = 2, py::arg("max_proposals") = 0,
        "LatticePrivUnit's exact sampler (docs/sampling.md §10.6): message i of the rows of x (n, dim) float64 "
        "from ChaCha20 stream stream0 + i, p = p_num 2^-p_exp, theta in (-1, 1), sigma = 2^scale_bits. Returns "
        "(limbs, row_bits): limbs (n, dim, width) uint64, each entry in two's complement over `width` "
        "little-endian limbs; row_bits (n,) int32 the largest bit length of |z_ij| in the row, or -1 for a row "
        "not done (an intermediate beyond 6144 bits or an entry beyond `width` limbs: draw it with the "
        "reference, same stream), or -2 for a row abandoned after max_proposals proposed vectors (0: no cap). Raises ValueError on bad parameters or a zero or non-finite row.");
}

}  // namespace sharpdp
