"""Nothing lost, nothing silent (issue 39): one test per row of the issue's table, each failing on the command line
as it was, plus the exit-code contract.

How the environment failures are made (the tests run as root, which ignores file permissions, so a chmod'ed folder
would not do): a read-only place is a path under /proc (no file can be created there, root or not); a full disk is
/dev/full where a path that is written in place will do, and otherwise ``mmprog.datasets.reading.publish`` — the one
function that renames every finished output into place — is monkeypatched in-process to fail with ENOSPC for the
folder of the output, as a disk that fills up during the fit would.
"""
import errno
import gzip
import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mmprog
from mmprog.cli import main
from mmprog.exceptions import ModelFileError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from test_tagging import _chain_treebank, _sentences, _write  # noqa: E402  (tiny text and treebank writers)


def run(capsys, *argv):
    """(exit code, stdout, stderr) of one in-process command line; argparse's usage errors count as their code."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_line_error(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mmprog: error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A folder with small training files and three saved models: text (ner), dependency (dep), chain (chain)."""
    d = tmp_path_factory.mktemp("cli")
    _write(d / "train.txt", _sentences(40, 0))
    _write(d / "test.txt", _sentences(10, 1))
    _chain_treebank(d / "t.conllu", 15, 5)
    for argv in (["train", "--data", f"conll:{d / 'train.txt'},columns=form/pos/ne", "--templates", "rich",
                  "--slack", "one", "--eps", "0.05", "--out", d / "ner", "--json"],
                 ["train", "--data", f"conllu:{d / 't.conllu'}", "--slack", "one", "--eps", "0.05", "--out",
                  d / "dep", "--json"],
                 ["train", "--data", "tiny:seed=0", "--eps", "0.01", "--out", d / "chain", "--json"]):
        assert main([str(a) for a in argv]) == 0
    return d


# ------------------------------------------------------------------------------------- outputs never clobber inputs
def test_tag_and_parse_refuse_to_write_their_input_also_through_links(work, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_bytes((work / "test.txt").read_bytes())
    (tmp_path / "sym.txt").symlink_to(src)
    os.link(src, tmp_path / "hard.txt")
    before = src.read_bytes()
    for out in (src, tmp_path / "sym.txt", tmp_path / "hard.txt", tmp_path / "." / "in.txt"):
        rc, _, err = run(capsys, "tag", "--model", work / "ner", "--data", f"conll:{src}", "--out", out)
        assert rc == 2 and "is the input of --data" in one_line_error(err)
    rc, _, err = run(capsys, "tag", "--model", work / "ner", "--data", f"conll:{src}", "--out", work / "ner.npz")
    assert rc == 2 and "is the input of --model" in one_line_error(err)
    assert src.read_bytes() == before
    tb = tmp_path / "t.conllu"
    tb.write_bytes((work / "t.conllu").read_bytes())
    (tmp_path / "tb-link.conllu").symlink_to(tb)
    for out in (tb, tmp_path / "tb-link.conllu"):
        rc, _, err = run(capsys, "parse", "--model", work / "dep", "--data", f"conllu:{tb}", "--out", out)
        assert rc == 2 and "is the input of --data" in one_line_error(err)
    assert tb.read_bytes() == (work / "t.conllu").read_bytes()          # gold HEAD/DEPREL still there


def test_train_and_export_refuse_outputs_that_are_inputs_before_the_fit(work, tmp_path, capsys, monkeypatch):
    from mmprog.datasets import tiny_chain
    from mmprog.datasets.tsv import write_tsv
    data = tmp_path / "data.npz"                       # a tsv file that happens to be named like a checkpoint
    write_tsv(tiny_chain(seed=0), data)
    lp = tmp_path / "data.lp"
    write_tsv(tiny_chain(seed=0), lp)
    before = data.read_bytes(), lp.read_bytes()
    fits = []
    monkeypatch.setattr("mmprog.api.fit", lambda *a, **k: fits.append(1))
    for argv in (["train", "--data", f"tsv:{data}", "--checkpoint", tmp_path / "data"],
                 ["train", "--data", f"tsv:{lp}", "--export", lp],
                 ["train", "--data", f"tsv:{data}", "--out", tmp_path / "data"],
                 ["train", "--data", "tiny:seed=0", "--out", tmp_path / "m", "--checkpoint", tmp_path / "m"],
                 ["export", "--data", f"tsv:{lp}", "--out", lp],
                 ["show", "--data", f"tsv:{lp}", "--export-dual", lp]):
        rc, _, err = run(capsys, *argv)
        assert rc == 2 and "would destroy" in one_line_error(err), argv
    assert fits == [] and (data.read_bytes(), lp.read_bytes()) == before
    monkeypatch.undo()
    # --resume C --checkpoint C continues in the same file: allowed
    assert main(["train", "--data", "tiny:seed=0", "--eps", "0.01", "--max-iter", "2", "--checkpoint",
                 str(tmp_path / "ck"), "--json"]) == 0
    assert main(["train", "--data", "tiny:seed=0", "--eps", "0.01", "--resume", str(tmp_path / "ck.npz"),
                 "--checkpoint", str(tmp_path / "ck"), "--json"]) == 0


# ---------------------------------------------------------------------------------------- a finished fit is never lost
def test_train_out_on_a_read_only_place_is_refused_before_the_fit(tmp_path, capsys, monkeypatch):
    fits = []
    monkeypatch.setattr("mmprog.api.fit", lambda *a, **k: fits.append(1))
    for opt in ("--out", "--checkpoint", "--export"):
        path = "/proc/mmprog-test/m.lp" if opt == "--export" else "/proc/mmprog-test/m"
        rc, out, err = run(capsys, "train", "--data", "tiny:seed=0", opt, path)
        line = one_line_error(err)
        assert rc == 3 and line.startswith(f"mmprog: error: {opt} /proc/mmprog-test/m") and "nothing was done" in line
        assert out == ""
    assert fits == []


def test_a_disk_that_fills_during_the_fit_keeps_the_model_in_a_fallback(tmp_path, capsys, monkeypatch):
    """The old model at --out stays intact, the new one goes beside the checkpoint and the error line says where."""
    from mmprog.datasets import reading
    outdir, ckdir = tmp_path / "out", tmp_path / "ck"
    outdir.mkdir()
    assert main(["train", "--data", "tiny:seed=1", "--eps", "0.01", "--out", str(outdir / "m"), "--json"]) == 0
    old = (outdir / "m.json").read_bytes(), (outdir / "m.npz").read_bytes()
    real = reading.publish

    def full_disk(tmp, path):
        if os.path.dirname(os.path.abspath(path)) == str(outdir):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(tmp, path)

    monkeypatch.setattr(reading, "publish", full_disk)
    capsys.readouterr()
    rc, out, err = run(capsys, "train", "--data", "tiny:seed=0", "--eps", "0.01", "--out", outdir / "m",
                       "--checkpoint", ckdir / "fit", "--json")
    line = one_line_error(err)
    assert rc == 3 and "No space left on device" in line and f"--out {outdir / 'm.json'}" in line
    saved = line.split("it was saved to ")[1].split(" instead")[0]
    assert os.path.dirname(saved) == str(ckdir) and os.path.isfile(saved)
    direct = mmprog.fit(mmprog.datasets.tiny_chain(seed=0), eps=0.01)
    assert np.allclose(mmprog.load(saved).w, direct.w, atol=1e-6)
    assert ((outdir / "m.json").read_bytes(), (outdir / "m.npz").read_bytes()) == old
    assert sorted(p.name for p in outdir.iterdir()) == ["m.json", "m.npz"]          # no temporary file left


def test_tag_to_a_full_device_is_exit_3_and_the_device_stays(work, capsys):
    rc, _, err = run(capsys, "tag", "--model", work / "ner", "--data", f"conll:{work / 'test.txt'}", "--out",
                     "/dev/full")
    assert rc == 3 and "/dev/full" in one_line_error(err) and "No space left on device" in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)          # written in place, never renamed over


# ------------------------------------------------------------------------------------------ one line, exit 2, no traceback
def test_tag_and_parse_on_damaged_gzip_give_one_line(work, tmp_path, capsys):
    for name, src, dialect, model in (("t.gz", "test.txt", "conll", "ner"), ("t.conllu.gz", "t.conllu", "conllu",
                                                                              "dep")):
        gz = gzip.compress((work / src).read_bytes())
        for bad, label in ((gz[: len(gz) // 2], "cut"), (gz[:20] + bytes(len(gz) - 20), "zeroed")):
            p = tmp_path / f"{label}-{name}"
            p.write_bytes(bad)
            cmd = "tag" if dialect == "conll" else "parse"
            rc, _, err = run(capsys, cmd, "--model", work / model, "--data", f"{dialect}:{p}", "--out",
                             tmp_path / "o.txt")
            assert rc == 2 and str(p) in one_line_error(err)
            assert not (tmp_path / "o.txt").exists()


def test_binary_template_file_gives_one_line(work, tmp_path, capsys):
    tpl = tmp_path / "bin.tpl"
    tpl.write_bytes(b"U00:%x[0,0]\n\x9a\xff\x00\x81binary\n")
    rc, _, err = run(capsys, "train", "--data", f"conll:{work / 'train.txt'},columns=form/pos/ne", "--templates",
                     tpl)
    assert rc == 2 and f"{tpl}:2: cannot decode" in one_line_error(err)


def test_evaluate_and_predict_refuse_data_of_another_kind(work, capsys):
    for cmd in ("evaluate", "predict"):
        for model, spec in (("chain", f"conllu:{work / 't.conllu'}"), ("dep", "tiny:seed=0"),
                            ("ner", f"conllu:{work / 't.conllu'}")):
            rc, _, err = run(capsys, cmd, "--model", work / model, "--data", spec)
            assert rc == 2 and "loads a" in one_line_error(err), (cmd, model)


@pytest.mark.parametrize("n_jobs", ["-2", "0", "-1"])
def test_n_jobs_out_of_range_refused_before_the_features(work, capsys, monkeypatch, n_jobs):
    built = []
    monkeypatch.setattr("mmprog.features.templates.TemplateExtractor.to_dataset",
                        lambda *a, **k: built.append(1))
    for argv in (["train", "--data", "tiny:seed=0"],
                 ["train", "--data", f"conll:{work / 'train.txt'},columns=form/pos/ne", "--templates", "rich"]):
        for oracle in ("thread", "process"):
            rc, _, err = run(capsys, *argv, "--oracle", oracle, "--n-jobs", n_jobs)
            assert rc == 2 and f"--n-jobs must be None (every core) or an int >= 1; got {n_jobs}" in \
                one_line_error(err)
    assert built == []
    with pytest.raises(mmprog.exceptions.ParameterError, match="n_jobs must be"):
        mmprog.fit(mmprog.datasets.tiny_chain(seed=0), oracle="thread", n_jobs=int(n_jobs))


def test_sigint_at_start_up_is_one_line_and_130(capsys, monkeypatch):
    """In-process: a Ctrl-C before the command runs (while the parser is built); then real processes signalled from
    the moment they have imported mmprog.cli, as the ``mmprog`` script does first (what comes before — the
    interpreter's own start-up, its site packages, finding the package — is Python's, outside mmprog's reach)."""
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr("mmprog.cli.build_parser", interrupted)
    rc, _, err = run(capsys, "solvers")
    assert rc == 130 and err == "mmprog: interrupted\n"
    monkeypatch.undo()

    # what Python makes of a Ctrl-C in a few places: the interrupt as the cause of another exception (here the one a
    # class body's __set_name__ gets, as when the signal lands in the import of platform), at start-up or in a command
    class Interrupted:
        def __set_name__(self, owner, name):
            raise KeyboardInterrupt

    def wrapped(*args):
        type("UnameResult", (), {"processor": Interrupted()})
    for where in ("mmprog.cli.build_parser", "mmprog.cli.solvers.run"):
        with pytest.raises(RuntimeError) as caught:
            wrapped()
        assert isinstance(caught.value.__cause__, KeyboardInterrupt)
        monkeypatch.setattr(where, wrapped)
        rc, _, err = run(capsys, "solvers")
        assert rc == 130 and err == "mmprog: interrupted\n", (where, err)
        monkeypatch.undo()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    code = ("import sys; from mmprog.cli import main; sys.stdout.write('ready\\n'); sys.stdout.flush(); "
            "sys.exit(main(['train', '--data', 'tiny:seed=0,n_sequences=60', '--json']))")
    def as_in_a_terminal():
        # a suite run as a background job of a non-interactive shell passes SIGINT on ignored (SIG_IGN), which Python
        # keeps: such a process never sees the Ctrl-C outside a fit; a terminal's foreground command does
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    for delay in (0.0, 0.01, 0.03, 0.1, 0.2, 0.3):
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             preexec_fn=as_in_a_terminal)
        assert p.stdout.readline() == b"ready\n"
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        assert p.returncode in (130, -signal.SIGINT) and b"Traceback" not in err, (delay, err.decode())


def test_sigint_inside_an_import_is_raised_once_the_import_is_done(tmp_path, capsys, monkeypatch):
    """A Ctrl-C that lands while a module is being imported is held until the import has finished: raised inside
    it, a C extension may turn it into an ImportError that an optional import swallows (the signal lost, exit 0)."""
    (tmp_path / "slow_module.py").write_text(
        "import os, signal, time\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "for _ in range(20):\n"
        "    time.sleep(0.005)\n"
        "finished = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reached = []

    def command(args):
        import slow_module
        reached.append(slow_module.finished)
        for _ in range(1000):           # the interrupt comes here, at the latest 10 ms after the import
            time.sleep(0.001)
        reached.append("not interrupted")
        return 0
    monkeypatch.setattr("mmprog.cli.solvers.run", command)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)      # a background job's is SIG_IGN
    try:
        rc, _, err = run(capsys, "solvers")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
        sys.modules.pop("slow_module", None)
    assert reached == [True] and rc == 130 and err == "mmprog: interrupted\n"


@pytest.fixture
def signal_as_fits_end(monkeypatch):
    """``mmprog.fit`` with a SIGINT sent to this process as each fit ends, inside handlers that the fit's own nest
    in: the signal arrives after the fit's stopping rule fired, as a Ctrl-C in a fit's last round does. Returns the
    terminations of the fits run."""
    from mmprog.engine import interrupts
    real, ended = mmprog.fit, []

    def fit(*args, **kwargs):
        with interrupts.catch_interrupts():
            res = real(*args, **kwargs)
            ended.append(res.termination)
            os.kill(os.getpid(), signal.SIGINT)
        return res
    monkeypatch.setattr(mmprog, "fit", fit)
    return ended


def test_sigint_in_the_last_round_saves_the_fit_and_exits_130(signal_as_fits_end, tmp_path, capsys):
    """The fit finished (certified) as the signal came: the model is written and the command says so and exits 130
    instead of going on (evaluating) and exiting 0 as if no signal had been sent."""
    m = tmp_path / "m"
    rc, out, err = run(capsys, "train", "--data", "tiny:seed=0", "--eps", "0.01", "--out", m, "--json")
    assert signal_as_fits_end == ["converged"]
    assert rc == 130 and "Traceback" not in err
    assert [ln for ln in err.splitlines() if ln.strip()] == [
        f"mmprog: SIGINT received during the last round of the fit, which ended 'converged'; model saved to {m}.json"]
    summary = json.loads(out)
    assert summary["termination"] == "converged" and "train" not in summary
    assert json.loads((tmp_path / "m.json").read_text())["meta"]["termination"] == "converged"


def test_sigint_as_a_candidate_fit_ends_stops_the_c_path(signal_as_fits_end, work, tmp_path, capsys):
    """A C path (--dev, --C-grid) stops after the candidate the signal came in; that candidate is kept, the labeller
    is not trained."""
    from mmprog.parsing import labeller_base
    m = tmp_path / "p"
    rc, out, err = run(capsys, "train", "--data", f"conllu:{work / 't.conllu'}", "--slack", "one", "--eps", "0.05",
                       "--dev", "0.25", "--C-grid", "0.1,1", "--out", m, "--json")
    assert rc == 130 and "Traceback" not in err
    assert len(signal_as_fits_end) == 1
    rows = [json.loads(ln) for ln in err.splitlines() if ln.startswith("{")]
    assert [r["C"] for r in rows] == [0.1]
    assert json.loads(out)["candidates"] == rows
    assert mmprog.load(str(m)).params["C"] == 0.1
    assert not os.path.exists(labeller_base(m) + ".json")


def test_sigint_during_the_refit_keeps_the_chosen_candidate(monkeypatch, work, tmp_path, capsys):
    """--dev FRACTION: a Ctrl-C in the refit on the whole file (a real SIGINT in its first round) stops it; the
    chosen candidate, a finished fit without the held-out sentences, is what is saved, and the command exits 130
    saying so."""
    real, calls = mmprog.fit, []

    def fit(data, **kw):
        calls.append(len(data))
        if len(calls) < 3:                 # the two candidates, on 12 of the 15 sentences
            return real(data, **kw)

        def show(model, rec):
            os.kill(os.getpid(), signal.SIGINT)
        return real(data, **dict(kw, show=show, show_every=1))
    monkeypatch.setattr(mmprog, "fit", fit)
    m = tmp_path / "p"
    rc, out, err = run(capsys, "train", "--data", f"conllu:{work / 't.conllu'}", "--slack", "one", "--eps", "0.05",
                       "--dev", "0.2", "--C-grid", "0.1,1", "--out", m, "--json")
    assert rc == 130 and "Traceback" not in err and calls == [12, 12, 15]
    summary = json.loads(out)
    assert summary["refit"]["termination"] == "interrupted" and summary["refit"]["refit_sentences"] == 15
    best = max(summary["candidates"], key=lambda r: r["dev_uas_no_punct"])
    saved = mmprog.load(str(m))
    meta = json.loads((tmp_path / "p.json").read_text())["meta"]
    assert saved.params["C"] == best["C"] and meta["termination"] == best["termination"] != "interrupted"
    # the candidate's rounds, not the refit's (stopped after its first)
    assert summary["n_iter"] == best["n_iter"] != summary["refit"]["n_iter"] and meta["gap"] == best["gap"]
    assert err.splitlines()[-1] == ("mmprog: SIGINT received during the refit on the whole training file; the "
                                    f"chosen C's fit without the held-out sentences ended {best['termination']!r}; "
                                    f"model saved to {m}.json")


def test_sigint_during_the_refit_of_token_text_keeps_the_chosen_candidate(monkeypatch, work, tmp_path, capsys):
    """The same on token text (route bcfw): a real SIGINT in the refit's fit leaves the chosen C's candidate."""
    real, calls = mmprog.fit, []

    def fit(data, **kw):
        calls.append(len(data))
        if len(calls) < 3:
            return real(data, **kw)
        os.kill(os.getpid(), signal.SIGINT)      # after the features, before the first pass
        return real(data, **kw)
    monkeypatch.setattr(mmprog, "fit", fit)
    m = tmp_path / "t"
    rc, out, err = run(capsys, "train", "--data", f"conll:{work / 'train.txt'},columns=form/pos/ne", "--templates",
                       "ner", "--dev", "0.25", "--C-grid", "0.1,1", "--out", m, "--json")
    assert rc == 130 and "Traceback" not in err and calls == [30, 30, 40]
    summary = json.loads(out)
    assert summary["refit"]["termination"] == "interrupted"
    best = max(summary["candidates"], key=lambda r: r["dev_f1"])
    assert summary["params"]["C"] == best["C"] and summary["gap"] == best["gap"] and summary["gap"] <= 1e-2
    assert "during the refit on the whole training file" in err.splitlines()[-1]


def test_tag_on_empty_input_says_so_and_leaves_out_alone(work, tmp_path, capsys, monkeypatch):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"\n\n")
    out = tmp_path / "o.txt"
    out.write_text("keep me\n")
    rc, _, err = run(capsys, "tag", "--model", work / "ner", "--data", f"conll:{empty}", "--out", out)
    assert rc == 2 and one_line_error(err) == f"mmprog: error: {empty}: no sentences found"
    assert out.read_text() == "keep me\n" and sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt", "o.txt"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
    rc, _, err = run(capsys, "tag", "--model", work / "ner", "--data", "conll:-")
    assert rc == 2 and one_line_error(err) == "mmprog: error: -: no sentences found"


def test_train_on_text_writes_export(work, tmp_path, capsys):
    lp = tmp_path / "p.lp"
    rc, out, err = run(capsys, "train", "--data", f"conll:{work / 'train.txt'},columns=form/pos/ne", "--templates",
                       "rich", "--slack", "one", "--eps", "0.1", "--export", lp, "--json")
    assert rc == 0, err
    assert json.loads(out)["exported"] == str(lp)
    text = lp.read_text()
    assert text.startswith("\\* Source Pyomo model") and text.rstrip().endswith("end") and "objective:" in text


def test_one_column_name_is_not_split_into_letters(work, tmp_path, capsys):
    """A model trained on forms alone tags a one-column file given as columns=form."""
    train = tmp_path / "forms.txt"
    train.write_text("".join("".join(f"{w} {t}\n" for w, _, t in s) + "\n" for s in _sentences(30, 0)))
    model = tmp_path / "forms"
    tpl = tmp_path / "forms.tpl"
    tpl.write_text("U00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[1,0]\nB\n")
    assert main(["train", "--data", f"conll:{train},columns=form/ne", "--templates", str(tpl), "--slack", "one",
                 "--eps", "0.1", "--out", str(model), "--json"]) == 0
    raw = tmp_path / "raw.txt"
    raw.write_text("".join("".join(f"{w}\n" for w, _, _ in s) + "\n" for s in _sentences(5, 1)))
    capsys.readouterr()
    rc, out, err = run(capsys, "tag", "--model", model, "--data", f"conll:{raw},columns=form")
    assert rc == 0, err
    rows = [r.split() for r in out.splitlines() if r]
    assert len(rows) == sum(len(s) for s in _sentences(5, 1)) and all(len(r) == 2 for r in rows)


def test_tag_reads_and_writes_latin1(work, tmp_path, capsys):
    utf8 = work / "test.txt"
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(utf8.read_text(encoding="utf-8").encode("latin-1"))
    assert "Sofía".encode("latin-1") in latin.read_bytes()               # not ASCII: the encoding matters
    rc, want, err = run(capsys, "tag", "--model", work / "ner", "--data", f"conll:{utf8}")
    assert rc == 0, err
    out = tmp_path / "o.txt"
    rc, _, err = run(capsys, "tag", "--model", work / "ner", "--data", f"conll:{latin},encoding=latin-1", "--out",
                     out)
    assert rc == 0, err
    assert out.read_bytes().decode("latin-1") == want
    rc, _, err = run(capsys, "tag", "--model", work / "ner", "--data", f"conll:{latin},encoding=utf-16")
    assert rc == 2 and "encoding must be" in one_line_error(err)


def test_topk_headers_cannot_be_read_as_token_lines(work, tmp_path, capsys):
    sents = [[("#", "Z", "O"), ("Ana", "NC", "B-PER"), ("#", "Z", "O")], [("#", "Z", "O")],
             [("en", "SP", "O"), ("Lima", "NC", "B-LOC")]]
    src = tmp_path / "hash.txt"
    _write(src, sents)
    rc, out, err = run(capsys, "tag", "--model", work / "ner", "--data", f"conll:{src}", "--topk", "2")
    assert rc == 0, err
    lines = out.split("\n")
    heads = [ln for ln in lines if len(ln.split()) == 1]               # a header is one field, a token line 4
    tokens = [ln for ln in lines if len(ln.split()) > 1]
    k_of = [int(h.split(",")[0][len("#k="):]) for h in heads]
    assert all(h.startswith("#k=") and ",score=" in h for h in heads)
    assert sorted(k_of) == sorted([0, 1] * 3) or sorted(k_of) == sorted([0, 1] * 2 + [0])   # the 1-token sentence
    src_lines = [ln for ln in src.read_text().split("\n") if ln]
    assert all(" ".join(t.split()[:3]) in src_lines for t in tokens)
    assert sum(t.startswith("# ") for t in tokens) >= 3                # the '#' forms are there, as token lines


def test_parse_leaves_no_deps_that_contradict_the_predicted_heads(work, tmp_path, capsys):
    tb = tmp_path / "mwt.conllu"
    tb.write_text("# sent_id = 1\n"
                  "1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n"
                  "1\tw1\tw1\tX\tT1\t_\t0\troot\t0:root\t_\n"
                  "2\tw2\tw2\tX\tT2\t_\t1\tdep\t1:dep\tSpaceAfter=No\n"
                  "2.1\tw\t_\tX\t_\t_\t_\t_\t1:dep\t_\n"
                  "3\tw3\tw3\tX\tT0\t_\t2\tdep\t2:dep|1:x\t_\n\n")
    out = tmp_path / "o.conllu"
    rc, _, err = run(capsys, "parse", "--model", work / "dep", "--data", f"conllu:{tb}", "--out", out)
    assert rc == 0, err
    got = [ln.split("\t") for ln in out.read_text().split("\n") if ln and not ln.startswith("#")]
    words = [f for f in got if f[0].isdigit()]
    # DEPS is the predicted basic arc HEAD:DEPREL (the model predicts no enhanced graph), never the input's heads
    assert [f[8] for f in words] == [f"{f[6]}:{f[7]}" for f in words]
    assert [f[9] for f in words] == ["_", "SpaceAfter=No", "_"]
    assert "\t".join(got[0]) == "1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_"                 # multiword token kept
    assert "\t".join(got[3]) == "2.1\tw\t_\tX\t_\t_\t_\t_\t1:dep\t_"               # empty node kept


# ------------------------------------------------------------------------------------------------------ permissions
def test_outputs_get_the_umask_and_keep_an_overwritten_mode(work, tmp_path, capsys):
    old = os.umask(0o022)
    try:
        m = tmp_path / "m"
        assert main(["train", "--data", "tiny:seed=0", "--eps", "0.01", "--out", str(m), "--export",
                     str(tmp_path / "p.lp"), "--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "1",
                     "--json"]) == 0
        tagged = tmp_path / "tagged.txt"
        assert main(["tag", "--model", str(work / "ner"), "--data", f"conll:{work / 'test.txt'}", "--out",
                     str(tagged)]) == 0
        written = (m.with_suffix(".json"), m.with_suffix(".npz"), tmp_path / "p.lp", tmp_path / "ck.npz", tagged)
        for p in written:
            assert stat.S_IMODE(p.stat().st_mode) == 0o644, p
        for p in written:
            os.chmod(p, 0o640)
        assert main(["train", "--data", "tiny:seed=1", "--eps", "0.01", "--out", str(m), "--export",
                     str(tmp_path / "p.lp"), "--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "1",
                     "--json"]) == 0
        assert main(["tag", "--model", str(work / "ner"), "--data", f"conll:{work / 'test.txt'}", "--out",
                     str(tagged)]) == 0
        for p in written:
            assert stat.S_IMODE(p.stat().st_mode) == 0o640, p
        os.umask(0o027)
        assert main(["tag", "--model", str(work / "ner"), "--data", f"conll:{work / 'test.txt'}", "--out",
                     str(tmp_path / "new.txt")]) == 0
        assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    finally:
        os.umask(old)
    capsys.readouterr()


# ------------------------------------------------------------------------------------------ a model's files belong together
def test_an_npz_of_another_model_is_refused(work, tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["train", "--data", "tiny:seed=0", "--eps", "0.01", "--out", str(a), "--json"]) == 0
    assert main(["train", "--data", "tiny:seed=1", "--eps", "0.01", "--out", str(b), "--json"]) == 0
    doc = json.loads(a.with_suffix(".json").read_text())
    assert len(doc["npz_sha256"]) == 64
    with np.load(b.with_suffix(".npz")) as zb, np.load(a.with_suffix(".npz")) as za:
        assert zb["w"].shape == za["w"].shape                     # the same shape: only the checksum tells
    a.with_suffix(".npz").write_bytes(b.with_suffix(".npz").read_bytes())
    with pytest.raises(ModelFileError, match=r"a\.npz: its sha256 is not the [0-9a-f]{16}\.\.\.") as e:
        mmprog.load(a)
    assert "\n" not in str(e.value)
    rc, _, err = run(capsys, "evaluate", "--model", a, "--data", "tiny:seed=0")
    assert rc == 2 and "sha256" in one_line_error(err)


# ------------------------------------------------------------------------------------------------ the contract itself
def test_exit_codes_are_written_in_the_help_and_the_reference(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0
    epilog = out.split("exit codes:")[1]
    for code in ("0", "1", "2", "3", "4", "130"):
        assert f"\n  {code} " in epilog
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for code in ("0", "1", "2", "3", "4", "130"):
        assert f"| {code} |" in page
    assert "--debug" in out and "--debug" in page


def test_debug_shows_the_traceback_of_an_internal_error(capsys, monkeypatch):
    def broken(args):
        raise TypeError("a defect")

    monkeypatch.setattr("mmprog.cli.solvers.run", broken)
    rc, _, err = run(capsys, "solvers")
    assert rc == 4 and "internal error (TypeError: a defect)" in one_line_error(err)
    with pytest.raises(TypeError, match="a defect"):
        main(["--debug", "solvers"])
