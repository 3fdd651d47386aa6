// Host facts for `ember bench` (see host_info.h).
#include "tools/bench/host_info.h"

#include <sys/resource.h>
#include <sys/utsname.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

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

uint64_t LastLevelCacheBytes(const std::string& cache_dir) {
  int best_level = 0;
  uint64_t best_bytes = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = cache_dir + "/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"),
        size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) break;
    if (type == "Instruction") continue;
    // "32768K", "2M", or bytes.
    unsigned long long value = 0;
    char unit = 0;
    if (sscanf(size.c_str(), "%llu%c", &value, &unit) < 1) continue;
    const uint64_t bytes = value << (unit == 'K'   ? 10
                                     : unit == 'M' ? 20
                                     : unit == 'G' ? 30
                                                   : 0);
    if (level > best_level || (level == best_level && bytes > best_bytes)) {
      best_level = level;
      best_bytes = bytes;
    }
  }
  return best_bytes;
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
