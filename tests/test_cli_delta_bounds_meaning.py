"""The release's delta_bounds are labelled (--json and text): their lower value is not a lower bound on delta."""
from sharpdp.cli import delta_bounds_meaning


def test_one_round_and_composed_labels_differ_and_disclaim_the_lower_value():
    one, five = delta_bounds_meaning(1), delta_bounds_meaning(5)
    assert "blanket bound" in one and "not a lower bound" in one
    assert "5-round composed" in five and "reference" in five and "not a lower bound" in five
