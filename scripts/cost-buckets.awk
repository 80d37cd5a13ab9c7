# Own (exclusive) instructions per bucket, from `callgrind_annotate --inclusive=no --auto=no`:
# each function goes to one bucket by its name (issue 31, docs/performance-cost.md). Shared by
# cost-per-packet.sh (naa-cosim) and nop-cost.sh (naa-sim over UDP). Prints "bucket<TAB>count".
/PROGRAM TOTALS/ { next }
/^ *[0-9,]+ +\( *[0-9.]+%\) / {
  v = $1; gsub(",", "", v)
  # "N (P%)  file:function [object]": the function alone (file paths have no colon; they may
  # name other build folders, so they must not decide the bucket).
  f = $0
  sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", f)
  sub(/^[^:]*:/, "", f)
  sub(/ \[[^]]*\]$/, "", f)
  b = "other"
  # Verilated code first: its names (Vcrc32_w64___024root...) contain block names.
  if (f ~ /^V[A-Za-z_0-9]+___024|^V[A-Za-z_0-9]+::|Verilated|VL_|vl_|naa::rtl::/) b = "Verilated RTL + adapters"
  else if (f ~ /naa::sim::NetPort|LinkModel|impair::/) b = "sim NetPort (link, faults)"
  else if (f ~ /naa::sim::RxPipe|RxChecks|rx_checks/) b = "sim RxPipe"
  else if (f ~ /naa::sim::TxPipe/) b = "sim TxPipe"
  else if (f ~ /naa::sim::Transport|naa::sim::Qp|naa::sim::Irn/) b = "sim Transport"
  else if (f ~ /naa::sim::KernelEngine|naa::sim::.*Kernel|naa::sim_rtl/) b = "sim KernelEngine + kernels"
  else if (f ~ /naa::sim::Memory|SparseStore|tlm::|tlm_utils::/) b = "sim Memory (TLM)"
  else if (f ~ /naa::sim::Mr|naa::sim::CmAgent|naa::sim::Handler/) b = "sim MR table, MRSP, CM, handlers"
  else if (f ~ /naa::sim::PacketPool|naa::sim::Channel|naa::sim::CycleMeter|naa::sim::StageQueue|naa::sim::ReadyQueue/) b = "sim channels, pool"
  else if (f ~ /naa::sim::Runner|naa::sim::PeerTimers/) b = "sim Runner"
  else if (f ~ /naa::sim::/) b = "sim other"
  else if (f ~ /sc_core::|sc_dt::|qt_block|qt_start|qt_yield|QuickThreads|sc_cor/) b = "SystemC kernel"
  else if (f ~ /naa::cosim::/) b = "cosim driver"
  else if (f ~ /naa::host::/) b = "host library"
  else if (f ~ /naa::protocol::|crc32|Crc32/) b = "protocol (ICRC, headers)"
  else if (f ~ /boost::asio::|^asio::|recvmmsg|sendmmsg|epoll_wait|clock_gettime|syscall/) b = "Asio, system calls"
  else if (f ~ /memcpy|memmove|memset/) b = "memcpy/memset"
  else if (f ~ /malloc|free|operator new|operator delete|_int_|cfree/) b = "malloc/free"
  sum[b] += v
}
END { for (b in sum) printf "%s\t%d\n", b, sum[b] }
