// pybind11 binding of the sampler kernels (kernels/samplers.hpp) as sharpdp._core.samplers.
// Arrays are converted here, the GIL is released around every kernel call, and the kernels'
// std::invalid_argument becomes ValueError.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>

#include "bind_key.hpp"
#include "kernels/common.hpp"
#include "kernels/samplers.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

using DArr = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IArr = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

py::array_t<double> bmg_sample(const DArr& x, double gamma, double sigma0, const py::bytes& key_bytes, int threads,
                               double max_norm2, std::uint64_t row_offset, std::uint64_t total_rows) {
  if (x.ndim() != 2) throw std::invalid_argument("x must be 2-dimensional (n, dim)");
  py::array_t<double> out({x.shape(0), x.shape(1)});
  const double* in = x.data();
  double* y = out.mutable_data();
  const auto n = static_cast<std::size_t>(x.shape(0)), d = static_cast<std::size_t>(x.shape(1));
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::bmg_sample(in, n, d, gamma, sigma0, key, threads, max_norm2, y, row_offset, total_rows);
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

py::array_t<std::int64_t> krr_sample(const IArr& x, std::int64_t k, double p_keep, const py::bytes& key_bytes, int threads) {
  if (x.ndim() != 1) throw std::invalid_argument("x must be 1-dimensional");
  const auto n = static_cast<std::size_t>(x.shape(0));
  py::array_t<std::int64_t> out(static_cast<py::ssize_t>(n));
  const std::int64_t* in = x.data();
  std::int64_t* y = out.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release release;
    kernels::krr_sample(in, n, k, p_keep, key, threads, y);
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

}  // namespace

void register_samplers(py::module_& m) {
  m.attr("BLOCK_ROWS") = kSamplerBlockRows;
  m.def("bmg_sample", &bmg_sample, py::arg("x"), py::arg("gamma"), py::arg("sigma0"), py::arg("key"),
        py::arg("threads") = 0, py::arg("max_norm2") = 1.0, py::arg("row_offset") = 0,
        py::arg("total_rows") = 0,
        "Blanket-mixed Gaussian messages for the rows of x (n, dim) -> (n, dim) float64; raises "
        "ValueError if a row is not finite or has squared L2 norm > max_norm2. x may be the global "
        "rows [row_offset, row_offset + n) of a table of total_rows rows (0: row_offset + n): the "
        "messages are then those of one call on the whole table.");
  m.def("keystream_words", &keystream_words, py::arg("key"), py::arg("stream"), py::arg("count"),
        "The first count 64-bit words (little-endian) of ChaCha20 stream `stream` under the 32-byte key: "
        "the generator behind every sampler (for tests against an independent ChaCha20).");
  m.def("standard_normals", &standard_normals, py::arg("count"), py::arg("key"), py::arg("threads") = 0,
        "count standard normals (ziggurat), deterministic in seed for any thread count.");
  m.def("krr_sample", &krr_sample, py::arg("x"), py::arg("k"), py::arg("p_keep"), py::arg("key"),
        py::arg("threads") = 0, "k-ary randomized response on categories x in [0, k) (int64, shape (n,)).");
  m.def("sphere_complete", &sphere_complete, py::arg("v"), py::arg("t"), py::arg("key"), py::arg("threads") = 0,
        "Y = t v + sqrt(1 - t^2) w, w uniform on the sphere orthogonal to v (rows of v unit).");
}

}  // namespace sharpdp
