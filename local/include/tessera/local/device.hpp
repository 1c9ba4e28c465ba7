// Device: where an array lives. A runtime value, `host` or `cuda:i`, printable and comparable.
#pragma once
#include <compare>
#include <iosfwd>
#include <string>
#include <string_view>

namespace tessera {

/// What a Device is: the host or a CUDA GPU.
enum class DeviceKind : int { host = 0, cuda = 1 };

/// A device, `host` or `cuda:i`; comparable and printable.
class Device {
 public:
  /// The host.
  constexpr Device() = default;  // host
  /// The host, and CUDA device `index`.
  static constexpr Device host() { return Device(); }
  static constexpr Device cuda(int index) { return Device(DeviceKind::cuda, index); }
  /// Parses "host", "cpu", "cuda" (= cuda:0) or "cuda:N"; throws InvalidArgument otherwise.
  static Device parse(std::string_view text);

  /// The kind, the CUDA index (0 for host) and the kind tests.
  constexpr DeviceKind kind() const { return kind_; }
  constexpr int index() const { return index_; }
  constexpr bool is_host() const { return kind_ == DeviceKind::host; }
  constexpr bool is_cuda() const { return kind_ == DeviceKind::cuda; }
  /// "host" or "cuda:N".
  std::string str() const;

  /// Ordered by kind, then index.
  constexpr auto operator<=>(const Device&) const = default;

 private:
  constexpr Device(DeviceKind k, int i) : kind_(k), index_(i) {}
  DeviceKind kind_ = DeviceKind::host;
  int index_ = 0;
};

/// Writes d.str().
std::ostream& operator<<(std::ostream& os, const Device& d);

/// Number of CUDA devices this process sees: 0 in a build without CUDA, with no driver or no GPU.
int cuda_device_count() noexcept;
/// Human-readable name: "host (2 hardware threads)" or "NVIDIA H200 (cc 9.0, 139 GiB)".
std::string device_description(const Device& d);
/// The device of a rank with this node-local rank: cuda:(local_rank % visible GPUs), else host.
/// The one device-selection rule (the Runtime adds the TESSERA_DEVICE override).
Device device_for_local_rank(int local_rank);
/// Throws InvalidArgument / BackendUnavailable unless `d` can be used by this process.
void check_device_usable(const Device& d);
/// Makes `d` the calling thread's current CUDA device (no-op for host).
void make_current(const Device& d);

}  // namespace tessera
