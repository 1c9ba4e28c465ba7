// SlicePlotter: plot_slice.py run through popen (glibc spawns it with posix_spawn, which suits
// an MPI process holding pinned and device memory), on rank 0 only.
#include "slice_plot.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <tessera/io/error.hpp>

#ifndef HEAT3D_PYTHON
#define HEAT3D_PYTHON "python3"
#endif

namespace heat3d {

namespace {

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command; its output (stdout and stderr) in *out, its exit status (-1: none).
int run(const std::string& command, std::string* out) {
  out->clear();
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) *out += buf;
  const int status = pclose(p);
  return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// An installed heat3d finds the script under its prefix's share/; a build-tree one in the sources.
std::string find_script() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = (exe.parent_path() / HEAT3D_PLOT_SCRIPT_FROM_BIN).lexically_normal();
    if (std::filesystem::is_regular_file(installed, ec)) return installed.string();
  }
  if (std::filesystem::is_regular_file(HEAT3D_PLOT_SCRIPT, ec)) return HEAT3D_PLOT_SCRIPT;
  return {};
}

std::string json_string(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace

void write_slice_info(const std::string& path, const SliceInfo& info) {
  char num[3][32];
  for (int a = 0; a < 3; ++a) std::snprintf(num[a], sizeof num[a], "%.17g", info.lengths[a]);
  char time[32];
  std::snprintf(time, sizeof time, "%.17g", info.time);
  std::ofstream f(path, std::ios::trunc);
  f << "{\"program\": \"heat3d\", \"quantity\": \"u\", \"step\": " << info.step << ", \"time\": " << time
    << ", \"shape\": [" << info.shape[0] << ", " << info.shape[1] << ", " << info.shape[2] << "], \"dtype\": "
    << json_string(info.dtype) << ", \"axis\": " << info.axis << ", \"index\": " << info.index << ", \"lengths\": ["
    << num[0] << ", " << num[1] << ", " << num[2] << "], \"colormap\": " << json_string(info.colour_map) << "}\n";
  f.close();
  if (!f) throw tessera::io::IoError("heat3d: cannot write " + path);
}

SlicePlotter SlicePlotter::probe() {
  SlicePlotter p;
  p.python_ = HEAT3D_PYTHON;
  p.script_ = find_script();
  if (p.script_.empty()) {
    p.why_not_ = std::string("plot_slice.py not found (looked beside the binary and in ") + HEAT3D_PLOT_SCRIPT + ")";
    return p;
  }
  std::string out;
  const int rc = run(shell_quoted(p.python_) + " " + shell_quoted(p.script_) + " --probe", &out);
  p.usable_ = rc == 0;
  if (!p.usable_) {
    const auto eol = out.find('\n');
    p.why_not_ = out.empty() ? p.python_ + " did not run (exit " + std::to_string(rc) + ")" : out.substr(0, eol);
  }
  return p;
}

bool SlicePlotter::draw() {
  if (pending_.empty()) return true;
  std::string command = shell_quoted(python_) + " " + shell_quoted(script_);
  for (const auto& s : pending_) command += " " + shell_quoted(s);
  std::string out;
  const int rc = run(command, &out);
  std::fputs(out.c_str(), rc == 0 ? stdout : stderr);
  if (rc != 0)
    std::fprintf(stderr, "heat3d: plot_slice.py failed (exit %d): %zu PNG slice(s) not drawn; the slices' data are there\n",
                 rc, pending_.size());
  pending_.clear();
  return rc == 0;
}

}  // namespace heat3d
