import sys
sys.path.insert(0, '/work/wt/rev-binrr9/tests/data/review_rev_binrr9')
from sharpdp.shuffle import RandomizedResponse
from sharpdp.shuffle.accountant.plain import certify_law
from sharpdp.shuffle.laws import laws_for
for line in open(sys.argv[1]):  # lines 'k adjacency eps0 n rel_tol x' (brackets_wide_cells.txt)
    ks, adj, e0s, ns, rts, xs = line.split()
    k, e0, n, rt, x = int(ks), float(e0s), int(ns), float(rts), float(xs)
    ws=[]
    for gl, law in laws_for(RandomizedResponse(k, e0), x, adj):
        r = certify_law(law, float(gl), n, rt, 1)
        ws.append("%.2e/N%d" % ((r.upper-r.lower)/r.lower if r.lower>0 else float('inf'), r.grid.N))
    print(k, adj, e0, n, rt, round(x,5), ws, flush=True)
