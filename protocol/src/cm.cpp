// IB CM MAD encode/decode (PROTOCOL.md 4 and 8). Bit positions follow IBTA vol. 1 tables 106-113
// as Linux include/rdma/ibta_vol1_c12.h spells them: "bits 7:3 of byte 43" means the five most
// significant bits of that byte.
#include "naa/protocol/cm.hpp"

#include <algorithm>
#include <tuple>
#include <type_traits>
#include <variant>

namespace naa::protocol {
namespace {

// Field widths of the narrow fields, checked by encode.
[[nodiscard]] constexpr bool fits(std::uint64_t value, unsigned bits) noexcept {
  return value < (std::uint64_t{1} << bits);
}

// Narrowing to a wire byte, spelled once (the operands of the bit arithmetic are promoted to int).
template <class T>
[[nodiscard]] constexpr std::uint8_t u8(T v) noexcept {
  return static_cast<std::uint8_t>(v);
}

template <std::size_t N>
void copy_out(std::array<std::uint8_t, N>& dst, const std::uint8_t* src) noexcept {
  std::copy_n(src, N, dst.begin());
}
template <std::size_t N>
void copy_in(std::uint8_t* dst, const std::array<std::uint8_t, N>& src) noexcept {
  std::copy_n(src.begin(), N, dst);
}

// Calls f with the alternative `v` holds. Unlike std::visit it cannot throw bad_variant_access,
// which a noexcept encoder must not risk (a valueless variant calls nothing).
template <class F, class... Ts>
void for_alternative(const std::variant<Ts...>& v, F&& f) noexcept {
  ((std::get_if<Ts>(&v) != nullptr ? f(*std::get_if<Ts>(&v)) : void()), ...);
}

// Private data always runs to the end of the 232-byte body.
static_assert(140 + std::tuple_size_v<decltype(CmReq::private_data)> == kCmBodySize);
static_assert(96 + std::tuple_size_v<decltype(CmReq::alternate_path)> == 140);
static_assert(10 + std::tuple_size_v<decltype(CmMra::private_data)> == kCmBodySize);
static_assert(12 + kCmRejAriSize + std::tuple_size_v<decltype(CmRej::private_data)> == kCmBodySize);
static_assert(36 + std::tuple_size_v<decltype(CmRep::private_data)> == kCmBodySize);
static_assert(8 + std::tuple_size_v<decltype(CmRtu::private_data)> == kCmBodySize);
static_assert(12 + std::tuple_size_v<decltype(CmDreq::private_data)> == kCmBodySize);
static_assert(8 + std::tuple_size_v<decltype(CmDrep::private_data)> == kCmBodySize);

// ---- REQ (IBTA table 106) ----

[[nodiscard]] bool valid(const CmReq& m) noexcept {
  return fits(m.vendor_id, 24) && fits(m.local_qpn, 24) && fits(m.local_eecn, 24) &&
         fits(m.remote_eecn, 24) && fits(m.remote_cm_response_timeout, 5) &&
         fits(m.transport_service_type, 2) && fits(m.starting_psn, 24) &&
         fits(m.local_cm_response_timeout, 5) && fits(m.retry_count, 3) && fits(m.path_mtu, 4) &&
         fits(m.rnr_retry_count, 3) && fits(m.max_cm_retries, 4) &&
         fits(m.extended_transport_type, 3) && fits(m.primary_flow_label, 20) &&
         fits(m.reserved_90, 6) && fits(m.primary_packet_rate, 6) && fits(m.primary_sl, 4) &&
         fits(m.reserved_94, 3) && fits(m.primary_local_ack_timeout, 5) && fits(m.reserved_95, 3);
}

void write(const CmReq& m, std::uint8_t* b) noexcept {
  store_be32(b + 0, m.local_comm_id);
  store_be32(b + 4, (std::uint32_t{m.reserved_4} << 24) | m.vendor_id);
  store_be64(b + 8, m.service_id);
  store_be64(b + 16, m.local_ca_guid);
  store_be32(b + 24, m.reserved_24);
  store_be32(b + 28, m.local_qkey);
  store_be24(b + 32, m.local_qpn);
  b[35] = m.responder_resources;
  store_be24(b + 36, m.local_eecn);
  b[39] = m.initiator_depth;
  store_be24(b + 40, m.remote_eecn);
  b[43] = u8((m.remote_cm_response_timeout << 3) | (m.transport_service_type << 1) |
             (m.end_to_end_flow_control ? 1 : 0));
  store_be24(b + 44, m.starting_psn);
  b[47] = u8((m.local_cm_response_timeout << 3) | m.retry_count);
  store_be16(b + 48, m.pkey);
  b[50] = u8((m.path_mtu << 4) | (m.rdc_exists ? 0x08 : 0) | m.rnr_retry_count);
  b[51] = u8((m.max_cm_retries << 4) | (m.srq ? 0x08 : 0) | m.extended_transport_type);
  store_be16(b + 52, m.primary_local_lid);
  store_be16(b + 54, m.primary_remote_lid);
  copy_in(b + 56, m.primary_local_gid);
  copy_in(b + 72, m.primary_remote_gid);
  store_be32(b + 88, (m.primary_flow_label << 12) | (std::uint32_t{m.reserved_90} << 6) |
                         m.primary_packet_rate);
  b[92] = m.primary_traffic_class;
  b[93] = m.primary_hop_limit;
  b[94] = u8((m.primary_sl << 4) | (m.primary_subnet_local ? 0x08 : 0) | m.reserved_94);
  b[95] = u8((m.primary_local_ack_timeout << 3) | m.reserved_95);
  copy_in(b + 96, m.alternate_path);
  copy_in(b + 140, m.private_data);
}

[[nodiscard]] CmReq read_req(const std::uint8_t* b) noexcept {
  CmReq m;
  m.local_comm_id = load_be32(b + 0);
  m.reserved_4 = b[4];
  m.vendor_id = load_be24(b + 5);
  m.service_id = load_be64(b + 8);
  m.local_ca_guid = load_be64(b + 16);
  m.reserved_24 = load_be32(b + 24);
  m.local_qkey = load_be32(b + 28);
  m.local_qpn = load_be24(b + 32);
  m.responder_resources = b[35];
  m.local_eecn = load_be24(b + 36);
  m.initiator_depth = b[39];
  m.remote_eecn = load_be24(b + 40);
  m.remote_cm_response_timeout = u8(b[43] >> 3);
  m.transport_service_type = u8((b[43] >> 1) & 0x03U);
  m.end_to_end_flow_control = (b[43] & 0x01U) != 0;
  m.starting_psn = load_be24(b + 44);
  m.local_cm_response_timeout = u8(b[47] >> 3);
  m.retry_count = u8(b[47] & 0x07U);
  m.pkey = load_be16(b + 48);
  m.path_mtu = u8(b[50] >> 4);
  m.rdc_exists = (b[50] & 0x08U) != 0;
  m.rnr_retry_count = u8(b[50] & 0x07U);
  m.max_cm_retries = u8(b[51] >> 4);
  m.srq = (b[51] & 0x08U) != 0;
  m.extended_transport_type = u8(b[51] & 0x07U);
  m.primary_local_lid = load_be16(b + 52);
  m.primary_remote_lid = load_be16(b + 54);
  copy_out(m.primary_local_gid, b + 56);
  copy_out(m.primary_remote_gid, b + 72);
  const std::uint32_t w88 = load_be32(b + 88);
  m.primary_flow_label = w88 >> 12;
  m.reserved_90 = u8((w88 >> 6) & 0x3FU);
  m.primary_packet_rate = u8(w88 & 0x3FU);
  m.primary_traffic_class = b[92];
  m.primary_hop_limit = b[93];
  m.primary_sl = u8(b[94] >> 4);
  m.primary_subnet_local = (b[94] & 0x08U) != 0;
  m.reserved_94 = u8(b[94] & 0x07U);
  m.primary_local_ack_timeout = u8(b[95] >> 3);
  m.reserved_95 = u8(b[95] & 0x07U);
  copy_out(m.alternate_path, b + 96);
  copy_out(m.private_data, b + 140);
  return m;
}

// ---- MRA (IBTA table 107) ----

[[nodiscard]] bool valid(const CmMra& m) noexcept {
  return fits(m.message_mraed, 2) && fits(m.reserved_8, 6) && fits(m.service_timeout, 5) &&
         fits(m.reserved_9, 3);
}

void write(const CmMra& m, std::uint8_t* b) noexcept {
  store_be32(b + 0, m.local_comm_id);
  store_be32(b + 4, m.remote_comm_id);
  b[8] = u8((m.message_mraed << 6) | m.reserved_8);
  b[9] = u8((m.service_timeout << 3) | m.reserved_9);
  copy_in(b + 10, m.private_data);
}

[[nodiscard]] CmMra read_mra(const std::uint8_t* b) noexcept {
  CmMra m;
  m.local_comm_id = load_be32(b + 0);
  m.remote_comm_id = load_be32(b + 4);
  m.message_mraed = u8(b[8] >> 6);
  m.reserved_8 = u8(b[8] & 0x3FU);
  m.service_timeout = u8(b[9] >> 3);
  m.reserved_9 = u8(b[9] & 0x07U);
  copy_out(m.private_data, b + 10);
  return m;
}

// ---- REJ (IBTA table 108) ----

[[nodiscard]] bool valid(const CmRej& m) noexcept {
  return fits(m.message_rejected, 2) && fits(m.reserved_8, 6) &&
         m.reject_info_length <= kCmRejAriSize && fits(m.reserved_9, 1);
}

void write(const CmRej& m, std::uint8_t* b) noexcept {
  store_be32(b + 0, m.local_comm_id);
  store_be32(b + 4, m.remote_comm_id);
  b[8] = u8((m.message_rejected << 6) | m.reserved_8);
  b[9] = u8((m.reject_info_length << 1) | m.reserved_9);
  store_be16(b + 10, m.reason);
  copy_in(b + 12, m.ari);
  copy_in(b + 84, m.private_data);
}

[[nodiscard]] Result<CmRej> read_rej(const std::uint8_t* b) noexcept {
  CmRej m;
  m.local_comm_id = load_be32(b + 0);
  m.remote_comm_id = load_be32(b + 4);
  m.message_rejected = u8(b[8] >> 6);
  m.reserved_8 = u8(b[8] & 0x3FU);
  m.reject_info_length = u8(b[9] >> 1);
  m.reserved_9 = u8(b[9] & 0x01U);
  // The 7-bit length can say up to 127, but the ARI holds 72 bytes: a consumer that trusted a
  // larger value would read the private data as ARI.
  if (m.reject_info_length > kCmRejAriSize) return Error::bad_field;
  m.reason = load_be16(b + 10);
  copy_out(m.ari, b + 12);
  copy_out(m.private_data, b + 84);
  return m;
}

// ---- REP (IBTA table 110) ----

[[nodiscard]] bool valid(const CmRep& m) noexcept {
  return fits(m.local_qpn, 24) && fits(m.local_eecn, 24) && fits(m.starting_psn, 24) &&
         fits(m.vendor_id, 24) && fits(m.target_ack_delay, 5) && fits(m.failover_accepted, 2) &&
         fits(m.rnr_retry_count, 3) && fits(m.reserved_27, 4);
}

void write(const CmRep& m, std::uint8_t* b) noexcept {
  store_be32(b + 0, m.local_comm_id);
  store_be32(b + 4, m.remote_comm_id);
  store_be32(b + 8, m.local_qkey);
  store_be24(b + 12, m.local_qpn);
  b[15] = u8(m.vendor_id >> 16);
  store_be24(b + 16, m.local_eecn);
  b[19] = u8(m.vendor_id >> 8);
  store_be24(b + 20, m.starting_psn);
  b[23] = u8(m.vendor_id);
  b[24] = m.responder_resources;
  b[25] = m.initiator_depth;
  b[26] = u8((m.target_ack_delay << 3) | (m.failover_accepted << 1) |
             (m.end_to_end_flow_control ? 1 : 0));
  b[27] = u8((m.rnr_retry_count << 5) | (m.srq ? 0x10 : 0) | m.reserved_27);
  store_be64(b + 28, m.local_ca_guid);
  copy_in(b + 36, m.private_data);
}

[[nodiscard]] CmRep read_rep(const std::uint8_t* b) noexcept {
  CmRep m;
  m.local_comm_id = load_be32(b + 0);
  m.remote_comm_id = load_be32(b + 4);
  m.local_qkey = load_be32(b + 8);
  m.local_qpn = load_be24(b + 12);
  m.local_eecn = load_be24(b + 16);
  m.starting_psn = load_be24(b + 20);
  m.vendor_id = (std::uint32_t{b[15]} << 16) | (std::uint32_t{b[19]} << 8) | b[23];
  m.responder_resources = b[24];
  m.initiator_depth = b[25];
  m.target_ack_delay = u8(b[26] >> 3);
  m.failover_accepted = u8((b[26] >> 1) & 0x03U);
  m.end_to_end_flow_control = (b[26] & 0x01U) != 0;
  m.rnr_retry_count = u8(b[27] >> 5);
  m.srq = (b[27] & 0x10U) != 0;
  m.reserved_27 = u8(b[27] & 0x0FU);
  m.local_ca_guid = load_be64(b + 28);
  copy_out(m.private_data, b + 36);
  return m;
}

// ---- RTU, DREQ, DREP (IBTA tables 111-113) ----

[[nodiscard]] bool valid(const CmRtu&) noexcept {
  return true;
}
[[nodiscard]] bool valid(const CmDrep&) noexcept {
  return true;
}
[[nodiscard]] bool valid(const CmDreq& m) noexcept {
  return fits(m.remote_qpn, 24);
}

void write(const CmRtu& m, std::uint8_t* b) noexcept {
  store_be32(b + 0, m.local_comm_id);
  store_be32(b + 4, m.remote_comm_id);
  copy_in(b + 8, m.private_data);
}
void write(const CmDrep& m, std::uint8_t* b) noexcept {
  store_be32(b + 0, m.local_comm_id);
  store_be32(b + 4, m.remote_comm_id);
  copy_in(b + 8, m.private_data);
}
void write(const CmDreq& m, std::uint8_t* b) noexcept {
  store_be32(b + 0, m.local_comm_id);
  store_be32(b + 4, m.remote_comm_id);
  store_be24(b + 8, m.remote_qpn);
  b[11] = m.reserved_11;
  copy_in(b + 12, m.private_data);
}

[[nodiscard]] CmRtu read_rtu(const std::uint8_t* b) noexcept {
  CmRtu m;
  m.local_comm_id = load_be32(b + 0);
  m.remote_comm_id = load_be32(b + 4);
  copy_out(m.private_data, b + 8);
  return m;
}
[[nodiscard]] CmDrep read_drep(const std::uint8_t* b) noexcept {
  CmDrep m;
  m.local_comm_id = load_be32(b + 0);
  m.remote_comm_id = load_be32(b + 4);
  copy_out(m.private_data, b + 8);
  return m;
}
[[nodiscard]] CmDreq read_dreq(const std::uint8_t* b) noexcept {
  CmDreq m;
  m.local_comm_id = load_be32(b + 0);
  m.remote_comm_id = load_be32(b + 4);
  m.remote_qpn = load_be24(b + 8);
  m.reserved_11 = b[11];
  copy_out(m.private_data, b + 12);
  return m;
}

[[nodiscard]] bool is_cm_header(const MadHeader& h) noexcept {
  return h.base_version == kMadBaseVersion && h.mgmt_class == kMadClassCm &&
         h.class_version == kCmClassVersion && h.method == kMadMethodSend;
}

void write_header(const MadHeader& h, std::uint8_t* b) noexcept {
  b[0] = h.base_version;
  b[1] = h.mgmt_class;
  b[2] = h.class_version;
  b[3] = h.method;
  store_be16(b + 4, h.status);
  store_be16(b + 6, h.class_specific);
  store_be64(b + 8, h.transaction_id);
  store_be16(b + 16, h.attribute_id);
  store_be16(b + 18, h.reserved);
  store_be32(b + 20, h.attribute_modifier);
}

[[nodiscard]] MadHeader read_header(const std::uint8_t* b) noexcept {
  MadHeader h;
  h.base_version = b[0];
  h.mgmt_class = b[1];
  h.class_version = b[2];
  h.method = b[3];
  h.status = load_be16(b + 4);
  h.class_specific = load_be16(b + 6);
  h.transaction_id = load_be64(b + 8);
  h.attribute_id = load_be16(b + 16);
  h.reserved = load_be16(b + 18);
  h.attribute_modifier = load_be32(b + 20);
  return h;
}

}  // namespace

std::string_view cm_attribute_name(std::uint16_t attribute_id) noexcept {
  switch (attribute_id) {
    case kCmAttrClassPortInfo:
      return "ClassPortInfo";
    case kCmAttrReq:
      return "REQ";
    case kCmAttrMra:
      return "MRA";
    case kCmAttrRej:
      return "REJ";
    case kCmAttrRep:
      return "REP";
    case kCmAttrRtu:
      return "RTU";
    case kCmAttrDreq:
      return "DREQ";
    case kCmAttrDrep:
      return "DREP";
    case kCmAttrSidrReq:
      return "SIDR_REQ";
    case kCmAttrSidrRep:
      return "SIDR_REP";
    case kCmAttrLap:
      return "LAP";
    case kCmAttrApr:
      return "APR";
    default:
      return "unknown";
  }
}

std::string_view cm_rej_reason_name(std::uint16_t reason) noexcept {
  // IBTA table 109, in order; 34 is not assigned.
  static constexpr std::array<std::string_view, 36> kNames = {
      "unknown",
      "no QP available",
      "no EEC available",
      "no resources available",
      "timeout",
      "unsupported request",
      "invalid communication ID",
      "invalid communication instance",
      "invalid service ID",
      "invalid transport service type",
      "stale connection",
      "RDC does not exist",
      "primary remote GID rejected",
      "primary remote LID rejected",
      "invalid primary SL",
      "invalid primary traffic class",
      "invalid primary hop limit",
      "invalid primary packet rate",
      "alternate remote GID rejected",
      "alternate remote LID rejected",
      "invalid alternate SL",
      "invalid alternate traffic class",
      "invalid alternate hop limit",
      "invalid alternate packet rate",
      "port CM redirection",
      "port redirection",
      "invalid path MTU",
      "insufficient responder resources",
      "consumer-defined",
      "invalid RNR NAK retry count",
      "duplicate local communication ID",
      "unsupported class version",
      "invalid primary flow label",
      "invalid alternate flow label",
      "unknown",
      "vendor option not supported",
  };
  return reason < kNames.size() ? kNames[reason] : kNames[0];
}

Result<RdmaCmIpHeader> decode_rdma_cm_ip_header(ByteView private_data) noexcept {
  if (private_data.size() < kRdmaCmIpHeaderSize) return Error::too_short;
  const std::uint8_t* b = private_data.data();
  RdmaCmIpHeader h;
  h.version = b[0];
  h.ip_version = b[1];
  if (h.version != kRdmaCmVersion || (h.ip_version >> 4) != 4) return Error::bad_field;
  h.src_port = load_be16(b + 2);
  h.src_ip = load_be32(b + 4 + 12);
  h.dst_ip = load_be32(b + 20 + 12);
  return h;
}

Result<std::size_t> encode_rdma_cm_ip_header(const RdmaCmIpHeader& header,
                                             MutableByteView out) noexcept {
  if (header.version != kRdmaCmVersion || (header.ip_version >> 4) != 4) {
    return Error::value_out_of_range;
  }
  if (out.size() < kRdmaCmIpHeaderSize) return Error::buffer_too_small;
  std::uint8_t* b = out.data();
  std::fill_n(b, kRdmaCmIpHeaderSize, std::uint8_t{0});
  b[0] = header.version;
  b[1] = header.ip_version;
  store_be16(b + 2, header.src_port);
  store_be32(b + 4 + 12, header.src_ip);
  store_be32(b + 20 + 12, header.dst_ip);
  return kRdmaCmIpHeaderSize;
}

Result<MadHeader> decode_mad_header(ByteView bytes) noexcept {
  if (bytes.size() < kMadHeaderSize) return Error::too_short;
  return read_header(bytes.data());
}

Result<std::size_t> encode_mad_header(const MadHeader& header, MutableByteView out) noexcept {
  if (out.size() < kMadHeaderSize) return Error::buffer_too_small;
  write_header(header, out.data());
  return kMadHeaderSize;
}

std::uint16_t cm_attribute_id(const CmBody& body) noexcept {
  std::uint16_t id = 0;
  for_alternative(body, [&id](const auto& m) { id = std::decay_t<decltype(m)>::kAttributeId; });
  return id;
}

Result<CmMad> decode_cm_mad(ByteView mad) noexcept {
  if (mad.size() < kMadSize) return Error::too_short;
  if (mad.size() > kMadSize) return Error::too_long;
  const MadHeader header = read_header(mad.data());
  if (!is_cm_header(header)) return Error::bad_mad_header;
  const std::uint8_t* body = mad.data() + kCmBodyOffset;
  switch (header.attribute_id) {
    case kCmAttrReq:
      return CmMad{header, read_req(body)};
    case kCmAttrMra:
      return CmMad{header, read_mra(body)};
    case kCmAttrRej: {
      Result<CmRej> rej = read_rej(body);
      if (!rej) return rej.error();
      return CmMad{header, *rej};
    }
    case kCmAttrRep:
      return CmMad{header, read_rep(body)};
    case kCmAttrRtu:
      return CmMad{header, read_rtu(body)};
    case kCmAttrDreq:
      return CmMad{header, read_dreq(body)};
    case kCmAttrDrep:
      return CmMad{header, read_drep(body)};
    default:
      return Error::unknown_attribute;
  }
}

Result<std::size_t> encode_cm_mad(const CmMad& mad, MutableByteView out) noexcept {
  if (!is_cm_header(mad.header)) return Error::bad_mad_header;
  bool fields_fit = false;
  for_alternative(mad.body, [&fields_fit](const auto& m) { fields_fit = valid(m); });
  if (!fields_fit) return Error::value_out_of_range;
  if (out.size() < kMadSize) return Error::buffer_too_small;
  MadHeader header = mad.header;
  header.attribute_id = cm_attribute_id(mad.body);
  write_header(header, out.data());
  std::uint8_t* body = out.data() + kCmBodyOffset;
  for_alternative(mad.body, [body](const auto& m) { write(m, body); });
  return kMadSize;
}

}  // namespace naa::protocol
