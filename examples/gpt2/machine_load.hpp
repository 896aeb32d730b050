// How much of the machine other processes took while this one was timing
// itself (Linux's /proc/stat and /proc/self/stat): the thread-collapse check
// (timing.hpp) cannot tell its own threads' fight from another process's
// load, which starves a step's threads the same way (measured on 2 cores:
// one OpenMP pool beside a compiler showed a layer norm 233x slower in the
// sequence than alone), so it judges only a machine left to it.
#pragma once

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

namespace gpt2 {

class MachineLoad {
 public:
  MachineLoad() : start_(now()) {}

  // The share of the machine's cores (0 to 1) that other processes kept
  // busy since construction (steal time, another guest's, included); -1
  // where /proc cannot say.
  double others() const {
    const Snapshot end = now();
    const double wall = end.wall - start_.wall;
    const double cores = double(std::thread::hardware_concurrency());
    if (start_.busy < 0 || end.busy < 0 || wall <= 0 || cores <= 0) return -1;
    const double others = (end.busy - start_.busy) - (end.self - start_.self);
    return others > 0 ? others / (wall * cores) : 0.0;
  }

 private:
  struct Snapshot {
    double wall = 0, busy = -1, self = 0;  // seconds
  };

  static Snapshot now() {
    Snapshot s;
    s.wall = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
                 .count();
    const double tick = double(sysconf(_SC_CLK_TCK));
    std::ifstream stat("/proc/stat");
    std::string cpu;
    // cpu user nice system idle iowait irq softirq steal ...
    double user, nice, system, idle, iowait, irq, softirq, steal = 0;
    if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq) ||
        cpu != "cpu")
      return s;
    stat >> steal;
    s.busy = (user + nice + system + irq + softirq + steal) / tick;
    // /proc/self/stat: utime and stime are fields 14 and 15, after the
    // command name in parentheses (which may hold spaces).
    std::ifstream self("/proc/self/stat");
    std::string line;
    std::getline(self, line);
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i < 14 && rest >> field; ++i) {
    }
    double utime = 0, stime = 0;
    rest >> utime >> stime;
    s.self = (utime + stime) / tick;
    return s;
  }

  Snapshot start_;
};

}  // namespace gpt2
