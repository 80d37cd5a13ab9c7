#!/usr/bin/env python3
"""Writes rtl/icrc_check/icrc_matrices_pkg.sv: the constant XOR matrices icrc_check is built from.

The raw zlib CRC-32 register update (PROTOCOL.md 2: reflected 0xEDB88320, no init, no final xor)
is linear over GF(2), so every step icrc_check takes is a constant matrix, written here as one
mask per output bit (bit i = parity(input & mask_i)), a form both Yosys and Verilator read
(docs/rtl/synthesis.md: Yosys reads no unpacked-array constant, so no lookup tables):

- beat_crc(x):        the register after the 64 bytes x (byte 0 in bits 7:0), from 0. A beat of
                      W < 64 bytes goes in the top W bytes: leading zero bytes leave a zero
                      register at zero.
- zeros_fold(w, c):   the register c after w zero bytes (w a power of two, 1..64).
- header_fold(w, h):  the register after the ICRC seed (init 0xFFFFFFFF, 8 bytes of 0xFF), the 28
                      bytes h (IPv4 + UDP header, variant fields already ones) and w zero bytes.
- unfold_low(b, c):   c with 4 + b zero bytes taken back off (b in 0..7): the inverse of
                      zeros_fold(4 + b, .).
- unfold_high(a, c):  c with 8a zero bytes taken back off (a in 0..8).

icrc_check folds every beat whole, the last one padded with zero bytes to W, so its register is
the datagram's advanced by k = W - n zero bytes; unfold_high(k / 8, unfold_low(k % 8, .)) takes
those and the 4 ICRC bytes back off (rtl/icrc_check/icrc_check.sv). The script checks each
function against a bit-serial CRC before writing. Committed; CTest `rtl_icrc_matrices_pkg` checks
that the file is what this script writes.

Usage: gen_icrc_matrices_pkg.py [OUTPUT]   (default: icrc_matrices_pkg.sv beside this script;
                                            - = stdout)
"""
import os
import random
import sys

POLY = 0xEDB88320
MASK32 = 0xFFFFFFFF
WIDTHS = (1, 2, 4, 8, 16, 32, 64)
HEADER_BYTES = 28
BEAT_BYTES = 64


def raw_update(c, data):
    """The raw register after the bytes `data`, bit-serial (the reference)."""
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (POLY if c & 1 else 0)
    return c


def unfold_zero_byte(c):
    """The register before one zero byte was folded in: eight bit steps run backwards (the
    polynomial's top bit is set, so a set bit 31 shows that the step XORed it in)."""
    for _ in range(8):
        c = (((c ^ POLY) << 1) | 1) & MASK32 if c & 0x80000000 else (c << 1) & MASK32
    return c


def unfold(c, k):
    for _ in range(k):
        c = unfold_zero_byte(c)
    return c


def seed():
    return raw_update(MASK32, [0xFF] * 8)


def columns(fn, nbits):
    """The 32 row masks (bit i: the input bits that output bit i depends on) of the linear fn."""
    rows = [0] * 32
    for j in range(nbits):
        col = fn(1 << j)
        for i in range(32):
            if col >> i & 1:
                rows[i] |= 1 << j
    return rows


def to_bytes(v, n):
    return [(v >> (8 * k)) & 0xFF for k in range(n)]


def beat_rows():
    return columns(lambda v: raw_update(0, to_bytes(v, BEAT_BYTES)), 8 * BEAT_BYTES)


def zeros_rows(w):
    return columns(lambda v: raw_update(v, [0] * w), 32)


def header_rows(w):
    return columns(lambda v: raw_update(0, to_bytes(v, HEADER_BYTES) + [0] * w), 8 * HEADER_BYTES)


def header_constant(w):
    return raw_update(raw_update(seed(), [0] * HEADER_BYTES), [0] * w)


def apply(rows, v, const=0):
    r = const
    for i, m in enumerate(rows):
        r ^= (bin(v & m).count("1") & 1) << i
    return r


def self_check():
    rng = random.Random(24)
    beat = beat_rows()
    for _ in range(20):
        w = rng.choice(WIDTHS)
        c = rng.getrandbits(32)
        data = [rng.getrandbits(8) for _ in range(w)]
        # One beat from register c: zeros_fold(w, c) ^ beat_crc(top-placed data).
        x = sum(b << (8 * (BEAT_BYTES - w + k)) for k, b in enumerate(data))
        assert apply(zeros_rows(w), c) ^ apply(beat, x) == raw_update(c, data)
        hdr = [rng.getrandbits(8) for _ in range(HEADER_BYTES)]
        hv = sum(b << (8 * k) for k, b in enumerate(hdr))
        assert apply(header_rows(w), hv, header_constant(w)) == \
            raw_update(raw_update(seed(), hdr), [0] * w)
        k = rng.randrange(0, 72)
        assert raw_update(unfold(c, k), [0] * k) == c
    for b in range(8):
        c = rng.getrandbits(32)
        assert apply(columns(lambda v, b=b: unfold(v, 4 + b), 32), c) == unfold(c, 4 + b)


def sv_rows(name, rows, nbits, indent="  "):
    """A packed constant of 32 masks, mask i at [nbits*i +: nbits] (bit 31's first)."""
    digits = (nbits + 3) // 4
    lines = [f"{indent}localparam logic [32*{nbits}-1:0] {name} = {{"]
    for i in reversed(range(32)):
        sep = "," if i else ""
        lines.append(f"{indent}  {nbits}'h{rows[i]:0{digits}x}{sep}")
    lines.append(f"{indent}}};")
    return lines


def sv_apply(fn, arg, nbits, table, const=None, indent="      "):
    """Output bit i = parity(arg & mask i). An input wider than 64 bits is ANDed with its mask
    64 bits at a time and the slices XORed before the one reduction: the same function, which
    Verilator evaluates as 64-bit words instead of a wide value 32 bits at a time (issue 31)."""
    init = f"32'h{const:08x}" if const is not None else "'0"
    if nbits <= 64:
        parity = f"(^({arg} & {table}[{nbits}*i +: {nbits}]))"
    else:
        terms = []
        for lo in range(0, nbits, 64):
            bits = min(64, nbits - lo)
            a, m = f"{arg}[{lo} +: {bits}]", f"{table}[{nbits}*i + {lo} +: {bits}]"
            # A slice narrower than 64 bits is zero-extended (parity unchanged).
            terms.append(f"({a} & {m})" if bits == 64 else f"(64'({a}) & 64'({m}))")
        parity = "(^(" + f"\n{indent}      ^ ".join(terms) + "))"
    return [f"{indent}{fn} = {init};",
            f"{indent}for (int unsigned i = 0; i < 32; i++)",
            f"{indent}  {fn}[i] = {fn}[i] ^ {parity};"]


def render():
    out = [
        "// GENERATED by rtl/icrc_check/gen_icrc_matrices_pkg.py: do not edit (CTest",
        "// rtl_icrc_matrices_pkg checks it). icrc_matrices_pkg: the raw zlib CRC-32 register steps",
        "// of icrc_check (PROTOCOL.md 2) as constant XOR matrices, one mask per output bit (the",
        "// script's docstring says what each function computes and why this form).",
        "`default_nettype none",
        "",
        "package icrc_matrices_pkg;",
        "",
    ]
    out += ["  // beat_crc: 64 bytes from a zero register."]
    out += sv_rows("BeatRows", beat_rows(), 8 * BEAT_BYTES)
    for w in WIDTHS:
        out += sv_rows(f"Zeros{w}Rows", zeros_rows(w), 32)
        out += sv_rows(f"Header{w}Rows", header_rows(w), 8 * HEADER_BYTES)
    for b in range(8):
        out += sv_rows(f"UnfoldLow{b}Rows", columns(lambda v, b=b: unfold(v, 4 + b), 32), 32)
    for a in range(9):
        out += sv_rows(f"UnfoldHigh{a}Rows", columns(lambda v, a=a: unfold(v, 8 * a), 32), 32)
    out += ["",
            "  function automatic logic [31:0] beat_crc(logic [8*64-1:0] x);"]
    out += sv_apply("beat_crc", "x", 8 * BEAT_BYTES, "BeatRows", indent="    ")
    out += ["  endfunction", "",
            "  function automatic logic [31:0] zeros_fold(int unsigned w, logic [31:0] c);",
            "    zeros_fold = '0;",
            "    case (w)"]
    for w in WIDTHS:
        out += [f"      {w}: begin"] + sv_apply("zeros_fold", "c", 32, f"Zeros{w}Rows",
                                                indent="        ") + ["      end"]
    out += ["      default: ;", "    endcase", "  endfunction", "",
            "  function automatic logic [31:0] header_fold(int unsigned w, logic [223:0] h);",
            "    header_fold = '0;",
            "    case (w)"]
    for w in WIDTHS:
        out += [f"      {w}: begin"] + sv_apply("header_fold", "h", 8 * HEADER_BYTES,
                                                f"Header{w}Rows", header_constant(w),
                                                indent="        ") + ["      end"]
    out += ["      default: ;", "    endcase", "  endfunction", "",
            "  function automatic logic [31:0] unfold_low(logic [2:0] b, logic [31:0] c);",
            "    unfold_low = '0;",
            "    case (b)"]
    for b in range(8):
        out += [f"      3'd{b}: begin"] + sv_apply("unfold_low", "c", 32, f"UnfoldLow{b}Rows",
                                                   indent="        ") + ["      end"]
    out += ["      default: ;", "    endcase", "  endfunction", "",
            "  function automatic logic [31:0] unfold_high(logic [3:0] a, logic [31:0] c);",
            "    unfold_high = '0;",
            "    case (a)"]
    for a in range(9):
        out += [f"      4'd{a}: begin"] + sv_apply("unfold_high", "c", 32, f"UnfoldHigh{a}Rows",
                                                   indent="        ") + ["      end"]
    out += ["      default: ;", "    endcase", "  endfunction", "", "endpackage", "",
            "`default_nettype wire", ""]
    return "\n".join(out)


def main():
    self_check()
    text = render()
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "icrc_matrices_pkg.sv")
    if target == "-":
        sys.stdout.write(text)
    else:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
