// Command-line helpers shared by the apps (heat3d, poisson): "N" or "nx,ny,nz" sizes, "px,py,pz"
// grids, and the dtype/device words. Bad input throws tessera::InvalidArgument.
#pragma once
#include <array>
#include <sstream>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

namespace apps {

// Comma-separated non-negative integers: "512" or "512,256,128".
inline std::vector<long long> parse_list(const std::string& text, const char* what) {
  std::vector<long long> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    long long x = -1;
    try {
      x = std::stoll(item, &used);
    } catch (const std::exception&) {
    }
    if (used != item.size() || item.empty() || x < 0)
      throw tessera::InvalidArgument(std::string("--") + what + " '" + text + "': expected comma-separated integers >= 0");
    v.push_back(x);
  }
  if (v.empty()) throw tessera::InvalidArgument(std::string("--") + what + " is empty");
  return v;
}

// "N" -> {N, N, N}; "nx,ny,nz" -> as given. Every extent >= min.
inline std::array<long long, 3> parse_shape3(const std::string& text, long long min) {
  auto v = parse_list(text, "n");
  if (v.size() == 1) v = {v[0], v[0], v[0]};
  if (v.size() != 3) throw tessera::InvalidArgument("--n '" + text + "': give N or nx,ny,nz");
  for (auto e : v)
    if (e < min) throw tessera::InvalidArgument("--n '" + text + "': every extent must be >= " + std::to_string(min));
  return {v[0], v[1], v[2]};
}

inline std::string shape_text(const std::array<long long, 3>& n) {
  return std::to_string(n[0]) + "," + std::to_string(n[1]) + "," + std::to_string(n[2]);
}

inline void check_dtype(const std::string& dtype) {
  if (dtype != "double" && dtype != "float")
    throw tessera::InvalidArgument("--dtype '" + dtype + "': expected double or float");
}

// --device: "auto" keeps the Runtime's choice (TESSERA_DEVICE or a GPU when present); "host" and
// "cuda" force the kind. "cuda" is the Runtime's GPU: the one device rule is tessera::select_device,
// so a Runtime on the host (no GPU visible, or TESSERA_DEVICE=host) refuses it.
inline tessera::Device pick_device(const std::string& word, const tessera::Runtime& rt) {
  if (word == "auto") return rt.device();
  if (word == "host" || word == "cpu") return tessera::Device::host();
  if (word == "cuda") {
    if (rt.device().is_cuda()) return rt.device();
    throw tessera::BackendUnavailable("--device cuda: the Runtime chose " + rt.device().str() +
                                      " (no GPU visible, a build without CUDA, or TESSERA_DEVICE)");
  }
  throw tessera::InvalidArgument("--device '" + word + "': expected auto, host or cuda");
}

}  // namespace apps
