// Host facts for `ember bench` (see host_info.h).
#include "tools/bench/host_info.h"

#include <sys/resource.h>
#include <sys/utsname.h>

#include <cstdio>
#include <ctime>
#include <fstream>

namespace ember::tools {

// Reads /proc/cpuinfo; uname for the machine.
std::string CpuInfo() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, hardware, part;
  while (std::getline(cpuinfo, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && !value.empty()) return value;
    if (key == "Hardware") hardware = value;
    if (key == "CPU part" && part.empty()) part = "CPU part " + value;
  }
  if (!hardware.empty()) return hardware;
  utsname name;
  const std::string machine = uname(&name) == 0 ? name.machine : "unknown";
  return part.empty() ? machine : machine + " " + part;
}

std::string UtcNow() {
  const time_t now = time(nullptr);
  tm utc;
  gmtime_r(&now, &utc);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

// /proc/self/clear_refs "5" resets VmHWM to the current RSS (Linux 4.0+).
bool ResetPeakRss() {
  FILE* f = fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

uint64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    unsigned long long kib;
    if (sscanf(line.c_str(), "VmHWM: %llu kB", &kib) == 1) return kib * 1024;
  }
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace ember::tools
