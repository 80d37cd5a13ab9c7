#!/usr/bin/env python3
"""Resources and logic depth of one block synthesized by scripts/synth.sh.

Usage: synth_paths.py <block> <top module> <netlist.json>   (prints one tab-separated line)

Reads the flattened netlist Yosys wrote (`write_json` after `synth_xilinx -family xcup`) and
prints: block, LUT, LUTRAM, FF, BRAM, DSP, CARRY, latches, LUT levels of
the worst path, carry cells on it, MUXF cells on it, its start and end.

The metric (docs/rtl/synthesis.md "What is measured"): a path runs from a sequential element's
output or an input port to a sequential element's input or an output port. Its depth in LUT levels
is the number of LUT cells on it (LUT1..LUT6, and INV, which Yosys leaves for an inverter a LUT
would absorb: counted, to err on the deep side). Carry cells (CARRY4/CARRY8) and wide-mux cells
(MUXF7/F8/F9) are not levels but are counted on the path and reported. A distributed RAM's read
(address to data out) counts as one LUT level; its write inputs end a path. The worst path is the
one with the most LUT levels, then the most carry cells, then the most MUXF cells. A cell is taken
as a whole: every input reaches every output (conservative for CARRY and LUTRAM cells).
"""
import json
import sys
from collections import Counter

LUTS = {"LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "LUT6_2", "INV"}
CARRIES = {"CARRY4", "CARRY8"}
MUXFS = {"MUXF7", "MUXF8", "MUXF9"}
PASS = {"BUFG", "IBUF", "OBUF"}  # buffers: no level (only without -noiopad)
LATCHES = {"LDCE", "LDPE", "LDCPE"}
# Distributed RAM pins that write (end a path); the others are read addresses.
RAM_WRITE_PINS = ("D", "DI", "WE", "WCLK", "CLK")


def is_lutram(cell_type):
    return cell_type.startswith("RAM") and not cell_type.startswith("RAMB")


def weight(cell_type):
    """(LUT levels, carry cells, MUXF cells) a combinational cell adds, or None if sequential."""
    if cell_type in LUTS or is_lutram(cell_type):
        return (1, 0, 0)
    if cell_type in CARRIES:
        return (0, 1, 0)
    if cell_type in MUXFS:
        return (0, 0, 1)
    if cell_type in PASS or cell_type in ("GND", "VCC"):
        return (0, 0, 0)
    return None  # FD*, RAMB*, URAM, DSP48E2, SRL*, latches: sequential


def worst_path(module):
    names = {}
    for name, net in module["netnames"].items():
        for b in net["bits"]:
            if isinstance(b, int) and (b not in names or net.get("hide_name", 0) == 0):
                names[b] = name
    driver = {}  # bit -> (cell name, weight, input bits)
    sinks = []   # bits that end a path
    ends = {}    # sink bit -> what it ends at: the output port, or the register's output net
    for pname, port in module["ports"].items():
        if port["direction"] == "output":
            sinks += [b for b in port["bits"] if isinstance(b, int)]
            ends.update((b, pname) for b in port["bits"] if isinstance(b, int))
    for cname, cell in module["cells"].items():
        t = cell["type"]
        w = weight(t)
        dirs = cell["port_directions"]
        ins, outs, ending = [], [], []
        for pin, bits in cell["connections"].items():
            bits = [b for b in bits if isinstance(b, int)]
            if dirs.get(pin) == "output":
                outs += bits
            elif w is None or (is_lutram(t) and pin.upper().startswith(RAM_WRITE_PINS)
                               and not pin.upper().startswith("DPRA")):
                ending += bits
            else:
                ins += bits
        for b in outs:
            if w is not None:
                driver[b] = (cname, w, ins)
        sinks += ending
        for b in ending:
            ends.setdefault(b, names.get(outs[0], cname) if outs else cname)
    # Longest path by memoized depth-first search (iterative: paths can be long).
    depth, via = {}, {}
    for start in sinks:
        stack = [start]
        while stack:
            b = stack[-1]
            if b in depth:
                stack.pop()
                continue
            d = driver.get(b)
            if d is None:
                depth[b] = (0, 0, 0)
                stack.pop()
                continue
            todo = [i for i in d[2] if i not in depth]
            if todo:
                stack += todo
                continue
            arg = max(d[2], key=lambda i: depth[i]) if d[2] else None
            best = depth[arg] if arg is not None else (0, 0, 0)
            depth[b] = tuple(x + y for x, y in zip(best, d[1]))
            via[b] = arg
            stack.pop()
    if not sinks:
        return (0, 0, 0), "-", "-"
    end = max(sinks, key=lambda s: depth[s])
    start = end
    while via.get(start) is not None:
        start = via[start]
    return depth[end], names.get(start, str(start)), ends.get(end, names.get(end, str(end)))


def main():
    block, top, netlist = sys.argv[1:4]
    with open(netlist, encoding="utf-8") as f:
        module = json.load(f)["modules"][top]
    counts = Counter(c["type"] for c in module["cells"].values())
    lut = sum(n for t, n in counts.items() if t in LUTS)
    lutram = sum(n for t, n in counts.items() if is_lutram(t))
    ff = sum(n for t, n in counts.items() if t.startswith("FD"))
    bram = sum(n for t, n in counts.items() if t.startswith("RAMB"))
    dsp = sum(n for t, n in counts.items() if t.startswith("DSP"))
    carry = sum(n for t, n in counts.items() if t in CARRIES)
    latches = sum(n for t, n in counts.items() if t in LATCHES)
    (levels, path_carry, path_muxf), start, end = worst_path(module)
    print("\t".join(str(x) for x in (block, lut, lutram, ff, bram, dsp, carry, latches, levels,
                                     path_carry, path_muxf, start, end)))


if __name__ == "__main__":
    main()
