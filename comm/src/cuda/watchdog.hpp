// The watchdog: one thread per process that follows enqueued device collectives (an event
// recorded after each) and NCCL's asynchronous errors, and fails the group (aborting its NCCL
// communicators) when a collective misses its deadline or NCCL reports an error.
#pragma once
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <functional>
#include <string>
#include <vector>

#include "../detail/state.hpp"

namespace tessera::comm::detail {

// Records an event on `stream` after a collective was enqueued there and follows it.
void watchdog_follow(ProcessGroup::State& st, int device, cudaStream_t stream, const Call& c);
// Waits (until the group's deadline) for the group's followed work and stops following it.
// Returns false if some of it did not finish.
bool watchdog_drain(ProcessGroup::State& st);
// A group whose NCCL communicator reported an asynchronous error (a peer died, the network).
struct AsyncFailure {
  ProcessGroup::State* st;
  std::string error;
};
// Each scan also calls `poll` (under the watchdog's lock; the NCCL transport checks its
// communicators there) and fails each group it returns, naming the oldest collective of the group
// it follows: what that group's ranks wait in.
void watchdog_set_poll(std::function<std::vector<AsyncFailure>()> poll);
// The same for failures found outside the watchdog's scans.
void watchdog_fail_async(const std::vector<AsyncFailure>& failures);
void watchdog_stop();

}  // namespace tessera::comm::detail
