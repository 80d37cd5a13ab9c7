#include "naa/sim/link_stream.hpp"

#include "naa/protocol/headers.hpp"
#include "naa/protocol/opcode.hpp"

namespace naa::sim {

StreamHold stream_hold_after(protocol::ByteView datagram) {
  // What decode_bth() would accept (12 bytes, TVer 0), without decoding the rest (issue 31).
  if (datagram.size() < protocol::kBthSize || (datagram[1] & 0x0FU) != 0) return StreamHold::none;
  namespace op = protocol::opcode;
  switch (datagram[0]) {
    case op::kSendFirst:
    case op::kSendMiddle:
    case op::kWriteFirst:
    case op::kWriteMiddle:
      return StreamHold::in_message;
    case op::kWriteLast:
    case op::kWriteOnly:
      return StreamHold::between_messages;
    default:
      return StreamHold::none;
  }
}

}  // namespace naa::sim
