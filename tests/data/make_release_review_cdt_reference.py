"""Generate tests/data/release_review_cdt_reference.json for tests/test_release_review.py (ref_cdt, the CDT test).

For the large scales the tests use (40, 256: test_cdt_table_entries_truncation_and_sampler_tv; 409.6 = 0.8 x 2^9:
test_sampler_is_the_documented_procedure_word_for_word), the table of |round(s Z)| from its definition
(``ref_cdt_live``: 300-bit mpmath erf, no sharpdp code): J, the sha256 of the entries (cdt_digest), the tail mass,
and the exact TV between that table's law and R_s (``ref_table_tv``). The tests accept the library's entries as
the definition's when their digest is the stored one, and recompute 24 entries, J's minimality and the tail live.
Run from the repository root (~4 s of CPU):

    python tests/data/make_release_review_cdt_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

import mpmath

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_release_review import cdt_digest, ref_cdt_live, ref_table_tv  # noqa: E402

SCALES = (40.0, 256.0, 409.6)


def main() -> None:
    out: dict = {"source": "tests/data/make_release_review_cdt_reference.py", "scales": {}}
    for s in SCALES:
        ent, J, tail = ref_cdt_live(s)
        tv = ref_table_tv(s, ent, J, tail)
        out["scales"][repr(s)] = {"J": J, "sha256": cdt_digest(ent), "tail": mpmath.nstr(tail, 80),
                                  "tv": mpmath.nstr(tv, 80)}
        print(s, J, mpmath.nstr(tv, 10), flush=True)
    path = HERE / "release_review_cdt_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
