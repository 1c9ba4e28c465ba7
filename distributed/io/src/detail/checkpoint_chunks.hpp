// The default chunk shape of a checkpointed field (checkpoint.cpp; tested on its own).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/distributed/box.hpp"

namespace tessera::io::detail {

// The largest block any rank holds (one chunk per block for most layouts), halved along its
// longest axis while over 64 MiB. blocks: every rank's.
std::vector<std::int64_t> checkpoint_chunks(const std::vector<distributed::DynBox>& blocks, std::size_t elem);

}  // namespace tessera::io::detail
