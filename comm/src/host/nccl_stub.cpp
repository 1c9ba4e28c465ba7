// Builds without NCCL: device buffers always take the MPI transport.
#include "../detail/state.hpp"

namespace tessera::comm::detail {

using State = ProcessGroup::State;

namespace {
[[noreturn]] void no_nccl() { throw BackendUnavailable("this Tessera was built without NCCL"); }
}  // namespace

bool nccl_usable(State& st, const Device&) { return mpi_all_reduce_min(st, 0, "NCCL availability agreement") == 1; }
void nccl_all_reduce(State&, const Call&, const void*, void*, ReduceOp, const Stream&) { no_nccl(); }
void nccl_reduce(State&, const Call&, const void*, void*, ReduceOp, int, const Stream&) { no_nccl(); }
void nccl_broadcast(State&, const Call&, const void*, void*, int, const Stream&) { no_nccl(); }
void nccl_all_gather(State&, const Call&, const void*, void*, const Stream&) { no_nccl(); }
void nccl_reduce_scatter(State&, const Call&, const void*, void*, ReduceOp, const Stream&) { no_nccl(); }
void nccl_transfers(State&, const Call&, const std::vector<Transfer>&, const Stream&, std::shared_ptr<void>) {
  no_nccl();
}
void nccl_all_to_all(State&, const Call&, const void*, void*, const Stream&) { no_nccl(); }
bool nccl_symmetric_windows() { return false; }
std::shared_ptr<void> nccl_symmetric_buffer(const std::shared_ptr<State>&, std::size_t, const Device&) { no_nccl(); }
void nccl_prepare(State&, const Device&) {}
void nccl_group_end() {}
void device_wait(State&, const Stream& s) { s.synchronize(); }
void nccl_abort(State&) {}
void nccl_fail_every_group(const std::string&) {}
void nccl_release(State&) {}
void nccl_shutdown() {}

}  // namespace tessera::comm::detail
