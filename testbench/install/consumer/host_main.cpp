// Links naa::host from the installed package and names one of its errors: enough to prove the
// headers, the static library and its dependencies (Threads, rdma-core when built) resolve.
#include <cstdio>

#include "naa/host/error.hpp"

int main() {
  const std::error_code ec = naa::host::make_error_code(naa::host::Errc::connection_refused);
  std::printf("host=%s\n", ec.category().name());
  return ec ? 0 : 1;
}
