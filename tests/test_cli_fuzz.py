"""Fuzzing the command line (issue 39): Hypothesis draws whole command lines — every sub-command; flags with values
in and out of range; data, model, template and lexicon files that are valid, damaged (gzip cut short or corrupted),
empty, of binary bytes, in another encoding or wrongly shaped; output paths that are fresh, equal to an input (also
through a symbolic link), a folder, unwritable (a path under /proc, where nothing can be created even by root) or
full (/dev/full, written in place) — and checks for every one:

- the exit code is in the contract: 0, 2, 3 or 130 (and 1 for verify and catalogue --check, whose checks may fail);
- no ``Traceback`` on stderr, and an error is one line;
- no input file changed (bytes and mode of every file the fuzz set up), and /dev/full is still a device;
- no temporary file left (``.NAME.*.tmp`` / ``.probe`` beside an output).

The command lines run in-process (``mmprog.cli.main``: ~0.1 s each once Pyomo is imported, against ~1.5 s for a
process) with standard input replaced; a few fixed ones run as real processes too (start-up, and the exit code the
shell sees). Slow commands with valid arguments (``demo``, a whole ``verify --program all``, ``catalogue --check``,
the ``reproduce`` experiments) are drawn only with arguments that fail or finish fast. Derandomised: the same command
lines every run.
"""
import contextlib
import hashlib
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mmprog.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from test_tagging import _chain_treebank, _sentences, _write  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
N_CASES = int(os.environ.get("MMPROG_FUZZ_CASES", 300))
ALLOWED = {0, 2, 3, 130}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Input files (``inp``), an output folder (``out``) and the snapshot of every input file."""
    from mmprog.datasets import tiny_chain
    from mmprog.datasets.tsv import write_tsv
    base = tmp_path_factory.mktemp("fuzz")
    inp, out = base / "inp", base / "out"
    inp.mkdir()
    out.mkdir()
    _write(inp / "train.txt", _sentences(30, 0))
    _write(inp / "test.txt", _sentences(6, 1))
    _write(inp / "raw.txt", _sentences(4, 2), with_labels=False)
    _write(inp / "hash.txt", [[("#", "Z", "O"), ("Ana", "NC", "B-PER")], [("#", "Z", "O")]])
    (inp / "latin1.txt").write_bytes((inp / "test.txt").read_text().encode("latin-1"))
    (inp / "shape.txt").write_text("Ana NC B-PER\nvive V\n\nen SP O extra\n")
    (inp / "empty.txt").write_bytes(b"")
    (inp / "binary.bin").write_bytes(bytes(range(256)) * 4)
    _chain_treebank(inp / "t.conllu", 8, 5)
    (inp / "bad.conllu").write_text("1\tw\tw\tX\tX\t_\t7\tdep\t_\t_\n\n")
    (inp / "mwt.conllu").write_text("1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n1\tw1\tw1\tX\tT1\t_\t0\troot\t0:root\t_\n"
                                    "2\tw2\tw2\tX\tT2\t_\t1\tdep\t1:dep\t_\n2.1\tw\t_\tX\t_\t_\t_\t_\t1:dep\t_\n\n")
    import gzip
    gz = gzip.compress((inp / "test.txt").read_bytes())
    (inp / "cut.gz").write_bytes(gz[: len(gz) // 2])
    (inp / "corrupt.gz").write_bytes(gz[:18] + bytes(len(gz) - 18))
    tgz = gzip.compress((inp / "t.conllu").read_bytes())
    (inp / "t.conllu.gz").write_bytes(tgz[: len(tgz) // 2])
    write_tsv(tiny_chain(seed=0, n_sequences=8), inp / "tiny.tsv")
    (inp / "forms.tpl").write_text("U00:%x[0,0]\nU01:%x[-1,0]\nB\n")
    (inp / "bin.tpl").write_bytes(b"U00:%x[0,0]\n\xff\xfe\x00binary\n")
    (inp / "lex.txt").write_text("Madrid\tLOC\nLima LOC\n")
    for argv in (["train", "--data", f"conll:{inp / 'train.txt'},columns=form/pos/ne", "--templates", "rich",
                  "--slack", "one", "--eps", "0.1", "--out", inp / "ner", "--json"],
                 ["train", "--data", f"conllu:{inp / 't.conllu'}", "--slack", "one", "--eps", "0.1", "--out",
                  inp / "dep", "--json"],
                 ["train", "--data", "tiny:seed=0", "--eps", "0.01", "--out", inp / "chain", "--json"],
                 ["train", "--data", "tiny:seed=1", "--eps", "0.01", "--out", inp / "other", "--json"]):
        with contextlib.redirect_stdout(io.StringIO()):
            assert main([str(a) for a in argv]) == 0
    shutil.copy(inp / "chain.json", inp / "swapped.json")
    shutil.copy(inp / "other.npz", inp / "swapped.npz")          # same shape, another model's weights
    (inp / "broken.json").write_bytes(b'{"format": "mmprog-model", "format_version": 1, "program": ')
    shutil.copy(inp / "chain.npz", inp / "broken.npz")
    os.chmod(inp / "test.txt", 0o640)
    (out / "link-parent").mkdir()
    return {"inp": inp, "out": out, "snapshot": snapshot(inp),
            "rescued": set(Path(tempfile.gettempdir()).glob("*.rescued-*"))}


def snapshot(folder):
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(folder.iterdir()) if p.is_file()}


# ---------------------------------------------------------------------------------------------- command-line pieces
# (valid, invalid) choices: pick() takes a valid one four times in five, so that most command lines reach the work
# (and its outputs) and the rest fail on one piece at a time
TEXT = (["train.txt", "test.txt", "raw.txt", "hash.txt"],
        ["latin1.txt", "shape.txt", "empty.txt", "binary.bin", "cut.gz", "corrupt.gz", "missing.txt"])
TREES = (["t.conllu", "mwt.conllu"], ["bad.conllu", "t.conllu.gz", "empty.txt", "binary.bin", "missing.conllu"])
CONLL_OPTIONS = (["", ",columns=form/pos/ne"],
                 [",sep= ", ",sep=\t", ",columns=form/pos", ",columns=form", ",columns=a/a", ",encoding=latin-1", ",encoding=utf-16",
                  ",encoding=nope", ",nope=1", ","])
GENERATED = (["tiny:seed=0,n_sequences=6", "tiny:seed=2,n_sequences=3", "synthetic:seed=1,n_instances=8"],
             ["tiny:seed=x", "tiny:n_sequences=-1", "tiny:n_sequences=0", "nope:1", "", "tsv", "ocr:missing.npz"])
MODELS = (["ner", "dep", "chain", "ner.json", "dep.npz"], ["swapped", "broken", "missing"])
NUMBERS = (["1", "2", "0.5", "0.1"], ["0", "-1", "1e-300", "1e300", "nan", "inf", "-inf", "abc", ""])


def pick(data, choices, label):
    valid, invalid = choices
    ok = data.draw(st.integers(0, 4), label=f"{label} valid?") > 0
    return data.draw(st.sampled_from(valid if ok else invalid), label=label)


def text_spec(inp, data):
    f = pick(data, TEXT, "text file")
    return f"conll:{inp / f}" + pick(data, CONLL_OPTIONS, "conll options"), [inp / f]


def tree_spec(inp, data):
    f = pick(data, TREES, "tree file")
    dialect = pick(data, (["conllu"], ["conllx", "conll"]), "dialect")
    return f"{dialect}:{inp / f}", [inp / f]


def seq_spec(inp, data):
    kind = data.draw(st.sampled_from(["generated", "generated", "tsv", "tree", "text"]), label="data kind")
    if kind == "generated":
        return pick(data, GENERATED, "generated"), []
    if kind == "tsv":
        f = pick(data, (["tiny.tsv"], ["binary.bin", "empty.txt", "train.txt", "cut.gz"]), "tsv")
        return f"tsv:{inp / f}", [inp / f]
    return (tree_spec if kind == "tree" else text_spec)(inp, data)


def output(env, data, inputs, option, device_ok=False, ext=""):
    """A path for an output option: fresh, one of the command's inputs (or a link to it), a folder, unwritable,
    /dev/full (where written in place), or standard output."""
    bad = ["folder", "proc"] + (["input", "link"] if inputs else []) + (["dev-full"] if device_ok else [])
    kind = pick(data, (["fresh", "fresh-subdir"] + (["stdout"] if device_ok else []), bad), f"{option} kind")
    out = env["out"]
    if kind == "fresh":
        return str(out / f"o{ext}")
    if kind == "fresh-subdir":
        return str(out / "new" / "dir" / f"o{ext}")
    if kind == "folder":
        return str(out / "link-parent")
    if kind == "proc":
        return f"/proc/mmprog-fuzz/o{ext}"
    if kind == "dev-full":
        return "/dev/full"
    if kind == "stdout":
        return "-"
    target = data.draw(st.sampled_from(inputs), label=f"{option} input")
    if kind == "input":
        return str(target)
    link = out / f"link{ext}"
    if not link.is_symlink():
        link.symlink_to(target)
    return str(link)


def numeric(data, flag):
    return [flag, pick(data, NUMBERS, flag)] if data.draw(st.booleans(), label=f"has {flag}") else []


def model_arg(env, data):
    m = pick(data, MODELS, "model")
    p = env["inp"] / m
    base = str(p)[: -len(p.suffix)] if p.suffix in (".json", ".npz") else str(p)
    return str(p), [Path(base + ".json"), Path(base + ".npz")]


# --------------------------------------------------------------------------------------------------- commands
def cmd_train(env, data):
    inp = env["inp"]
    text_route = data.draw(st.booleans(), label="text route")
    spec, inputs = (text_spec if text_route else seq_spec)(inp, data)
    argv = ["train", "--data", spec, "--max-iter", pick(data, (["1", "2", "3"], ["-1", "0", "x"]), "max-iter"),
            "--time-limit", "20"]
    if text_route:
        tpl = pick(data, (["rich", "ner", "forms.tpl"], ["bin.tpl", "empty.txt", "nope"]), "tpl")
        argv += ["--templates", tpl if "." not in tpl else str(inp / tpl)]
        inputs = inputs + ([inp / tpl] if "." in tpl else [])
        if data.draw(st.booleans(), label="lexicon"):
            lex = pick(data, (["lex.txt"], ["binary.bin", "missing.txt"]), "lexicon file")
            argv += ["--lexicon", pick(data, ([f"gaz={inp / lex}"], ["nope", f"={inp / lex}"]), "lexicon")]
            inputs = inputs + [inp / lex]
        argv += pick(data, ([[], ["--tag-scheme", "iobes"], ["--order", "2"], ["--min-count", "2"]],
                            [["--min-count", "-3"], ["--order", "3"], ["--tag-scheme", "bio"]]), "text options")
    for flag in ("--eps", "--C"):
        argv += numeric(data, flag)
    argv += pick(data, ([[], ["--slack", "one"], ["--slack", "n"]], [["--slack", "two"]]), "slack")
    argv += pick(data, ([[], ["--program", "l1m3n"]], [["--program", "nope"], ["--program", "mtl"]]), "program")
    if data.draw(st.booleans(), label="n-jobs"):
        argv += ["--oracle", data.draw(st.sampled_from(["serial", "thread"]), label="oracle"),
                 "--n-jobs", pick(data, (["1", "2"], ["-2", "-1", "0", "x"]), "n-jobs")]
    for option, ext in (("--out", ""), ("--checkpoint", ""), ("--export", ".lp")):
        if data.draw(st.booleans(), label=f"has {option}"):
            argv += [option, output(env, data, inputs, option, ext=ext)]
    if data.draw(st.booleans(), label="checkpoint-every"):
        argv += ["--checkpoint-every", pick(data, (["1"], ["0", "-1"]), "checkpoint-every")]
    if data.draw(st.booleans(), label="json"):
        argv.append("--json")
    return argv, inputs


def cmd_tag(env, data):
    spec, inputs = text_spec(env["inp"], data)
    if data.draw(st.integers(0, 3), label="stdin") == 0:
        spec = "conll:-," + spec.split(",", 1)[1] if "," in spec else "conll:-"
    model, mfiles = model_arg(env, data)
    argv = ["tag", "--model", model, "--data", spec]
    argv += pick(data, ([[], ["--marginals"], ["--topk", "2"]], [["--topk", "0"], ["--topk", "-1"]]), "tag options")
    if data.draw(st.booleans(), label="has --out"):
        argv += ["--out", output(env, data, inputs + mfiles, "--out", device_ok=True)]
    return argv, inputs + mfiles


def cmd_parse(env, data):
    spec, inputs = tree_spec(env["inp"], data)
    model, mfiles = model_arg(env, data)
    argv = ["parse", "--model", model, "--data", spec]
    if data.draw(st.booleans(), label="has --out"):
        argv += ["--out", output(env, data, inputs + mfiles, "--out", device_ok=True)]
    if data.draw(st.booleans(), label="json"):
        argv.append("--json")
    return argv, inputs + mfiles


def cmd_model(env, data):
    spec, inputs = seq_spec(env["inp"], data)
    model, mfiles = model_arg(env, data)
    argv = [data.draw(st.sampled_from(["evaluate", "predict"])), "--model", model, "--data", spec]
    argv += pick(data, ([[], ["--json"]], [["--train-fold", "0"], ["--train-fold", "x"]]), "model options")
    return argv, inputs + mfiles


def cmd_export(env, data):
    spec, inputs = seq_spec(env["inp"], data)
    ext = pick(data, ([".lp", ".mps"], [".txt", ""]), "export ext")
    argv = ["export", "--data", spec, "--max-iter", pick(data, (["1", "2"], ["-1"]), "max-iter"),
            "--out", output(env, data, inputs, "--out", ext=ext)]
    argv += pick(data, ([[], ["--at-iter", "1"], ["--program", "l1m3n"]], [["--param", "nope=1"]]), "export options")
    return argv, inputs


def cmd_show(env, data):
    spec, inputs = seq_spec(env["inp"], data)
    argv = ["show", "--data", spec, "--max-iter", "2",
            "--program", pick(data, (["m3n", "l1m3n"], ["nope"]), "program")]
    argv += pick(data, ([[], ["--dual"], ["--latex"], ["--json"]], [["--cuts", "-1"]]), "show options")
    if data.draw(st.booleans(), label="export-dual"):
        argv += ["--export-dual", output(env, data, inputs, "--export-dual", ext=".lp")]
    return argv, inputs


def cmd_light(env, data):
    """Commands that are slow when they succeed, drawn with arguments that fail or finish fast."""
    inp = env["inp"]
    return data.draw(st.sampled_from([
        ["solvers"], ["solvers", "--json"], ["data"], ["data", "--json"], ["--version"], ["--help"], [],
        ["nope"], ["train"], ["tag", "--model"], ["-v", "solvers"],
        ["demo", "--nope"], ["demo", "--data-root"],
        ["verify", "--program", "nope"], ["verify", "--program", "m3n", "--data", "tiny:seed=0,n_sequences=3",
                                          "--eps", "0.1"],
        ["verify", "--program", "m3n", "--data", f"tsv:{inp / 'binary.bin'}"],
        ["verify", "--program", "all", "--param", "x=1"],
        ["catalogue", "--check", "--data", str(inp / "binary.bin")],
        ["catalogue", "--check", "--data", str(inp / "missing.tsv")],
        ["reproduce"], ["reproduce", "nope"], ["reproduce", "linf", "--nope"], ["reproduce", "sparsity", "--nope"],
    ]), label="light command"), []


def command_line(env, data):
    """(argv, bytes of standard input) drawn with Hypothesis's ``data``."""
    maker = data.draw(st.sampled_from([cmd_train, cmd_train, cmd_tag, cmd_tag, cmd_parse, cmd_model, cmd_export,
                                       cmd_show, cmd_light]), label="command")
    argv, _ = maker(env, data)
    stdin = data.draw(st.sampled_from([b"", b"Ana NC\n\n", (env["inp"] / "test.txt").read_bytes(), b"\xff\xfe\n"]),
                      label="stdin")
    return [str(a) for a in argv], stdin


# -------------------------------------------------------------------------------------------------------- running
def run_in_process(argv, stdin):
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:        # argparse: usage errors (2), --help and --version (0)
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        sys.stdin = saved
    return rc, out.getvalue(), err.getvalue()


def check_invariants(env, argv, rc, err):
    allowed = ALLOWED | ({1} if argv[:1] in (["verify"], ["catalogue"]) else set())
    assert rc in allowed, (argv, rc, err)
    assert "Traceback" not in err, (argv, err)
    if rc == 2 and err.startswith("mmprog: error:") or rc == 3:
        assert len([ln for ln in err.splitlines() if ln.startswith("mmprog: error:")]) == 1, (argv, err)
    now = snapshot(env["inp"])
    changed = [k for k, v in env["snapshot"].items() if now.get(k) != v]
    assert not changed, (argv, changed)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    left = [p for d in (env["inp"], env["out"]) for p in d.rglob("*")
            if p.name.startswith(".") and (p.name.endswith((".tmp", ".probe")) or ".tmp." in p.name)]
    assert not left, (argv, left)


def clean(env):
    """Remove what a command line wrote (outputs, fallbacks), so that the next one starts from the same files."""
    for p in env["inp"].iterdir():
        if p.name not in env["snapshot"]:
            p.unlink() if not p.is_dir() else shutil.rmtree(p)
    for p in env["out"].iterdir():
        if p.name == "link-parent":
            continue
        p.unlink() if p.is_symlink() or not p.is_dir() else shutil.rmtree(p)
    for p in set(Path(tempfile.gettempdir()).glob("*.rescued-*")) - env["rescued"]:
        p.unlink()


@settings(max_examples=N_CASES, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(data=st.data())
def test_cli_command_lines_keep_the_contract(env, data):
    argv, stdin = command_line(env, data)
    try:
        rc, _, err = run_in_process(argv, stdin)
        event(f"{argv[0] if argv else '(none)'} exit {rc}")
        if os.environ.get("MMPROG_FUZZ_WHY"):
            event(f"{argv[:1]} {rc} {err[:70]}")
        check_invariants(env, argv, rc, err)
    finally:
        clean(env)


# ---------------------------------------------------------------------------------------------- as real processes
@pytest.mark.parametrize("case", ["clobber", "proc", "dev-full", "damaged-gzip", "bad-n-jobs", "ok"])
def test_cli_as_a_process_keeps_the_contract(env, case):
    inp, out = env["inp"], env["out"]
    argv = {"clobber": ["tag", "--model", inp / "ner", "--data", f"conll:{inp / 'test.txt'}", "--out",
                        inp / "test.txt"],
            "proc": ["train", "--data", "tiny:seed=0", "--out", "/proc/mmprog-fuzz/m"],
            "dev-full": ["tag", "--model", inp / "ner", "--data", f"conll:{inp / 'test.txt'}", "--out", "/dev/full"],
            "damaged-gzip": ["tag", "--model", inp / "ner", "--data", f"conll:{inp / 'cut.gz'}"],
            "bad-n-jobs": ["train", "--data", "tiny:seed=0", "--oracle", "thread", "--n-jobs", "-2"],
            "ok": ["tag", "--model", inp / "ner", "--data", f"conll:{inp / 'test.txt'}", "--out", out / "t.txt"]}[case]
    env_vars = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        p = subprocess.run([sys.executable, "-m", "mmprog.cli", *map(str, argv)], capture_output=True, text=True,
                           env=env_vars, timeout=300, stdin=subprocess.DEVNULL)
        want = {"clobber": 2, "proc": 3, "dev-full": 3, "damaged-gzip": 2, "bad-n-jobs": 2, "ok": 0}[case]
        assert p.returncode == want, p.stderr
        check_invariants(env, [str(a) for a in argv], p.returncode, p.stderr)
        if case == "ok":
            assert np.all([ln.startswith(src) for ln, src in zip((out / "t.txt").read_text().splitlines(),
                                                                  (inp / "test.txt").read_text().splitlines())])
    finally:
        clean(env)
