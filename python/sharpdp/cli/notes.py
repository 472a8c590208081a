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
