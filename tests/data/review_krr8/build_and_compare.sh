#!/bin/sh
# Review rev-krr8: build the harness with the clones (AVX2 chosen at load time on an AVX2 CPU), without them,
# and (the control) with FMA contraction allowed; compare every double. Run from the repository root.
set -e
D=tests/data/review_krr8
g++ -std=c++17 -O3 -Icpp -o /tmp/krr8_clones $D/clones_harness.cpp
g++ -std=c++17 -O3 -Icpp -DSHARPDP_KRR_NO_CLONES -o /tmp/krr8_plain $D/clones_harness.cpp
g++ -std=c++17 -O3 -Icpp -DSHARPDP_KRR_NO_CLONES -mavx2 -mfma -ffp-contract=fast -o /tmp/krr8_fma $D/clones_harness.cpp
/tmp/krr8_clones "$@" > /tmp/krr8_clones.txt
/tmp/krr8_plain "$@" > /tmp/krr8_plain.txt
/tmp/krr8_fma "$@" > /tmp/krr8_fma.txt
cmp /tmp/krr8_clones.txt /tmp/krr8_plain.txt && echo "clones == plain: identical"
cmp -s /tmp/krr8_plain.txt /tmp/krr8_fma.txt && echo "CONTROL FAILED: fma build identical" || echo "control: the fma build differs (the comparison can fail)"
tail -1 /tmp/krr8_plain.txt
