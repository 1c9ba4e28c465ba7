// The umbrella header: everything a Tessera program uses.
#pragma once
#include "tessera/config.hpp"
#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/self_test.hpp"
#include "tessera/local/dtype.hpp"
#include "tessera/local/stream.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/reduce.hpp"
#include "tessera/comm/error.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/comm/runtime.hpp"
#include "tessera/distributed/grid.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/distributed/array.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/distributed/reduce.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/distributed/halo.hpp"
// Fused expressions (local and distributed) need <tessera/distributed/elementwise.hpp>, and nvcc
// for GPU arrays.
