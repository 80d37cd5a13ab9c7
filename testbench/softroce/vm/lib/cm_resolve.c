/* cm_resolve: resolve an IPv4 address and its route with librdmacm and print what the
 * RDMA CM chose (device, port, GIDs, path MTU). selftest.sh builds it on the host and
 * runs it in the VM, which proves that host-built rdma-core programs run in the guest.
 *   gcc -O2 -Wall -o cm_resolve cm_resolve.c -lrdmacm -libverbs
 *   ./cm_resolve 10.77.0.2        (exit 0 when ADDR_RESOLVED and ROUTE_RESOLVED arrive) */
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>

static int expect(struct rdma_event_channel* ch, enum rdma_cm_event_type want) {
  struct rdma_cm_event* ev;
  if (rdma_get_cm_event(ch, &ev)) {
    perror("rdma_get_cm_event");
    return -1;
  }
  enum rdma_cm_event_type got = ev->event;
  int status = ev->status;
  rdma_ack_cm_event(ev);
  printf("event %s (status %d)\n", rdma_event_str(got), status);
  return got == want && status == 0 ? 0 : -1;
}

int main(int argc, char** argv) {
  struct sockaddr_in dst = {.sin_family = AF_INET};
  struct rdma_event_channel* ch;
  struct rdma_cm_id* id;
  char sgid[INET6_ADDRSTRLEN], dgid[INET6_ADDRSTRLEN];

  if (argc != 2 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) {
    fprintf(stderr, "usage: %s IPV4-ADDRESS\n", argv[0]);
    return 2;
  }
  ch = rdma_create_event_channel();
  if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
    perror("rdma_create_id");
    return 1;
  }
  if (rdma_resolve_addr(id, NULL, (struct sockaddr*)&dst, 2000)) {
    perror("rdma_resolve_addr");
    return 1;
  }
  if (expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED)) return 1;
  if (rdma_resolve_route(id, 2000)) {
    perror("rdma_resolve_route");
    return 1;
  }
  if (expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)) return 1;
  struct ibv_sa_path_rec* p = &id->route.path_rec[0];
  inet_ntop(AF_INET6, p->sgid.raw, sgid, sizeof sgid);
  inet_ntop(AF_INET6, p->dgid.raw, dgid, sizeof dgid);
  printf("device %s port %u sgid %s dgid %s path_mtu %d\n", ibv_get_device_name(id->verbs->device),
         id->port_num, sgid, dgid, 128 << p->mtu);
  rdma_destroy_id(id);
  rdma_destroy_event_channel(ch);
  return 0;
}
