// How device buffers travel between ranks: the project's one transport vocabulary. The exchange
// engine takes any of them (TESSERA_TRANSPORT, ExchangeOptions::transport); a group's own device
// path is nccl or mpi (ProcessGroup::device_transport). The classes that move the bytes are
// distributed's ExchangeTransports, one per value.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::comm {

/// automatic: by size and placement (docs/runtime-and-collectives.md, Exchange transports);
/// nccl: NCCL's grouped sends and receives; nccl_window: NCCL symmetric windows; ipc: CUDA IPC with
/// copy engines within a node; mpi: MPI, CUDA-aware where the MPI is, else staged through pinned
/// host memory. Host buffers always use MPI.
enum class Transport { automatic, nccl, nccl_window, ipc, mpi };
/// Their names, in the enum's order (as TESSERA_TRANSPORT spells them).
inline constexpr std::array<std::string_view, 5> transport_names{"auto", "nccl", "nccl-window", "ipc", "mpi"};
/// "auto", "nccl", "nccl-window", "ipc" or "mpi".
std::string transport_name(Transport t);
/// The transport of that name; nothing for an unknown one.
std::optional<Transport> transport_from_name(std::string_view name);

}  // namespace tessera::comm
