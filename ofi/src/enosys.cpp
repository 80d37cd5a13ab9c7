// The ops tables of the operations the provider does not offer at all (tagged messages, atomics,
// collectives): every entry answers -FI_ENOSYS (enosys.hpp), so fi_tsend, fi_atomic, fi_barrier on
// a naa endpoint fail cleanly instead of calling through NULL. And the tables of a closed
// endpoint, every entry answering -FI_EOPBADSTATE (ep_cm.cpp ep_close says why they exist).
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "enosys.hpp"
#include "naa_fi.hpp"

namespace naa::ofi {

fi_ops_tagged g_no_tagged_ops = {
    .size = sizeof(fi_ops_tagged),
    .recv = FI_NO(fi_ops_tagged, recv),
    .recvv = FI_NO(fi_ops_tagged, recvv),
    .recvmsg = FI_NO(fi_ops_tagged, recvmsg),
    .send = FI_NO(fi_ops_tagged, send),
    .sendv = FI_NO(fi_ops_tagged, sendv),
    .sendmsg = FI_NO(fi_ops_tagged, sendmsg),
    .inject = FI_NO(fi_ops_tagged, inject),
    .senddata = FI_NO(fi_ops_tagged, senddata),
    .injectdata = FI_NO(fi_ops_tagged, injectdata),
};

fi_ops_atomic g_no_atomic_ops = {
    .size = sizeof(fi_ops_atomic),
    .write = FI_NO(fi_ops_atomic, write),
    .writev = FI_NO(fi_ops_atomic, writev),
    .writemsg = FI_NO(fi_ops_atomic, writemsg),
    .inject = FI_NO(fi_ops_atomic, inject),
    .readwrite = FI_NO(fi_ops_atomic, readwrite),
    .readwritev = FI_NO(fi_ops_atomic, readwritev),
    .readwritemsg = FI_NO(fi_ops_atomic, readwritemsg),
    .compwrite = FI_NO(fi_ops_atomic, compwrite),
    .compwritev = FI_NO(fi_ops_atomic, compwritev),
    .compwritemsg = FI_NO(fi_ops_atomic, compwritemsg),
    .writevalid = FI_NO(fi_ops_atomic, writevalid),
    .readwritevalid = FI_NO(fi_ops_atomic, readwritevalid),
    .compwritevalid = FI_NO(fi_ops_atomic, compwritevalid),
};

fi_ops_collective g_no_collective_ops = {
    .size = sizeof(fi_ops_collective),
    .barrier = FI_NO(fi_ops_collective, barrier),
    .broadcast = FI_NO(fi_ops_collective, broadcast),
    .alltoall = FI_NO(fi_ops_collective, alltoall),
    .allreduce = FI_NO(fi_ops_collective, allreduce),
    .allgather = FI_NO(fi_ops_collective, allgather),
    .reduce_scatter = FI_NO(fi_ops_collective, reduce_scatter),
    .reduce = FI_NO(fi_ops_collective, reduce),
    .scatter = FI_NO(fi_ops_collective, scatter),
    .gather = FI_NO(fi_ops_collective, gather),
    .msg = FI_NO(fi_ops_collective, msg),
    .barrier2 = FI_NO(fi_ops_collective, barrier2),
};

fi_ops g_closed_ep_fid_ops = {
    .size = sizeof(fi_ops),
    .close = FI_CLOSED(fi_ops, close),
    .bind = FI_CLOSED(fi_ops, bind),
    .control = FI_CLOSED(fi_ops, control),
    .ops_open = FI_CLOSED(fi_ops, ops_open),
    .tostr = FI_CLOSED(fi_ops, tostr),
    .ops_set = FI_CLOSED(fi_ops, ops_set),
};

fi_ops_ep g_closed_ep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = FI_CLOSED(fi_ops_ep, cancel),
    .getopt = FI_CLOSED(fi_ops_ep, getopt),
    .setopt = FI_CLOSED(fi_ops_ep, setopt),
    .tx_ctx = FI_CLOSED(fi_ops_ep, tx_ctx),
    .rx_ctx = FI_CLOSED(fi_ops_ep, rx_ctx),
    .rx_size_left = FI_CLOSED(fi_ops_ep, rx_size_left),
    .tx_size_left = FI_CLOSED(fi_ops_ep, tx_size_left),
};

fi_ops_cm g_closed_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = FI_CLOSED(fi_ops_cm, setname),
    .getname = FI_CLOSED(fi_ops_cm, getname),
    .getpeer = FI_CLOSED(fi_ops_cm, getpeer),
    .connect = FI_CLOSED(fi_ops_cm, connect),
    .listen = FI_CLOSED(fi_ops_cm, listen),
    .accept = FI_CLOSED(fi_ops_cm, accept),
    .reject = FI_CLOSED(fi_ops_cm, reject),
    .shutdown = FI_CLOSED(fi_ops_cm, shutdown),
    .join = FI_CLOSED(fi_ops_cm, join),
};

fi_ops_msg g_closed_msg_ops = {
    .size = sizeof(fi_ops_msg),
    .recv = FI_CLOSED(fi_ops_msg, recv),
    .recvv = FI_CLOSED(fi_ops_msg, recvv),
    .recvmsg = FI_CLOSED(fi_ops_msg, recvmsg),
    .send = FI_CLOSED(fi_ops_msg, send),
    .sendv = FI_CLOSED(fi_ops_msg, sendv),
    .sendmsg = FI_CLOSED(fi_ops_msg, sendmsg),
    .inject = FI_CLOSED(fi_ops_msg, inject),
    .senddata = FI_CLOSED(fi_ops_msg, senddata),
    .injectdata = FI_CLOSED(fi_ops_msg, injectdata),
};

fi_ops_rma g_closed_rma_ops = {
    .size = sizeof(fi_ops_rma),
    .read = FI_CLOSED(fi_ops_rma, read),
    .readv = FI_CLOSED(fi_ops_rma, readv),
    .readmsg = FI_CLOSED(fi_ops_rma, readmsg),
    .write = FI_CLOSED(fi_ops_rma, write),
    .writev = FI_CLOSED(fi_ops_rma, writev),
    .writemsg = FI_CLOSED(fi_ops_rma, writemsg),
    .inject = FI_CLOSED(fi_ops_rma, inject),
    .writedata = FI_CLOSED(fi_ops_rma, writedata),
    .injectdata = FI_CLOSED(fi_ops_rma, injectdata),
};

// ofi_rxm (libfabric 1.17 to today, prov/rxm/src/rxm_conn.c rxm_close_conn) closes a
// connection's msg endpoint and then reads the msg CQ; a receive completion still there makes it
// repost that buffer with fi_recv on the endpoint it has just closed (rxm_free_rx_buf tests
// conn->msg_ep, which it clears only after the read). A deleted endpoint made that fi_recv write
// into freed memory: the heap corruption seen at ofi_rxm's teardown (caught by ASan;
// docs/host/libfabric.md "Closed endpoints"). So ep_close keeps the memory and points every
// table at these.
void close_ops(fid_ep& ep) noexcept {
  ep.fid.ops = &g_closed_ep_fid_ops;
  ep.ops = &g_closed_ep_ops;
  ep.cm = &g_closed_cm_ops;
  ep.msg = &g_closed_msg_ops;
  ep.rma = &g_closed_rma_ops;
}

}  // namespace naa::ofi
