// The 256-bit stream key of the samplers, from the 32 bytes Python hands over
// (sharpdp._rng.core_key). Shared by the sampler and histogram bindings.
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "kernels/common.hpp"

namespace sharpdp {

inline StreamKey stream_key(const pybind11::bytes& key) {
  const std::string raw = key;
  if (raw.size() != 32)
    throw std::invalid_argument("key must be 32 bytes (a 256-bit ChaCha20 key), got " + std::to_string(raw.size()));
  return StreamKey::from_bytes(reinterpret_cast<const unsigned char*>(raw.data()));
}

}  // namespace sharpdp
