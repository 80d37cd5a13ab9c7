// The ops tables of the operations the provider does not offer at all (tagged messages, atomics,
// collectives): every entry answers -FI_ENOSYS (enosys.hpp), so fi_tsend, fi_atomic, fi_barrier on
// a naa endpoint fail cleanly instead of calling through NULL.
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
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

}  // namespace naa::ofi
