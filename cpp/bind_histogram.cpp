// pybind11 binding of the histogram kernel (kernels/histogram.hpp) as sharpdp._core.histogram.
// The GIL is released around the kernel; its std::invalid_argument becomes ValueError.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

#include "bind_key.hpp"
#include "kernels/histogram.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

py::array_t<double> release(const py::array_t<double, py::array::c_style | py::array::forcecast>& counts, double c,
                            double sigma, const py::bytes& key_bytes, bool integer, int threads) {
  const auto n = static_cast<std::size_t>(counts.size());
  py::array_t<double> out(counts.request().shape);
  const double* in = counts.data();
  double* res = out.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release nogil;
    kernels::shifted_log_release(in, n, c, sigma, key, integer, threads, res);
  }
  return out;
}

}  // namespace

void register_histogram(py::module_& m) {
  m.def("release", &release, py::arg("counts"), py::arg("c"), py::arg("sigma"), py::arg("key"),
        py::arg("integer") = false, py::arg("threads") = 0,
        "Shifted-log Gaussian release (count-dependent zCDP paper, eq. (4)), clipped at 0; integer=True adds "
        "mean-preserving stochastic rounding. counts: float64 array of non-negative integers. Its normals are "
        "those of sharpdp._core.samplers.standard_normals(counts.size, seed) when integer is False.");
}

}  // namespace sharpdp
