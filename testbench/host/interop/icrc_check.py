# Recomputes the ICRC of every RoCEv2 frame in the given pcaps with scapy (an implementation
# independent of ours) and fails if any differs. Run with /usr/bin/python3 (the one with scapy).
import sys
from scapy.all import rdpcap, Ether
from scapy.contrib.roce import BTH
bad = n = 0
for path in sys.argv[1:]:
    for pkt in rdpcap(path):
        if BTH not in pkt:
            continue
        n += 1
        want = pkt[BTH].icrc
        p = pkt.copy()
        p[BTH].icrc = None
        got = Ether(bytes(p))[BTH].icrc
        if got != want:
            bad += 1
print(f"{n} RoCEv2 frames, {bad} with a wrong ICRC")
sys.exit(1 if bad or n == 0 else 0)
