"""ARCHITECTURE.md: "to add a template kind (a derived token column such as ``%x[0,0:shape]``), register one function
in ``mmprog.features.templates.DERIVED``" — done here from outside the package, and checked against the obvious
string expansion of the template (what CRF++ would write after the column had been derived)."""
import numpy as np
import pytest

from mmprog.features import templates as tmod
from mmprog.features.templates import TemplateExtractor


def vowels(w):
    """The derived column: how many vowels the word has, as a string."""
    return str(sum(ch in "aeiouAEIOU" for ch in w))


@pytest.fixture
def outside_kind(monkeypatch):
    monkeypatch.setitem(tmod.DERIVED, "vowels", vowels)


SENTENCES = [{"w": ["Tree", "house", "by", "the", "sea"], "p": ["N", "N", "P", "D", "N"]},
             {"w": ["aeiou", "xyz"], "p": ["X", "Y"]}]


def test_a_derived_column_added_from_outside_is_a_template_kind(outside_kind):
    ex = TemplateExtractor(["U00:%x[0,0:vowels]", "U01:%x[-1,0:vowels]/%x[0,1]"]).fit(SENTENCES)
    # the obvious expansion: every token's strings, boundary symbols as CRF++ writes them
    expected = set()
    for s in SENTENCES:
        w, p = s["w"], s["p"]
        for t in range(len(w)):
            expected.add(f"U00:{vowels(w[t])}")
            expected.add(f"U01:{vowels(w[t - 1]) if t else '_B-1'}/{p[t]}")
    assert set(ex.feature_names_) == expected
    X = ex.transform(SENTENCES[1:])[0].toarray()
    col = {n: k for k, n in enumerate(ex.feature_names_)}
    assert sorted(np.flatnonzero(X[0])) == sorted([col["U00:5"], col["U01:_B-1/X"]])
    assert sorted(np.flatnonzero(X[1])) == sorted([col["U00:0"], col["U01:5/Y"]])


def test_an_unregistered_kind_is_a_one_line_error():
    from mmprog.exceptions import ParameterError
    with pytest.raises(ParameterError, match="vowels"):
        TemplateExtractor(["U00:%x[0,0:vowels]"]).fit(SENTENCES)
