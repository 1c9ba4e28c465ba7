// A quick end-to-end check that a device runs code: fills n elements with 2*i + 1 by a kernel
// (or a loop on host), copies them back and verifies. Returns the number of wrong elements.
#pragma once
#include <cstddef>

#include "tessera/local/device.hpp"

namespace tessera {
/// Runs the check on `device`; returns the number of wrong elements (0: the device works).
std::size_t device_self_test(const Device& device, std::size_t n = 1 << 20);
}
