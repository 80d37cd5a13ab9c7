// What a piece of code prints on stdout, for tests that check Verilator's messages: a failed
// assertion of a block Verilated with --assert prints "... Assertion failed in <scope>: <message>"
// there (each message of the blocks' SVA checkers starts "<checker> <assertion>:").
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace naa::testbench::rtl {

inline std::string captured_stdout(const std::function<void()>& body) {
  std::fflush(stdout);
  char path[] = "/tmp/naa-stdout-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("captured_stdout: mkstemp failed");
  const int saved = dup(1);
  dup2(fd, 1);
  body();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

}  // namespace naa::testbench::rtl
