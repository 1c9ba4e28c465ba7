// The umbrella header: everything a Tessera program uses.
#pragma once
#include "tessera/config.hpp"
#include "tessera/local/device.hpp"
#include "tessera/local/error.hpp"
#include "tessera/local/self_test.hpp"
#include "tessera/comm/error.hpp"
#include "tessera/comm/process_group.hpp"
#include "tessera/comm/runtime.hpp"
