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


def rebuild(desc, arrays):
    """Rebuild a feature map from :meth:`describe`-style JSON and its arrays (for :func:`mmprog.load`)."""
    kind = desc.get("kind")
    if kind == "chain":
        return ChainFeatureMap.from_description(desc, arrays)
    if kind == "arcs":
        from .arcs import ArcFeatureMap
        return ArcFeatureMap.from_state(desc, arrays)
    if kind == "hierarchy":
        from .hierarchy import HierarchyFeatureMap
        return HierarchyFeatureMap.from_description(desc, arrays)
    from ..exceptions import ModelFileError
    raise ModelFileError(f"unknown feature map kind {kind!r} in saved model; known: chain, arcs, hierarchy")


__all__ = ["JointFeatureMap", "Prepared", "ChainFeatureMap", "TemplateExtractor", "PRESETS", "ArcFeatureMap",
           "ARC_PRESETS", "feature_map_for", "rebuild"]
