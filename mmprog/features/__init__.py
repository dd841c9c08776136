"""Joint feature maps: linear chains, dependency arcs, CRF++-style templates (feature groups)."""
from .base import JointFeatureMap, Prepared
from .chain import ChainFeatureMap


def __getattr__(name):
    # the template extractor and the arc map pull in more code; import them when asked for
    if name in ("TemplateExtractor", "PRESETS"):
        from . import templates
        return getattr(templates, name)
    if name in ("ArcFeatureMap", "ARC_PRESETS"):
        from . import arcs
        return getattr(arcs, name)
    raise AttributeError(f"module 'mmprog.features' has no attribute {name!r}")


def feature_map_for(dataset, **kwargs):
    """The default joint feature map of a dataset: the linear chain for sequences, first-order arcs for trees."""
    from ..datasets.base import HierarchicalDataset, SequenceDataset, TreeDataset
    if isinstance(dataset, SequenceDataset):
        return ChainFeatureMap.from_dataset(dataset, **kwargs)
    if isinstance(dataset, HierarchicalDataset):
        from .hierarchy import HierarchyFeatureMap
        return HierarchyFeatureMap.from_dataset(dataset, **kwargs)
    if isinstance(dataset, TreeDataset):
        from .arcs import ArcFeatureMap
        return ArcFeatureMap(**kwargs).fit(dataset)
    raise TypeError(f"no default feature map for {type(dataset).__name__}; pass feature_map=")


def rebuild(desc, arrays, n_weights=None):
    """Rebuild a feature map from :meth:`describe`-style JSON and its arrays (for :func:`mmprog.load`).

    Parameters
    ----------
    desc : dict
        The saved description (read from a file: checked before use).
    arrays : dict of str -> ndarray
        The saved state arrays.
    n_weights : int, optional
        Length of the saved w. Sizes in ``desc`` that would need more weights are refused before anything of that
        size is allocated (a damaged file must not exhaust memory).

    Raises
    ------
    ModelFileError
        Naming the field or array that does not fit (without the file, which the caller adds).
    """
    from ..exceptions import ModelFileError
    kind = desc.get("kind")
    if kind in ("chain", "hierarchy"):
        _check_chain_layout(desc, arrays, n_weights)
    if kind == "chain":
        return ChainFeatureMap.from_description(desc, arrays)
    if kind == "arcs":
        from .arcs import ArcFeatureMap
        return ArcFeatureMap.from_state(desc, arrays)
    if kind == "siblings":
        from .siblings import SiblingFeatureMap
        return SiblingFeatureMap.from_state(desc, arrays)
    if kind == "arclabels":
        from .arc_labels import ArcLabelFeatureMap
        return ArcLabelFeatureMap.from_state(desc, arrays)
    if kind == "hierarchy":
        from .hierarchy import HierarchyFeatureMap
        return HierarchyFeatureMap.from_description(desc, arrays)
    raise ModelFileError(f"unknown feature map kind {kind!r} in saved model; known: chain, arcs, siblings, arclabels, hierarchy")


def _check_chain_layout(desc, arrays, n_weights):
    """The saved sizes of a chain or hierarchy map: d = ``n_features`` and K = ``n_labels`` non-negative ints and
    d_e = ``n_edge_features`` in [0, d] and ``order`` 1 or 2 whose state, transition, edge and trigram blocks
    ((d − d_e)·K + K² + d_e·K² + [order = 2]·K³ weights) fit in ``n_weights``, ``input_groups`` one group id in [0, d)
    per input feature, the allowed label bigrams of a second-order map a (K, K) bool mask that leaves every label a
    successor and a predecessor, and the hierarchy's priors real (their shapes and finiteness: the map's
    constructor)."""
    from ..exceptions import ModelFileError
    for key in ("n_features", "n_labels"):
        v = desc.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ModelFileError(f"field 'feature_map.{key}' is {v!r}; expected an int >= 0")
    d, K = desc["n_features"], desc["n_labels"]
    d_e = desc.get("n_edge_features", 0)
    if not isinstance(d_e, int) or isinstance(d_e, bool) or not 0 <= d_e <= d:
        raise ModelFileError(f"field 'feature_map.n_edge_features' is {d_e!r}; expected an int in [0, n_features]")
    order = desc.get("order", 1)
    if not isinstance(order, int) or isinstance(order, bool) or order not in (1, 2):
        raise ModelFileError(f"field 'feature_map.order' is {order!r}; expected 1 or 2")
    need = (d - d_e) * K + K * K + d_e * K * K + (K ** 3 if order == 2 else 0)
    if n_weights is not None and need > n_weights:
        raise ModelFileError(f"'feature_map' says n_features={d}, n_edge_features={d_e}, n_labels={K}, "
                             f"order={order}: at least "
                             f"{need} weights, but w has {n_weights}")
    g = arrays.get("input_groups")
    if g is not None:
        if g.dtype.kind not in "iu" or g.shape != (d,):
            raise ModelFileError(f"array 'fmap__input_groups' has dtype {g.dtype} and shape {g.shape}; expected "
                                 f"({d},) ints")
        if g.size and (g.min() < 0 or g.max() >= d):
            raise ModelFileError(f"array 'fmap__input_groups' holds group ids outside [0, {d})")
    a = arrays.get("allowed")
    if a is not None:
        if order != 2 or a.dtype != bool or a.shape != (K, K):
            raise ModelFileError(f"array 'fmap__allowed' has dtype {a.dtype} and shape {a.shape} with order={order}; "
                                 f"expected a ({K}, {K}) bool mask of a second-order map")
        if K and not (a.any(axis=1).all() and a.any(axis=0).all()):
            raise ModelFileError("array 'fmap__allowed' leaves a label without an allowed successor or predecessor")
    for key in ("prior_node", "prior_root", "prior_edge"):   # hierarchy maps: log-potentials, real numbers
        a = arrays.get(key)
        if a is not None and a.dtype.kind not in "iuf":
            raise ModelFileError(f"array 'fmap__{key}' has dtype {a.dtype}; expected real numbers")


__all__ = ["JointFeatureMap", "Prepared", "ChainFeatureMap", "TemplateExtractor", "PRESETS", "ArcFeatureMap",
           "ARC_PRESETS", "feature_map_for", "rebuild"]
