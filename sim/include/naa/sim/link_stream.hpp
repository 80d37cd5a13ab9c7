// Whether more of a stream follows a received datagram at once (docs/sim/timing.md "Link model"):
// NetPort's link model lets the next datagram of a stream follow the previous one back to back,
// and the runner keeps the model from running past its earliest arrival until it has been read.
// That is right only when the sender sends the next datagram without waiting for the NAA, which
// the datagrams themselves tell:
// - the FIRST or MIDDLE of a message: the rest of the message follows (IBTA 9.4.1). (Not modelled:
//   the sender's window, at most 128 unacknowledged PSNs (PROTOCOL.md 3). A sender the NAA
//   acknowledges more than 64 packets late waits for the ACK; the runner's wait then times out,
//   net_port.stream_hold_timeouts counts it and the stream continues after a gap.)
// - a plain RDMA WRITE LAST/ONLY: usually the next WRITE of a stream or the next input region of
//   a call (whose last region ends with a WRITE with immediate), but the sender may also wait for
//   its completion: a "between messages" hold, which the runner ends sooner (--link-hold-us,
//   capped at kBetweenMessagesHoldUs);
// - anything else (a call's last WRITE with immediate, SENDs' last packets, READ requests, ACKs,
//   CM MADs): the sender waits for an answer, no hold.
#pragma once

#include <cstdint>

#include "naa/protocol/bytes.hpp"

namespace naa::sim {

enum class StreamHold : std::uint8_t { none, in_message, between_messages };

// The longest wall time the runner waits for the next message after a plain WRITE's last packet
// (below the host library's shortest default retransmit timeout, 134 ms, so that a sender waiting
// for the WRITE's ACK is not driven to retransmit).
inline constexpr std::uint64_t kBetweenMessagesHoldUs = 10'000;

// A datagram the NAA received (BTH first): the hold it implies.
[[nodiscard]] StreamHold stream_hold_after(protocol::ByteView datagram);

}  // namespace naa::sim
