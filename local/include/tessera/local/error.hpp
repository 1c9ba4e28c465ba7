// The error hierarchy. Every message says what went wrong, where (rank, device) and why:
//   "shape mismatch in add: [512,512] vs [512,256] (rank 3, cuda:1)"
#pragma once
#include <stdexcept>
#include <optional>
#include <string>

#include "tessera/local/device.hpp"

namespace tessera {

/// The rank used in error messages: set by the Runtime from MPI; before that the launcher's rank
/// (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID), or -1 if unknown.
int process_rank() noexcept;
/// Sets the rank error messages name (the Runtime does this).
void set_process_rank(int rank) noexcept;
/// The device error messages name when the error has none of its own: the Runtime's device.
std::optional<Device> process_device() noexcept;
/// Sets (or, with nothing, clears) the device error messages name by default.
void set_process_device(std::optional<Device> device) noexcept;

/// The base of Tessera's exceptions: a message naming the rank and device where it happened.
class Error : public std::runtime_error {
 public:
  /// `what()` is `message` followed by " (rank r, <device>)": the device given, else the
  /// Runtime's; " (rank r)" when neither is known.
  explicit Error(const std::string& message);
  /// The same, naming `device`.
  Error(const std::string& message, const Device& device);
  /// The message without the " (rank r, <device>)" suffix, and the rank it names.
  const std::string& message() const noexcept { return message_; }
  int rank() const noexcept { return rank_; }

 private:
  std::string message_;
  int rank_;
};

/// A bad argument from the caller: sizes, indices, options.
class InvalidArgument : public Error { using Error::Error; };
/// Operands on different devices.
class DeviceMismatch : public Error { using Error::Error; };
/// Operands of incompatible shapes.
class ShapeMismatch : public Error { using Error::Error; };
/// An allocation that did not fit.
class OutOfMemory : public Error { using Error::Error; };
/// A backend (CUDA, NCCL) asked for but not built in or not usable here.
class BackendUnavailable : public Error { using Error::Error; };
/// A failed CUDA runtime/library call that is not sticky (sticky ones abort the process).
class CudaError : public Error {
 public:
  /// `message` with the CUDA error `code`, optionally naming `device`.
  CudaError(const std::string& message, int code) : Error(message), code_(code) {}
  CudaError(const std::string& message, int code, const Device& device)
      : Error(message, device), code_(code) {}
  /// The CUDA error code (a cudaError_t or library status value).
  int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace tessera
