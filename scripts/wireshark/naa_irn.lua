-- Wireshark/tshark decoding of the NAA IRN extension (docs/protocol.md section 8):
--   * the IRN opcodes 0xC0-0xD1 (IBTA vol. 1 9.2.1 manufacturer-specific range), which Wireshark's
--     InfiniBand dissector shows as "Unknown OpCode" with an opaque "vendor specific" blob: their
--     RETH, AETH, SackETH, IrnETH, ImmDt and payload, with length checks (a frame that is too short
--     for its headers is flagged malformed);
--   * the capability block in CM REQ (private data byte 36) and REP (private data byte 0).
-- A post-dissector: it reads the frame after Wireshark's own dissectors ran, so every standard
-- field (infiniband.bth.*, infiniband.cm.*) keeps its meaning.
-- Usage: tshark -X lua_script:scripts/wireshark/naa_irn.lua -r run.pcap [-Y naa_irn] [-V]
-- Fields: naa_irn.opcode, naa_irn.reth.{va,r_key,dmalen}, naa_irn.aeth.{syndrome,msn},
--   naa_irn.sack.{psn,bitmap}, naa_irn.recv_wqe_sn (SEND, WRITE with immediate),
--   naa_irn.read_wqe_sn (READ request and responses, docs/protocol.md 8.5), naa_irn.packet_offset,
--   naa_irn.immdt,
--   naa_irn.payload_length, naa_irn.cap.{version,length,flags,irn,bdp_cap,rto_low,rto_high,n}.

local irn = Proto("naa_irn", "NAA IRN extension (docs/protocol.md 8)")

local names = {
  [0xC0] = "IRN SEND First", [0xC1] = "IRN SEND Middle", [0xC2] = "IRN SEND Last",
  [0xC3] = "IRN SEND Last with Immediate", [0xC4] = "IRN SEND Only",
  [0xC5] = "IRN SEND Only with Immediate", [0xC6] = "IRN RDMA WRITE First",
  [0xC7] = "IRN RDMA WRITE Middle", [0xC8] = "IRN RDMA WRITE Last",
  [0xC9] = "IRN RDMA WRITE Last with Immediate", [0xCA] = "IRN RDMA WRITE Only",
  [0xCB] = "IRN RDMA WRITE Only with Immediate", [0xCC] = "IRN Acknowledge",
  [0xCD] = "IRN RDMA READ Request", [0xCE] = "IRN RDMA READ Response First",
  [0xCF] = "IRN RDMA READ Response Middle", [0xD0] = "IRN RDMA READ Response Last",
  [0xD1] = "IRN RDMA READ Response Only",
}
-- Headers per opcode (docs/protocol.md 8.2): reth, aeth, sack, irneth, immdt, payload allowed.
local layout = {
  [0xC0] = {irneth = true, payload = true}, [0xC1] = {irneth = true, payload = true},
  [0xC2] = {irneth = true, payload = true}, [0xC3] = {irneth = true, immdt = true, payload = true},
  [0xC4] = {irneth = true, payload = true}, [0xC5] = {irneth = true, immdt = true, payload = true},
  [0xC6] = {reth = true, payload = true}, [0xC7] = {reth = true, payload = true},
  [0xC8] = {reth = true, payload = true},
  [0xC9] = {reth = true, irneth = true, immdt = true, payload = true},
  [0xCA] = {reth = true, payload = true},
  [0xCB] = {reth = true, irneth = true, immdt = true, payload = true},
  [0xCC] = {aeth = true, sack = true, payload = false},
  -- READ (docs/protocol.md 8.5): the IrnETH holds read_WQE_SN and the packet offset.
  [0xCD] = {reth = true, irneth = true, read = true, payload = false},
  [0xCE] = {irneth = true, read = true, payload = true},
  [0xCF] = {irneth = true, read = true, payload = true},
  [0xD0] = {irneth = true, read = true, payload = true},
  [0xD1] = {irneth = true, read = true, payload = true},
}

local f = irn.fields
f.opcode = ProtoField.uint8("naa_irn.opcode", "IRN opcode", base.HEX, names)
f.reth_va = ProtoField.uint64("naa_irn.reth.va", "RETH virtual address (this packet)", base.HEX)
f.reth_rkey = ProtoField.uint32("naa_irn.reth.r_key", "RETH R_Key", base.HEX)
f.reth_len = ProtoField.uint32("naa_irn.reth.dmalen", "RETH DMA length (rest of the message)")
f.aeth_syn = ProtoField.uint8("naa_irn.aeth.syndrome", "AETH syndrome", base.HEX)
f.aeth_msn = ProtoField.uint24("naa_irn.aeth.msn", "AETH MSN")
f.sack_res = ProtoField.uint8("naa_irn.sack.reserved", "SackETH reserved", base.HEX)
f.sack_psn = ProtoField.uint24("naa_irn.sack.psn", "SACK PSN")
f.sack_bitmap = ProtoField.uint32("naa_irn.sack.bitmap", "Arrived bitmap (cumulative+2+i)", base.HEX)
f.wqe_sn = ProtoField.uint32("naa_irn.recv_wqe_sn", "recv_WQE_SN")
f.read_sn = ProtoField.uint32("naa_irn.read_wqe_sn", "read_WQE_SN")
f.pkt_off = ProtoField.uint32("naa_irn.packet_offset", "Packet offset in the message")
f.immdt = ProtoField.uint32("naa_irn.immdt", "Immediate data", base.HEX)
f.payload_len = ProtoField.uint32("naa_irn.payload_length", "Payload length")
f.cap_magic = ProtoField.string("naa_irn.cap.magic", "Capability magic")
f.cap_version = ProtoField.uint8("naa_irn.cap.version", "Capability version")
f.cap_length = ProtoField.uint8("naa_irn.cap.length", "Capability block length")
f.cap_flags = ProtoField.uint16("naa_irn.cap.flags", "Capability flags", base.HEX)
f.cap_irn = ProtoField.bool("naa_irn.cap.irn", "IRN", 16, nil, 0x0001)
f.cap_bdp = ProtoField.uint16("naa_irn.cap.bdp_cap", "BDP cap (packets)")
f.cap_rto_low = ProtoField.uint8("naa_irn.cap.rto_low", "RTO_low exponent (4.096 us x 2^e)")
f.cap_rto_high = ProtoField.uint8("naa_irn.cap.rto_high", "RTO_high exponent (4.096 us x 2^e)")
f.cap_n = ProtoField.uint8("naa_irn.cap.n", "N (RTO_low while at most N in flight)")

local e_short = ProtoExpert.new("naa_irn.malformed", "IRN packet shorter than its headers",
                                expert.group.MALFORMED, expert.severity.ERROR)
irn.experts = {e_short}

local bth_opcode = Field.new("infiniband.bth.opcode")
local mad_attr = Field.new("infiniband.mad.attributeid")

local function capability(tvb, tree, off, pinfo)
  if tvb:len() < off + 16 or tvb(off, 4):string() ~= "NAAX" then return end
  local t = tree:add(irn, tvb(off, 16), "NAA capability block")
  t:add(f.cap_magic, tvb(off, 4))
  t:add(f.cap_version, tvb(off + 4, 1))
  t:add(f.cap_length, tvb(off + 5, 1))
  local fl = t:add(f.cap_flags, tvb(off + 6, 2))
  fl:add(f.cap_irn, tvb(off + 6, 2))
  t:add(f.cap_bdp, tvb(off + 8, 2))
  t:add(f.cap_rto_low, tvb(off + 10, 1))
  t:add(f.cap_rto_high, tvb(off + 11, 1))
  t:add(f.cap_n, tvb(off + 12, 1))
  pinfo.cols.info:append(" [NAA capabilities: IRN=" .. tostring(tvb(off + 6, 2):uint() % 2 == 1)
                         .. ", BDP cap " .. tvb(off + 8, 2):uint() .. "]")
end

function irn.dissector(tvb, pinfo, tree)
  local op = bth_opcode()
  if op == nil then return end
  local code = op.value
  local bth = op.offset  -- the BTH starts at its opcode byte
  if code == 0x64 then
    local attr = mad_attr()
    if attr == nil then return end
    -- BTH 12 + DETH 8 + MAD header 24, then the CM body: REQ private data at 140 (+36 rdma_cm
    -- header), REP private data at 36.
    local body = bth + 12 + 8 + 24
    if attr.value == 0x10 then capability(tvb, tree, body + 140 + 36, pinfo) end
    if attr.value == 0x13 then capability(tvb, tree, body + 36, pinfo) end
    return
  end
  local l = layout[code]
  if l == nil then return end
  local t = tree:add(irn, tvb(bth), "NAA IRN: " .. names[code])
  t:add(f.opcode, tvb(bth, 1))
  local off = bth + 12
  local need = 12 + (l.reth and 16 or 0) + (l.aeth and 4 or 0) + (l.sack and 8 or 0)
               + (l.irneth and 8 or 0) + (l.immdt and 4 or 0) + 4
  local total = tvb:len() - bth
  if total < need then
    t:add_proto_expert_info(e_short)
    return
  end
  if l.reth then
    t:add(f.reth_va, tvb(off, 8)); t:add(f.reth_rkey, tvb(off + 8, 4))
    t:add(f.reth_len, tvb(off + 12, 4)); off = off + 16
  end
  if l.aeth then
    t:add(f.aeth_syn, tvb(off, 1)); t:add(f.aeth_msn, tvb(off + 1, 3)); off = off + 4
  end
  if l.sack then
    t:add(f.sack_res, tvb(off, 1)); t:add(f.sack_psn, tvb(off + 1, 3))
    t:add(f.sack_bitmap, tvb(off + 4, 4)); off = off + 8
  end
  if l.irneth then
    t:add(l.read and f.read_sn or f.wqe_sn, tvb(off, 4)); t:add(f.pkt_off, tvb(off + 4, 4))
    off = off + 8
  end
  if l.immdt then t:add(f.immdt, tvb(off, 4)); off = off + 4 end
  local pad = math.floor(tvb(bth + 1, 1):uint() / 16) % 4
  local payload = total - need - pad
  if payload < 0 or (not l.payload and total - need ~= 0) then
    t:add_proto_expert_info(e_short)
    return
  end
  t:add(f.payload_len, payload)
  pinfo.cols.protocol:set("IRN")
  pinfo.cols.info:set(names[code] .. " QP=" .. string.format("0x%06x", tvb(bth + 5, 3):uint())
                      .. " PSN=" .. tvb(bth + 9, 3):uint())
end

register_postdissector(irn)
