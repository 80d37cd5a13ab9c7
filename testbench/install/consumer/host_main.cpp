// Links naa::host from the installed package, names one of its errors and parses a fault spec:
// enough to prove the headers, the static library and its dependencies (naa::impair, Threads,
// rdma-core when built) resolve.
#include <cstdio>

#include "naa/host/error.hpp"
#include "naa/host/udp_roce.hpp"

int main() {
  const std::error_code ec = naa::host::make_error_code(naa::host::Errc::connection_refused);
  naa::host::FaultOptions faults;
  const bool parsed = naa::host::parse_fault_options("loss=0.5,reorder-delay=2", faults);
  std::printf("host=%s faults=%s\n", ec.category().name(),
              parsed && faults.loss == 0.5 && faults.reorder_delay == 2 ? "ok" : "bad");
  return ec && parsed ? 0 : 1;
}
