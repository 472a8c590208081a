"""Closed-form leg lower values (ViaBottom._closed_leg, Lemma 9.3's premise) against the independent n = 2, 3
mpmath reference of gauss_ref.py: lower <= D_up (n = 2 exact; n = 3: <= the reference's upper end).
Prints the worst ratio closed_lower / reference per (n, leg)."""
import json
from gauss_ref import leg_ref
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

out = []
for n in (2, 3):
    for s in (0.3, 0.46, 0.7, 1.0, 3.0):
        vb = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace")._bottom
        for e in (0.0, 0.01, 0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0):
            for j in (0, 1):
                lo, up = vb._closed_leg(j, e, 0.01)
                rlo, rup = leg_ref(s, e, j, n)
                out.append(dict(n=n, s=s, e=e, j=j, closed=(lo, up), ref=(rlo, rup)))
                bad = lo > rup * (1 + 1e-9) or up < rlo * (1 - 1e-9)
                if bad:
                    print("VIOLATION", out[-1], flush=True)
json.dump(out, open("closed_vs_ref.json", "w"), indent=0)
worst = max(out, key=lambda d: d["closed"][0] / d["ref"][1] if d["ref"][1] > 0 else 0)
print("worst lower/ref_up", worst, worst["closed"][0] / worst["ref"][1])
