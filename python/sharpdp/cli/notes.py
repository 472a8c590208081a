"""What the commands print beside a certified figure: the randomizer's figures, why a bracket is as wide as
it is, what a release's figures cover (``sharpdp.cli`` re-exports every name)."""

from __future__ import annotations


#: The randomizer figures that ``sharpdp mean`` and ``sharpdp account`` print, under the same
#: names in the text and in --json: name -> what it is (shown in the text output).
BMG_FIELD_HELP = {
    "chi_lo": "lower shuffle index (zero-out): the larger, the more privacy amplification by shuffling (the "
              "blanket bound's index: 0 for the Gaussian randomizer, gamma = 0, whose amplification the accountant "
              "computes from its own law instead)",
    "mse_single": "worst-case MSE of one user's unbiased message (scaled units: the data mapped onto "
                  "[-1/sqrt(d), 1/sqrt(d)] per coordinate, as sharpdp mean --help says); the mean of n messages has "
                  "RMSE/coord sqrt(mse_single / (n d)) for the continuous mechanism",
}

#: What chi_lo is on a replace-one run: the figure is still the zero-out index (the BMG's only closed form), and the
#: replace-one model index is chi_lo / 2 (a changed row moves a message twice as far: docs/calibration.md §2)
_CHI_LO_REPLACE = ("lower shuffle index of the zero-out relation (the BMG's closed form, printed for every adjacency): "
                   "the larger, the more privacy amplification by shuffling; under replace-one (this run) a row "
                   "changed into another moves a message twice as far (sensitivity 2), so the index that matters is "
                   "about chi_lo / 2, the calibration's model (docs/calibration.md §2: a model, not a bound); the "
                   "replace-one figures above come from the accountant's replace-one bound, not from this index")

#: The one-line forms of the field notes that ``sharpdp account`` prints without ``--explain`` (the full ones,
#: :func:`bmg_field_help`, with it); each is the first clause of its full form.
_FIELD_SHORT = {
    "chi_lo": {"zero_out": "lower shuffle index (zero-out): the larger, the more privacy amplification by shuffling",
               "replace": "lower shuffle index of the zero-out relation; replace-one's is about chi_lo / 2 (the "
                          "figures above come from the replace-one bound)"},
    "mse_single": "worst-case MSE of one user's unbiased message (scaled units)",
}


def bmg_field_help(adjacency: str = "zero_out", explain: bool = True) -> dict[str, str]:
    """What the BMG's figures ``chi_lo`` and ``mse_single`` are, for the relation the run certifies: under
    ``"replace"`` chi_lo is still the zero-out index, and the text says so and what replace-one's is (about
    chi_lo / 2, docs/calibration.md §2). ``explain`` False: the one-line forms (``sharpdp account`` without
    ``--explain``, docs/cli.md §10)."""
    replace = adjacency == "replace"
    if not explain:
        return {"chi_lo": _FIELD_SHORT["chi_lo"]["replace" if replace else "zero_out"],  # type: ignore[index]
                "mse_single": str(_FIELD_SHORT["mse_single"])}
    return dict(BMG_FIELD_HELP, **({"chi_lo": _CHI_LO_REPLACE} if replace else {}))


#: The one wording of ``--delta`` in every command's help (``mean``, ``account``, ``histogram``; each adds what it
#: does with it), and the outputs say ``target delta = D`` for the value given (docs/cli.md §8).
DELTA_HELP = "target delta, a probability in (0, 1)"

#: What ``sharpdp mean`` adds under its RMSE line (``sharpdp account`` prints no RMSE).
MEAN_RMSE_NOTE = "the expected RMSE/coord uses the grid release's MSE (at most ~1 % above sqrt(mse_single / (n d)))"


def bracket_note(lo: float, up: float, gap: float, rel_tol: float, charge: float = 0.0) -> str:
    """Why the bracket is as wide as it is (behaviour of ShuffleAccountant.get_delta_bounds).

    ``charge``: the release sampler's charge included in ``up`` (``ShuffleAccountant.sampler_term`` at the
    epsilon evaluated; 0 when unknown). Where it makes at least half of ``up`` the note names it: the upper
    value adds it and the lower value leaves it out, so the gap is that charge, not the grid's size caps
    (docs/cli.md §2).
    """
    if up == 0.0:
        return "delta is 0 (epsilon at or above the randomizer's local epsilon)"
    if gap <= rel_tol:
        return f"relative gap <= {rel_tol:g} (the accountant's target)"
    if charge > 0.0 and charge >= 0.5 * up:  # (0.5 * up rounds to 0 for the least subnormal up)
        return (f"the release sampler's charge (1 + e^eps) n sampler_tv = {charge:.3g} makes most of this value "
                "(docs/sampling.md §4): the upper value adds it, the lower value (of the laws' blanket bound) leaves "
                "it out, so the gap is that charge, not the grid's size caps; the upper value is certified")
    if up < 1e-24:
        return ("value below the accountant's floor 1e-24: only the upper value is certified and refined there "
                "(the lower value may be far below it, or 0); below the floor the upper value is a bound of varying "
                "tightness, so two such values (e.g. at different n) are not comparable: both only say delta < 1e-24")
    return (f"relative gap above the target {rel_tol:g}: the grid hit its size caps or the law is heavy-tailed; "
            "the upper value is still certified")


#: The units of the privacy figures in every command's ``--json`` object (keys ``epsilon_unit`` and
#: ``delta_unit`` at its top level, docs/cli.md §1): every key whose name contains ``epsilon`` (``epsilon``,
#: ``epsilon_above``, ``guarantee.epsilon``, ...) is in nats, every key whose name contains ``delta`` is a
#: probability.
UNITS = {"epsilon_unit": "nats", "delta_unit": "probability"}


def delta_bounds_meaning(rounds: int) -> str:
    """What the release's ``delta_bounds`` are (``--json``): the certified upper value and a lower value that
    is not a lower bound on delta (one round: the blanket bound's lower value; K rounds: the composition of
    the rounds' lower values, a reference, docs/composition.md §4.2)."""
    if rounds > 1:
        return (f"[reference lower value, certified upper value] of the {rounds}-round composed delta: the lower value "
                "composes the rounds' lower values and is not a lower bound on delta")
    return ("[lower value, certified upper value] of the blanket bound: the lower value is the bound's accuracy, "
            "not a lower bound on the mechanism's delta")


def release_scope(rounds: int) -> str:
    """What the privacy figures of a ``sharpdp mean`` run calibrated for ``rounds`` = K >= 1 releases cover
    (``release_scope`` in ``--json``, the ``releases`` line of the text): every run is another release of the
    same data, and releases compose."""
    if rounds == 1:
        return ("the figures hold for this one release; every run on the same data is another release, and K "
                "releases of the same data compose: calibrate them together with --rounds K")
    return (f"the figures hold for {rounds} releases of this mean on the same data, this run being one of them "
            f"(--rounds {rounds}, composition); more releases of the same data need a larger --rounds")


def evaluations_meaning(rounds: int) -> str:
    """What the release's ``accountant_evaluations`` counts (``--json``; K > 1 also in the text): the
    single-round accountant evaluations of the calibration; for K rounds those of the candidates' single-round
    calibrations, while each candidate's K-round certification is one of ``composed_certifications``
    (docs/composition.md §4.1)."""
    if rounds > 1:
        return ("ShuffleAccountant.get_delta_bounds calls made by the candidates' single-round calibrations; each "
                f"candidate was then certified by one {rounds}-round composition (composed_certifications: one per "
                "candidate, each from its dominating pair's 40 certified profile values, not counted here)")
    return "ShuffleAccountant.get_delta_bounds calls made by the calibration (its search and its certification)"


#: What each figure of an output means, in plain words, with where its proof is (``--explain`` of ``sharpdp mean``
#: and ``sharpdp account``; one note per concept, docs/cli.md §12): the label its note is printed under -> the note.
PLAIN_NOTES = {
    "n, d": "the number of rows used and of columns. n is treated as public, as the shuffle model does: the guarantee "
            "protects what a row holds, not whether it takes part (a row with a missing value does not: "
            "docs/embedding.md §1, §1.1)",
    "dropped": "rows with a missing value take no part and values outside the bounds are clipped; how many depends on "
               "the data, so it is never printed (docs/histogram_release.md §10)",
    "bounds": "every value is clipped into these public ranges before any noise, so that one row's influence is "
              "limited; they must be fixed without looking at the data (docs/cli.md §9.1)",
    "epsilon": "how much one person's record can change what is published: with or without it, any outcome is at "
               "most e^epsilon times as likely (in nats: for a small epsilon, e^epsilon is about 1 + epsilon, e.g. e^0.01 is about 1.01, a 1 % change); smaller is more "
               "private (the quantity: docs/accountant.md §1)",
    "delta": "the slack on that limit: an outcome's probability may exceed e^epsilon times the other by at most "
             "delta (informally, a small chance that the limit fails). 'certified' means a proven upper bound, "
             "computed with every rounding on the safe side: the true delta is no larger (docs/accountant.md §3; a "
             "calibration to a target delta: docs/calibration.md)",
    "bracket": "the accountant's own precision: the bound it computes lies between the two ends, and the upper end "
               "is the certified delta (for K rounds the lower end is a reference value). The lower end is NOT a "
               "lower bound on the true delta, which may be far smaller (docs/accountant.md §4)",
    "adjacency": "which change of one person's record epsilon and delta protect against. zero-out: the record "
                 "replaced by a null one (the paper's model); replace-one: changed into any other record (the usual "
                 "meaning); a zero-out guarantee implies the replace-one one stated (proof: docs/cli.md §9.1, "
                 "docs/embedding.md §1)",
    "releases": "every run publishes new noisy values of the same data, and their privacy losses add up "
                "(composition): plan K releases together with --rounds K (docs/composition.md)",
    "BMG": "the noise each row gets on its owner's side, before the shuffle: with probability gamma the message is "
           "pure noise, otherwise the row plus Gaussian noise of scale sigma0; the calibration picks them to meet "
           "(epsilon, delta) (docs/calibration.md); chi_lo and mse_single are explained under it",
    "RMSE/coord": "the expected error of the private mean per coordinate (root mean square over the noise, like a "
                  "standard deviation: about 95 % of releases fall within twice it); computed from n, d and the "
                  "bounds, not from the data. The central Gaussian is what a trusted curator adding noise to the "
                  "exact mean would get at the same (epsilon, delta) (docs/cli.md §9.1)",
    "private": "the released means in the columns' own units, shown to 2 significant digits of their exp. RMSE "
               "(finer digits are noise; 5 digits with --bounds-from-data, whose errors are analyst only); rounding is post-processing, so the privacy is unchanged, and --json keeps "
               "full precision. exp. RMSE and central RMSE: the errors above in original units (docs/cli.md §12)",
    "randomness": "where the noise comes from: without --seed a cryptographically secure generator keyed by fresh OS "
                  "entropy, so nobody can reproduce or remove the noise (docs/sampling.md §1)",
}

#: The heading of the ``--explain`` notes.
PLAIN_HEADING = "What the figures mean (plain words; the proofs are in docs/):"

