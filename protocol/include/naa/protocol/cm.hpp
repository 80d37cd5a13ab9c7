// IB Communication Management (CM) MADs as Linux ib_cm and librdmacm speak them (PROTOCOL.md 4 and
// 8; IBTA vol. 1 chapter 12.6 for the message layouts, 13.4 for the MAD header; the bit positions
// are those of Linux include/rdma/ibta_vol1_c12.h).
//
// Every CM message is one 256-byte MAD carried in a UD SEND ONLY to QP 1. decode_cm_mad() turns the
// 256 bytes into a MadHeader plus one plain struct per message type; every field of PROTOCOL.md 8
// is a named member, bit fields split into members. Reserved bits and bytes are members too, so a
// decode followed by an encode reproduces the input byte for byte (a CM agent that echoes or logs a
// message never loses bits it does not understand). Semantic checks (is the path MTU supported, is
// the service ID ours) belong to the CM agent, which answers them with a REJ; decode only rejects
// what cannot be a CM MAD at all.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/result.hpp"

namespace naa::protocol {

// ---- Sizes and fixed values (PROTOCOL.md 4) --------------------------------------------------

inline constexpr std::size_t kMadSize = 256;
inline constexpr std::size_t kMadHeaderSize = 24;
inline constexpr std::size_t kCmBodyOffset = 24;
inline constexpr std::size_t kCmBodySize = 232;
static_assert(kMadHeaderSize == kCmBodyOffset);
static_assert(kCmBodyOffset + kCmBodySize == kMadSize);

inline constexpr std::uint8_t kMadBaseVersion = 1;
inline constexpr std::uint8_t kMadClassCm = 0x07;
inline constexpr std::uint8_t kCmClassVersion = 2;  // IBTA 1.2 and later; what Linux sends
inline constexpr std::uint8_t kMadMethodSend = 0x03;

// CM MADs travel between the GSIs (QP 1) with the well-known GSI Q_Key (IBTA vol. 1 13.4).
inline constexpr std::uint32_t kCmQKey = 0x80010000U;
inline constexpr std::uint32_t kCmQpn = 1;

// Attribute IDs (IBTA vol. 1 12.6; Linux CM_*_ATTR_ID). Only REQ..DREP are decoded; the others are
// named so logs can say what was dropped, but they decode as Error::unknown_attribute: librdmacm
// over RC never sends LAP/APR (no alternate paths) and the NAA does not offer UD services (SIDR).
inline constexpr std::uint16_t kCmAttrClassPortInfo = 0x0001;
inline constexpr std::uint16_t kCmAttrReq = 0x0010;
inline constexpr std::uint16_t kCmAttrMra = 0x0011;
inline constexpr std::uint16_t kCmAttrRej = 0x0012;
inline constexpr std::uint16_t kCmAttrRep = 0x0013;
inline constexpr std::uint16_t kCmAttrRtu = 0x0014;
inline constexpr std::uint16_t kCmAttrDreq = 0x0015;
inline constexpr std::uint16_t kCmAttrDrep = 0x0016;
inline constexpr std::uint16_t kCmAttrSidrReq = 0x0017;
inline constexpr std::uint16_t kCmAttrSidrRep = 0x0018;
inline constexpr std::uint16_t kCmAttrLap = 0x0019;
inline constexpr std::uint16_t kCmAttrApr = 0x001A;

// "REQ", "REP", ... for the attribute IDs above, "unknown" otherwise.
[[nodiscard]] std::string_view cm_attribute_name(std::uint16_t attribute_id) noexcept;

// REJ reasons (IBTA table 109; the values of Linux enum ib_cm_rej_reason). The REJ field stays a
// plain uint16_t because a peer may send any value; these are the ones we send or interpret.
inline constexpr std::uint16_t kCmRejNoQp = 1;
inline constexpr std::uint16_t kCmRejNoResources = 3;
inline constexpr std::uint16_t kCmRejTimeout = 4;  // Linux, when the active side gives up
inline constexpr std::uint16_t kCmRejUnsupported = 5;
inline constexpr std::uint16_t kCmRejInvalidCommId = 6;
inline constexpr std::uint16_t kCmRejInvalidServiceId = 8;  // no listener on the service ID
inline constexpr std::uint16_t kCmRejInvalidTransportType = 9;
inline constexpr std::uint16_t kCmRejStaleConnection = 10;
inline constexpr std::uint16_t kCmRejInvalidGid = 12;
inline constexpr std::uint16_t kCmRejInvalidMtu = 26;
inline constexpr std::uint16_t kCmRejInsufficientResponderResources = 27;
inline constexpr std::uint16_t kCmRejConsumerDefined = 28;  // private data says why
inline constexpr std::uint16_t kCmRejInvalidRnrRetry = 29;
inline constexpr std::uint16_t kCmRejInvalidClassVersion = 31;

// "timeout", "invalid service ID", ... for reasons 1..33 and 35, "unknown" otherwise.
[[nodiscard]] std::string_view cm_rej_reason_name(std::uint16_t reason) noexcept;

// REJ "message rejected" and MRA "message MRAed" (2-bit fields of the REJ and MRA layouts).
inline constexpr std::uint8_t kCmRejMessageReq = 0;
inline constexpr std::uint8_t kCmRejMessageRep = 1;
inline constexpr std::uint8_t kCmRejMessageOther = 2;
inline constexpr std::uint8_t kCmMraMessageReq = 0;
inline constexpr std::uint8_t kCmMraMessageRep = 1;
inline constexpr std::uint8_t kCmMraMessageLap = 2;

// REQ transport service type (2 bits).
inline constexpr std::uint8_t kCmTransportRc = 0;
inline constexpr std::uint8_t kCmTransportUc = 1;
inline constexpr std::uint8_t kCmTransportRd = 2;

// ---- Path MTU (IB enum, PROTOCOL.md 1) -------------------------------------------------------

// 1..5 -> 256..4096 bytes; anything else is not an IB MTU.
[[nodiscard]] constexpr std::optional<std::uint32_t> ib_mtu_bytes(std::uint8_t mtu_enum) noexcept {
  if (mtu_enum < 1 || mtu_enum > 5) return std::nullopt;
  return std::uint32_t{128} << mtu_enum;
}
// Exact inverse: 256, 512, 1024, 2048, 4096 -> 1..5; any other size has no enum.
[[nodiscard]] constexpr std::optional<std::uint8_t> ib_mtu_enum(std::uint32_t bytes) noexcept {
  for (std::uint8_t e = 1; e <= 5; ++e) {
    if ((std::uint32_t{128} << e) == bytes) return e;
  }
  return std::nullopt;
}

// ---- GIDs --------------------------------------------------------------------------------------

using IbGid = std::array<std::uint8_t, 16>;

// RoCEv2 over IPv4 uses IPv4-mapped IPv6 addresses as GIDs (::ffff:a.b.c.d, PROTOCOL.md 4).
// IPv4 addresses are host-order integers here: 192.168.1.10 is 0xC0A8010A.
[[nodiscard]] constexpr IbGid ipv4_mapped_gid(std::uint32_t ipv4) noexcept {
  IbGid g{};
  g[10] = 0xFF;
  g[11] = 0xFF;
  store_be32(g.data() + 12, ipv4);
  return g;
}
// The IPv4 address of an IPv4-mapped GID; nullopt for any other GID.
[[nodiscard]] constexpr std::optional<std::uint32_t> ipv4_from_mapped_gid(const IbGid& g) noexcept {
  for (std::size_t i = 0; i < 10; ++i) {
    if (g[i] != 0) return std::nullopt;
  }
  if (g[10] != 0xFF || g[11] != 0xFF) return std::nullopt;
  return load_be32(g.data() + 12);
}

// ---- rdma_cm conventions (PROTOCOL.md 4; Linux drivers/infiniband/core/cma.c) -----------------

// librdmacm's TCP port space: service ID = 0x0000000001060000 | port (RDMA_PS_TCP = 0x0106).
inline constexpr std::uint64_t kRdmaCmTcpServiceIdBase = 0x0000000001060000ULL;

[[nodiscard]] constexpr std::uint64_t rdma_cm_service_id(std::uint16_t port) noexcept {
  return kRdmaCmTcpServiceIdBase | std::uint64_t{port};
}
// The TCP port of an rdma_cm RDMA_PS_TCP service ID; nullopt for other port spaces or IB services.
[[nodiscard]] constexpr std::optional<std::uint16_t> rdma_cm_port(
    std::uint64_t service_id) noexcept {
  if ((service_id & ~std::uint64_t{0xFFFF}) != kRdmaCmTcpServiceIdBase) return std::nullopt;
  return static_cast<std::uint16_t>(service_id & 0xFFFF);
}

// The header rdma_cm puts at the start of the REQ private data (Linux struct cma_hdr): version 0,
// IP version in the upper nibble of byte 1 (cma_set_ip_ver writes 4 << 4 = 0x40), the active
// side's source port, then source and destination address as 16-byte fields (IPv4: 12 zero bytes
// + the 4 address bytes). The destination port is not here: it is in the service ID.
inline constexpr std::size_t kRdmaCmIpHeaderSize = 36;
inline constexpr std::uint8_t kRdmaCmVersion = 0x00;
inline constexpr std::uint8_t kRdmaCmIpVersion4 = 0x40;

struct RdmaCmIpHeader {
  std::uint8_t version = kRdmaCmVersion;
  std::uint8_t ip_version = kRdmaCmIpVersion4;  // raw byte; upper nibble 4 (low nibble kept)
  std::uint16_t src_port = 0;
  std::uint32_t src_ip = 0;  // host-order IPv4
  std::uint32_t dst_ip = 0;
  friend bool operator==(const RdmaCmIpHeader&, const RdmaCmIpHeader&) = default;
};

// Reads the first 36 bytes of `private_data`. too_short if fewer; bad_field if the version is not
// 0 (Linux cma_save_ip_info refuses it too) or the IP version is not 4 (we speak IPv4 only). Like
// Linux, the 12 bytes in front of each IPv4 address are not checked.
[[nodiscard]] Result<RdmaCmIpHeader> decode_rdma_cm_ip_header(ByteView private_data) noexcept;
// Writes 36 bytes (zero padding included) to the front of `out`, returns 36. value_out_of_range
// if the header is not version 0 / IPv4; buffer_too_small if `out` holds fewer than 36 bytes.
[[nodiscard]] Result<std::size_t> encode_rdma_cm_ip_header(const RdmaCmIpHeader& header,
                                                           MutableByteView out) noexcept;

// ---- MAD header (IBTA vol. 1 13.4, PROTOCOL.md 4) -----------------------------------------------

struct MadHeader {
  std::uint8_t base_version = kMadBaseVersion;
  std::uint8_t mgmt_class = kMadClassCm;
  std::uint8_t class_version = kCmClassVersion;
  std::uint8_t method = kMadMethodSend;
  std::uint16_t status = 0;  // CM always sends 0; carried as data (Linux does not look at it)
  std::uint16_t class_specific = 0;
  std::uint64_t transaction_id = 0;
  std::uint16_t attribute_id = 0;
  std::uint16_t reserved = 0;
  std::uint32_t attribute_modifier = 0;
  friend bool operator==(const MadHeader&, const MadHeader&) = default;
};

// Plain MAD header access, without CM checks (24 bytes needed; too_short otherwise).
[[nodiscard]] Result<MadHeader> decode_mad_header(ByteView bytes) noexcept;
[[nodiscard]] Result<std::size_t> encode_mad_header(const MadHeader& header,
                                                    MutableByteView out) noexcept;

// ---- CM messages (PROTOCOL.md 8; offsets are inside the 232-byte CM body) ----------------------
// Field widths are in the comments; encode rejects a value wider than its field with
// Error::value_out_of_range.

struct CmReq {
  static constexpr std::uint16_t kAttributeId = kCmAttrReq;
  std::uint32_t local_comm_id = 0;                // 0
  std::uint8_t reserved_4 = 0;                    // 4
  std::uint32_t vendor_id = 0;                    // 5..7 (24)
  std::uint64_t service_id = 0;                   // 8
  std::uint64_t local_ca_guid = 0;                // 16
  std::uint32_t reserved_24 = 0;                  // 24
  std::uint32_t local_qkey = 0;                   // 28
  std::uint32_t local_qpn = 0;                    // 32 (24)
  std::uint8_t responder_resources = 0;           // 35
  std::uint32_t local_eecn = 0;                   // 36 (24)
  std::uint8_t initiator_depth = 0;               // 39
  std::uint32_t remote_eecn = 0;                  // 40 (24)
  std::uint8_t remote_cm_response_timeout = 0;    // 43 bits 7:3 (5)
  std::uint8_t transport_service_type = 0;        // 43 bits 2:1 (2), 0 = RC
  bool end_to_end_flow_control = false;           // 43 bit 0
  std::uint32_t starting_psn = 0;                 // 44 (24): the passive side's send PSN
  std::uint8_t local_cm_response_timeout = 0;     // 47 bits 7:3 (5)
  std::uint8_t retry_count = 0;                   // 47 bits 2:0 (3)
  std::uint16_t pkey = 0;                         // 48
  std::uint8_t path_mtu = 0;                      // 50 bits 7:4 (4), IB enum (ib_mtu_bytes)
  bool rdc_exists = false;                        // 50 bit 3
  std::uint8_t rnr_retry_count = 0;               // 50 bits 2:0 (3)
  std::uint8_t max_cm_retries = 0;                // 51 bits 7:4 (4)
  bool srq = false;                               // 51 bit 3
  std::uint8_t extended_transport_type = 0;       // 51 bits 2:0 (3)
  std::uint16_t primary_local_lid = 0;            // 52
  std::uint16_t primary_remote_lid = 0;           // 54
  IbGid primary_local_gid{};                      // 56
  IbGid primary_remote_gid{};                     // 72
  std::uint32_t primary_flow_label = 0;           // 88 bits 31:12 (20)
  std::uint8_t reserved_90 = 0;                   // 88 bits 11:6 (6)
  std::uint8_t primary_packet_rate = 0;           // 91 bits 5:0 (6)
  std::uint8_t primary_traffic_class = 0;         // 92
  std::uint8_t primary_hop_limit = 0;             // 93
  std::uint8_t primary_sl = 0;                    // 94 bits 7:4 (4)
  bool primary_subnet_local = false;              // 94 bit 3
  std::uint8_t reserved_94 = 0;                   // 94 bits 2:0 (3)
  std::uint8_t primary_local_ack_timeout = 0;     // 95 bits 7:3 (5)
  std::uint8_t reserved_95 = 0;                   // 95 bits 2:0 (3)
  std::array<std::uint8_t, 44> alternate_path{};  // 96..139, raw (librdmacm sends zeros)
  std::array<std::uint8_t, 92> private_data{};    // 140..231
  friend bool operator==(const CmReq&, const CmReq&) = default;
};

struct CmMra {
  static constexpr std::uint16_t kAttributeId = kCmAttrMra;
  std::uint32_t local_comm_id = 0;               // 0
  std::uint32_t remote_comm_id = 0;              // 4
  std::uint8_t message_mraed = 0;                // 8 bits 7:6 (2), kCmMraMessage*
  std::uint8_t reserved_8 = 0;                   // 8 bits 5:0 (6)
  std::uint8_t service_timeout = 0;              // 9 bits 7:3 (5)
  std::uint8_t reserved_9 = 0;                   // 9 bits 2:0 (3)
  std::array<std::uint8_t, 222> private_data{};  // 10..231
  friend bool operator==(const CmMra&, const CmMra&) = default;
};

inline constexpr std::size_t kCmRejAriSize = 72;

struct CmRej {
  static constexpr std::uint16_t kAttributeId = kCmAttrRej;
  std::uint32_t local_comm_id = 0;                // 0
  std::uint32_t remote_comm_id = 0;               // 4
  std::uint8_t message_rejected = 0;              // 8 bits 7:6 (2), kCmRejMessage*
  std::uint8_t reserved_8 = 0;                    // 8 bits 5:0 (6)
  std::uint8_t reject_info_length = 0;            // 9 bits 7:1 (7), at most 72 (the ARI size)
  std::uint8_t reserved_9 = 0;                    // 9 bit 0 (1)
  std::uint16_t reason = 0;                       // 10, kCmRej*
  std::array<std::uint8_t, kCmRejAriSize> ari{};  // 12..83 additional rejection information
  std::array<std::uint8_t, 148> private_data{};   // 84..231
  friend bool operator==(const CmRej&, const CmRej&) = default;
};

struct CmRep {
  static constexpr std::uint16_t kAttributeId = kCmAttrRep;
  std::uint32_t local_comm_id = 0;   // 0
  std::uint32_t remote_comm_id = 0;  // 4
  std::uint32_t local_qkey = 0;      // 8
  std::uint32_t local_qpn = 0;       // 12 (24)
  std::uint32_t local_eecn = 0;      // 16 (24)
  std::uint32_t starting_psn = 0;    // 20 (24): the active side's send PSN
  // The IBTA puts a 24-bit vendor ID into the bytes after those three 24-bit fields: high byte
  // at 15, middle at 19, low at 23 (Linux CM_REP_VENDOR_ID_H/M/L). PROTOCOL.md 8 omits it.
  std::uint32_t vendor_id = 0;                   // 15, 19, 23 (24)
  std::uint8_t responder_resources = 0;          // 24
  std::uint8_t initiator_depth = 0;              // 25
  std::uint8_t target_ack_delay = 0;             // 26 bits 7:3 (5)
  std::uint8_t failover_accepted = 0;            // 26 bits 2:1 (2)
  bool end_to_end_flow_control = false;          // 26 bit 0
  std::uint8_t rnr_retry_count = 0;              // 27 bits 7:5 (3)
  bool srq = false;                              // 27 bit 4
  std::uint8_t reserved_27 = 0;                  // 27 bits 3:0 (4)
  std::uint64_t local_ca_guid = 0;               // 28
  std::array<std::uint8_t, 196> private_data{};  // 36..231
  friend bool operator==(const CmRep&, const CmRep&) = default;
};

struct CmRtu {
  static constexpr std::uint16_t kAttributeId = kCmAttrRtu;
  std::uint32_t local_comm_id = 0;               // 0
  std::uint32_t remote_comm_id = 0;              // 4
  std::array<std::uint8_t, 224> private_data{};  // 8..231
  friend bool operator==(const CmRtu&, const CmRtu&) = default;
};

struct CmDreq {
  static constexpr std::uint16_t kAttributeId = kCmAttrDreq;
  std::uint32_t local_comm_id = 0;               // 0
  std::uint32_t remote_comm_id = 0;              // 4
  std::uint32_t remote_qpn = 0;                  // 8 (24): must name the receiver's QP
  std::uint8_t reserved_11 = 0;                  // 11
  std::array<std::uint8_t, 220> private_data{};  // 12..231
  friend bool operator==(const CmDreq&, const CmDreq&) = default;
};

struct CmDrep {
  static constexpr std::uint16_t kAttributeId = kCmAttrDrep;
  std::uint32_t local_comm_id = 0;               // 0
  std::uint32_t remote_comm_id = 0;              // 4
  std::array<std::uint8_t, 224> private_data{};  // 8..231
  friend bool operator==(const CmDrep&, const CmDrep&) = default;
};

using CmBody = std::variant<CmReq, CmMra, CmRej, CmRep, CmRtu, CmDreq, CmDrep>;

// The attribute ID that goes with the message held in `body`.
[[nodiscard]] std::uint16_t cm_attribute_id(const CmBody& body) noexcept;

struct CmMad {
  MadHeader header;
  CmBody body;
  friend bool operator==(const CmMad&, const CmMad&) = default;
};

// Decodes exactly one 256-byte CM MAD. Errors, checked in this order:
//   too_short / too_long   the input is not exactly 256 bytes (the UD payload is the MAD, nothing
//                          else; the caller strips BTH/DETH before and the ICRC after);
//   bad_mad_header         base version != 1, class != 0x07, class version != 2, or method !=
//                          0x03 (Send: the only method the CM uses, IBTA 12.6);
//   unknown_attribute      an attribute ID other than REQ/MRA/REJ/REP/RTU/DREQ/DREP;
//   bad_field              REJ reject info length > 72 (it would point past the ARI).
[[nodiscard]] Result<CmMad> decode_cm_mad(ByteView mad) noexcept;

// Writes the 256-byte MAD to the front of `out` and returns 256. The attribute ID written is the
// one of the body's alternative (mad.header.attribute_id is ignored). Errors: bad_mad_header if
// the header's version/class/method are not those decode accepts; value_out_of_range if a field
// is wider than its wire width (e.g. a 25-bit QPN, reject info length > 72); buffer_too_small if
// `out` holds fewer than 256 bytes. Nothing is written on error.
[[nodiscard]] Result<std::size_t> encode_cm_mad(const CmMad& mad, MutableByteView out) noexcept;

// The user's private data of a librdmacm REQ: what follows the 36-byte rdma_cm header (56 bytes;
// rdma_connect() callers see these bytes). The view points into `req`.
[[nodiscard]] inline ByteView rdma_cm_user_data(const CmReq& req) noexcept {
  return ByteView(req.private_data).subspan(kRdmaCmIpHeaderSize);
}

}  // namespace naa::protocol
