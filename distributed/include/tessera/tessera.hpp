// The umbrella header: every public header of Tessera (a test checks that none is missing); link
// tessera::tessera (the io headers need tessera::io).
// Fused expressions on GPU arrays are evaluated in one kernel in translation units compiled by
// nvcc; plain C++ evaluates them on host arrays (and uses the precompiled operations otherwise).
#pragma once
#include "tessera/config.hpp"
// local: settings, context, devices, memory, local arrays and kernels
#include "tessera/local/config.hpp"
#include "tessera/local/settings.hpp"
#include "tessera/local/hd.hpp"
#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/self_test.hpp"
#include "tessera/local/dtype.hpp"
#include "tessera/local/element_types.hpp"
#include "tessera/local/stream.hpp"
#include "tessera/local/context.hpp"
#include "tessera/local/context_cache.hpp"
#include "tessera/local/memory.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/expr/tree.hpp"
#include "tessera/local/expr/host_executor.hpp"
#include "tessera/local/jit/ir.hpp"
#include "tessera/local/jit/compiler.hpp"
#include "tessera/local/jit/lower.hpp"
#include "tessera/local/jit/string_kernel.hpp"
#include "tessera/local/expr.hpp"
#include "tessera/local/reduce.hpp"
#include "tessera/local/philox.hpp"
#include "tessera/local/random.hpp"
#include "tessera/local/fft_plan.hpp"
#if TESSERA_HAVE_CUDA
#include "tessera/local/cuda_check.hpp"
#endif
// comm: the runtime and process groups
#include "tessera/comm/error.hpp"
#include "tessera/comm/settings.hpp"
#include "tessera/comm/transport.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/comm/parallel_file.hpp"
#include "tessera/comm/runtime.hpp"
#if TESSERA_HAVE_NCCL
#include "tessera/comm/nccl_check.hpp"
#endif
// distributed: layouts, sharded arrays, the exchange and what is built on it
#include "tessera/distributed/settings.hpp"
#include "tessera/distributed/box.hpp"
#include "tessera/distributed/grid.hpp"
#include "tessera/distributed/layout.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/distributed/array.hpp"
#include "tessera/distributed/creation.hpp"
#include "tessera/distributed/elementwise.hpp"
#include "tessera/distributed/reduce.hpp"
#include "tessera/distributed/exchange.hpp"
#include "tessera/distributed/redistribute.hpp"
#include "tessera/distributed/halo.hpp"
#include "tessera/distributed/linalg.hpp"
#include "tessera/distributed/algorithms.hpp"
#include "tessera/fft/fft.hpp"
// io (tessera::io)
#include "tessera/io/error.hpp"
#include "tessera/io/settings.hpp"
#include "tessera/io/npy.hpp"
#include "tessera/io/zarr.hpp"
#include "tessera/io/checkpoint.hpp"
#include "tessera/io/hdf5.hpp"
