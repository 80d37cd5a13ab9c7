#include "naa/sim/link_stream.hpp"

#include "naa/protocol/headers.hpp"
#include "naa/protocol/opcode.hpp"

namespace naa::sim {

StreamHold stream_hold_after(protocol::ByteView datagram) {
  const auto bth = protocol::decode_bth(datagram);
  if (!bth) return StreamHold::none;
  namespace op = protocol::opcode;
  switch (bth->opcode) {
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
