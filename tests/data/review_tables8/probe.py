"""Quick probe: margins of the Taylor path (acc / 2^shift vs 2^128 erf at 400 bits)."""
import importlib.util, math, sys, time
import mpmath
spec = importlib.util.spec_from_file_location("T", "/work/wt/rev-tables8/python/sharpdp/_tables.py")
T = importlib.util.module_from_spec(spec); sys.modules["T"] = T; spec.loader.exec_module(T)

def probe(s, every=1):
    J = T._search_J(s)
    sc = T._scale(T._context(), s)
    rec = []
    T.divmod = lambda a, b: (rec.append((a, b)), divmod(a, b))[1]
    t = time.time(); fast = T._erf_entries_range(J, sc); tf = time.time() - t
    del T.divmod
    if J <= 128:
        return J, None
    mod = rec[0][1]; shift = mod.bit_length() - 1; half = mod >> 1
    K = (shift + 128 - 208) // 5
    ctx = mpmath.mp.clone(); ctx.prec = 400
    scx = ctx.mpf(sc)
    worst = -1e9; mind = 1e9; nredo = 0
    picks = list(range(0, J, every)) + [J - 1]
    direct = dict(zip(picks, T._erf_entries(picks, sc)))
    bad_direct = 0
    for j in picks:
        acc = rec[j][0] - half
        true = ctx.ldexp(ctx.erf((2 * j + 1) / (2 * scx)), 128)
        err = abs(ctx.mpf(acc) / mod - true)
        if err > 0:
            worst = max(worst, float(ctx.log(err, 2)))
        bad_direct += direct[j] != int(ctx.nint(true)) or fast[j] != direct[j]
        d = abs(true - ctx.floor(true) - ctx.mpf(0.5))
        mind = min(mind, float(ctx.log(d, 2)) if d > 0 else -1e9)
    return J, dict(K=K, shift=shift, worst_log2_err=worst, min_log2_dist_half=mind, checked=len(picks), bad=bad_direct, t_fast=tf)

for s in map(float, sys.argv[1:]):
    print(s, probe(s, every=1 if s < 200 else max(1, int(s) // 40)), flush=True)
