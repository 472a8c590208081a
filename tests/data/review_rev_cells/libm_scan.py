import ctypes, numpy as np, time
L = ctypes.CDLL("/tmp/rev_cells_harness.so")
P = ctypes.POINTER(ctypes.c_double)
def call(f, *arrs):
    n = len(arrs[0]); out = np.empty(n)
    args = [a.ctypes.data_as(P) for a in arrs] + [out.ctypes.data_as(P), ctypes.c_long(n)]
    getattr(L, f)(*args); return out
EPS = 2.0**-52
rng = np.random.default_rng(1)
N = 2_000_000
def scan(name, x):
    r = call(name, x) / EPS
    i = np.nanargmax(r)
    print(f"{name:8s} max {r[i]:.3f} ulp at x={x[i]!r}  (n={len(x)})")
# ranges the kernel uses
scan("r_exp", rng.uniform(-745, 709, N)); scan("r_exp", rng.uniform(-40, 40, N))
scan("r_expm1", rng.uniform(0, 50, N)); scan("r_expm1", 10**rng.uniform(-20, 1, N))
scan("r_log1p", 10**rng.uniform(-300, 0, N)); scan("r_log1p", rng.uniform(0, 1, N))
scan("r_log", 10**rng.uniform(-307, 308, N)); scan("r_log", rng.uniform(0.5, 2, N))
scan("r_asinh", 10**rng.uniform(-300, 0, N)); scan("r_asinh", rng.uniform(0, 0.5, N))
scan("r_erfc", rng.uniform(0.70, 27, N)); scan("r_erfc", rng.uniform(20, 27, N))
scan("r_erf", rng.uniform(-0.7072, 0.7072, N))
# the kernel's ndtr vs the long double ndtr, relative, in units of the allowance
for lo, hi in [(-37.5, -8), (-8, -1), (-1.5, 1.5), (1, 40), (-37.5, -36)]:
    z = rng.uniform(lo, hi, N)
    v = call("k_ndtr", z); rel = call("l_rel_ndtr", z, v); allow = call("k_rel", z)
    ratio = rel / allow; i = np.argmax(ratio); u = rel / EPS
    j = np.argmax(u - z * z)
    print(f"ndtr z in [{lo},{hi}]: max rel/allowance {ratio[i]:.4f} at z={z[i]!r}; max ulp {u.max():.2f}; max (ulp - z^2) {(u - z*z)[j]:.2f} at {z[j]}")
