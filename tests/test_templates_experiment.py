"""``mmprog reproduce templates`` on tiny slices of the shared data (skipped when the data are absent).

The experiment's scores are checked against referees computed here: seqeval for the NER entity F1, a word-offset
count for the segmentation F1, and a direct count of correct heads for the attachment scores.
"""
import json

import numpy as np
import pytest

from mmprog.datasets import default_data_root
from mmprog.solvers import get_solver

ROOT = default_data_root()


def _need(*folders):
    for f in folders:
        if not (ROOT / f).is_dir():
            pytest.skip(f"shared data folder {ROOT / f} is absent")
    rep = get_solver("ipopt").availability()
    if not rep:
        pytest.skip(f"ipopt: {rep.reason}")


def test_ner_slice_scores_match_seqeval():
    _need("conll2002")
    from seqeval.metrics import f1_score, precision_score, recall_score
    from mmprog.reproduce.templates import parse_methods, run_ner
    doc = run_ner(ROOT, parse_methods("mtl,pblock-4/3,svm"), C=1.0, eps=0.5, max_iter=4, limit=25, test_limit=20,
                  keep_predictions=True)
    assert doc["setup"]["n_templates"] == 134
    assert doc["setup"]["train_sentences"] == 25
    # After 4 rounds a fit may predict no entity at all (p-block 4/3 here): its scores are 0 by convention, so
    # seqeval is told the same convention, and at least two splits must have found entities for the check to bite.
    found = 0
    for run in doc["runs"]:
        for split in ("testa", "testb"):
            p = run["predictions"][split]
            assert len(p["gold"]) == 20
            found += run[split]["f1"] > 0
            for name, ref in (("f1", f1_score), ("precision", precision_score), ("recall", recall_score)):
                assert run[split][name] == pytest.approx(100 * ref(p["gold"], p["pred"], zero_division=0), abs=1e-9)
        if run["method"] != "svm":
            mu = np.asarray(run["template_weights"])
            assert len(mu) == 134 and run["template_names"][-1] == "transition"
            assert np.all(mu >= 0)
            assert run["templates_removed"] == int(np.sum(mu / mu.sum() < 1e-5))
    assert found >= 2


def test_cws_cross_validation_slice():
    _need("sighan2005_icwb2")
    from mmprog.datasets import load_sighan
    from mmprog.reproduce.templates import parse_methods, run_cws
    doc = run_cws(ROOT, parse_methods("mtl"), corpora=("pku",), template_sets=("tp1",), folds=2, max_iter=3,
                  limit=16)
    assert doc["setup"]["comparable_with_paper"] is False
    (run,) = doc["runs"]
    assert run["folds"] == 2 and len(run["template_weights"]) == 11       # TP1: U00-U09 and the transitions
    for k in ("recall", "precision", "f1", "r_iv"):
        assert 0.0 <= run["mean"][k] <= 100.0
    f1 = run["mean"]["f1"]
    r, p = run["mean"]["recall"], run["mean"]["precision"]
    assert f1 <= max(r, p) + 1e-9 and f1 >= min(r, p) - 1e-9
    corpus = load_sighan(ROOT / "sighan2005_icwb2" / "gold" / "pku_test_gold.utf8.gz", tagset="BIE")
    assert doc["setup"]["pku_sentences"] == 16 and len(corpus) > 16
    # how every fold's fit ended is kept and printed (max_iter = 3 stops them all before eps)
    assert run["terminations"] == ["max_iter", "max_iter"] and run["iterations"] == [3, 3]
    from mmprog.reproduce.templates import format_cws
    assert format_cws(doc).splitlines()[-1].endswith("3–3 max_iter 2")


def test_dependency_slice_attachment_scores(tmp_path):
    _need("ptb_dependency_sample_nltk")
    from mmprog.reproduce.templates import _ptb_split, main
    code = main(["--task", "dep", "--treebanks", "ptb", "--methods", "mtl", "--limit", "12", "--test-limit", "10",
                 "--max-iter", "3", "--out", str(tmp_path), "--quiet"])
    assert code == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    (run,) = doc["tasks"]["dep"]["runs"]
    assert run["treebank"] == "ptb" and run["iterations"] <= 3
    assert 0 <= run["uas"] <= 100 and 0 <= run["complete"] <= 100
    assert (tmp_path / "dep_template_weights.png").stat().st_size > 0
    train, test = _ptb_split(ROOT)
    # the split by file: wsj_0001-0159 train (3,130 sentences... counted from the tsv) and the rest test
    assert len(train) + len(test) == 3914
    import csv
    with open(ROOT / "ptb_dependency_sample_nltk" / "file_sentence_counts.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(train) == sum(int(r["sentences"]) for r in rows if int(r["file"][4:8]) <= 159)


def test_attachment_scores_of_the_experiment_are_head_counts():
    """The dep runner's UAS is the fraction of correct heads: recompute it from a fitted model's predictions."""
    _need("ptb_dependency_sample_nltk")
    import mmprog
    from mmprog.features.arcs import ArcFeatureMap
    from mmprog.metrics import attachment_scores
    from mmprog.reproduce.templates import _ptb_split
    train, test = _ptb_split(ROOT)
    train, test = train.subset(np.arange(10)), test.subset(np.arange(8))
    fmap = ArcFeatureMap("mcdonald05", projective=True).fit(train)
    res = mmprog.fit(train, program="mtl", C=100.0, slack="one", eps=0.5, max_iter=3, feature_map=fmap)
    pred = res.predict(test)
    sc = attachment_scores(list(test.heads), pred, pos=[s["pos"] for s in test.sentences], punct_tags="ptb")
    correct = sum(int(np.sum(np.asarray(p)[1:len(h) + 1] == h)) for p, h in zip(pred, test.heads))
    assert sc.uas == pytest.approx(correct / sum(len(h) for h in test.heads))


def test_missing_data_is_a_clean_skip(tmp_path, capsys):
    from mmprog.reproduce.templates import main
    code = main(["--task", "ner", "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 0
    assert "skipped" in capsys.readouterr().out


def test_a_fit_that_dies_leaves_the_finished_ones_on_disk(tmp_path, monkeypatch):
    """Full-data fits take an hour each: results.json holds every finished fit (marked partial) before the next one
    starts, so a run killed during its second fit keeps the first."""
    _need("ptb_dependency_sample_nltk")
    from mmprog.reproduce import templates
    real, calls = templates.fit_method, []

    def second_fit_dies(*args, **kw):
        calls.append(args[0])
        if len(calls) == 2:
            raise MemoryError("killed during the second fit")
        return real(*args, **kw)

    monkeypatch.setattr(templates, "fit_method", second_fit_dies)
    with pytest.raises(MemoryError):
        templates.main(["--task", "dep", "--treebanks", "ptb", "--methods", "mtl,svm", "--limit", "8",
                        "--test-limit", "5", "--max-iter", "2", "--out", str(tmp_path), "--quiet"])
    doc = json.loads((tmp_path / "results.json").read_text())
    dep = doc["tasks"]["dep"]
    assert dep["partial"] is True
    assert [r["method"] for r in dep["runs"]] == ["mtl"] and 0 <= dep["runs"][0]["uas"] <= 100
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]     # no half-written file left


def test_pblock_method_reaches_the_program():
    from mmprog.reproduce.templates import parse_methods
    assert parse_methods("pblock-4/3,svm") == [("pblock-4/3", "pblock", {"p": 4 / 3, "method": "pg"}),
                                               ("svm", "m3n", {"master": "dual"})]
    ((name, program, params),) = parse_methods("pblock-2", "nlp")
    assert (name, program, params) == ("pblock-2:nlp", "pblock", {"p": 2.0, "method": "nlp"})
