"""``bench certify`` hands CRFsuite the very features mmprog trains on: every active input feature of a token, one
attribute each."""
import numpy as np
import pytest
import scipy.sparse as sp

from mmprog.bench.certify import _attributes


def test_attributes_are_the_token_rows_active_features():
    X = sp.random(7, 40, density=0.2, random_state=3, format="csr")
    X.data[:] = 1.0
    attrs = _attributes(X)
    assert len(attrs) == X.shape[0]
    for t, a in enumerate(attrs):
        assert sorted(int(j) for j in a) == np.flatnonzero(X[t].toarray().ravel()).tolist()


def test_attributes_refuse_real_valued_rows():
    X = sp.csr_matrix(np.array([[0.0, 2.0, 1.0]]))
    with pytest.raises(ValueError, match="attribute of value 1"):
        _attributes(X)
