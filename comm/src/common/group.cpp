// comm::Group: one thread-local nesting level. Host work is collected as MPI requests and waited
// for together at the outermost end; device work is one ncclGroupStart/End.
#include <exception>

#include "../detail/state.hpp"

namespace tessera::comm {

namespace detail {
struct GroupWork {
  struct Item {
    ProcessGroup::State* st;  // the program keeps its groups alive across the Group
    Call call;
    MpiPending pending;
  };
  std::vector<Item> items;
};

namespace {
thread_local int depth = 0;
thread_local GroupWork work;
}  // namespace

int group_depth() { return depth; }

void group_add_mpi(ProcessGroup::State& st, const Call& c, MpiPending&& p) {
  work.items.push_back({&st, c, std::move(p)});
}
}  // namespace detail

Group::Group() : uncaught_(std::uncaught_exceptions()) {
  if (detail::depth++ == 0) detail::work.items.clear();
}

void Group::end() {
  if (ended_) return;
  ended_ = true;
  if (--detail::depth > 0) return;
  detail::nccl_group_end();  // launches the device work, if any
  auto items = std::move(detail::work.items);
  detail::work.items.clear();
  const auto start = Clock::now();
  for (auto& it : items) {  // each group's requests under its own deadline, from the group's end
    const auto deadline =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(it.st->timeout.load()));
    if (!detail::mpi_wait_until(it.pending.requests, deadline, *it.st, it.call))
      detail::mpi_timed_out(*it.st, it.call, it.pending.requests, start);
  }
  for (auto& it : items)
    for (auto& f : it.pending.after) f();
}

Group::~Group() noexcept(false) {
  if (ended_) return;
  if (std::uncaught_exceptions() > uncaught_) {
    // Unwinding: close the group without waiting, and keep the exception that is in flight.
    try {
      ended_ = true;
      if (--detail::depth > 0) return;
      detail::nccl_group_end();
      // Requests already posted cannot be freed (MPI forbids it for collectives): park them.
      for (auto& it : detail::work.items) {
        std::lock_guard<std::mutex> lock(it.st->mu);
        it.st->orphans.insert(it.st->orphans.end(), it.pending.requests.begin(), it.pending.requests.end());
      }
      detail::work.items.clear();
    } catch (...) {
    }
    return;
  }
  end();
}

}  // namespace tessera::comm
