// Progress: which test `ember bench` runs, repetition k of r, on one stderr line
// (rewritten in place on a terminal, one line per step otherwise).
#ifndef EMBER_TOOLS_CLI_BENCH_PROGRESS_H_
#define EMBER_TOOLS_CLI_BENCH_PROGRESS_H_

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace ember::tools {

class Progress {
 public:
  Progress() : tty_(isatty(fileno(stderr))) {}
  ~Progress() { Done(); }
  void Show(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    char line[256];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof(line), format, args);
    va_end(args);
    if (tty_) {
      fprintf(stderr, "\r\033[Kember bench: %s", line);
      shown_ = true;
    } else {
      fprintf(stderr, "ember bench: %s\n", line);
    }
    fflush(stderr);
  }
  void Done() {
    if (shown_) fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool tty_;
  bool shown_ = false;
};

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_BENCH_PROGRESS_H_
