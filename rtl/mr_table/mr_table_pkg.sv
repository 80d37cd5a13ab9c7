// mr_table_pkg: types shared by mr_table and the blocks that call it (rtl/mr_table/README.md).
// The status codes and access bits are part of the port contract: the C++ model
// (rtl/mr_table/include/naa/rtl/mr_table.hpp) uses the same numeric values.
`default_nettype none

package mr_table_pkg;

  // 32 entries, direct-indexed by rkey[4:0] (PROTOCOL.md 7: 32 MR table entries).
  localparam int unsigned NumEntries = 32;
  localparam int unsigned IdxW = 5;

  // Access bits of an entry and of a lookup (a lookup asks for a subset of the entry's bits).
  localparam int unsigned AccessW = 3;
  localparam logic [AccessW-1:0] AccessRemoteRead = 3'b001;
  localparam logic [AccessW-1:0] AccessRemoteWrite = 3'b010;
  localparam logic [AccessW-1:0] AccessRemoteAtomic = 3'b100;

  // Lookup result, checked in this order: the first failing check is reported.
  typedef enum logic [2:0] {
    MrOk = 3'd0,
    MrNoEntry = 3'd1,        // entry rkey[4:0] is not valid
    MrKeyMismatch = 3'd2,    // valid, but its rkey differs in bits 31:5 (stale or guessed key)
    MrOwnerMismatch = 3'd3,  // the region belongs to another QP
    MrBounds = 3'd4,         // [va, va+len) not inside the region, or va+len beyond 2^64
    MrPermission = 3'd5      // an asked access bit is not granted
  } mr_status_e;

endpackage

`default_nettype wire
