"""The command line is a package of one module per sub-command, found by name: adding a command is adding a module."""
import pkgutil

import mmprog.cli
from mmprog.cli import build_parser, commands, main

TODAY = ["train", "predict", "evaluate", "export", "solvers", "data", "demo", "verify", "show", "catalogue",
         "reproduce", "tag", "parse"]


def test_every_module_but_the_shared_one_is_a_command_in_help_order():
    names = [m.NAME for m in commands()]
    assert names == TODAY
    modules = {m.name for m in pkgutil.iter_modules(mmprog.cli.__path__)} - {"__main__"}
    assert modules == set(TODAY) | {"common"}
    help_text = build_parser().format_help()
    assert "{" + ",".join(TODAY) + "}" in help_text


def test_a_module_added_from_outside_becomes_a_command(tmp_path, monkeypatch, capsys):
    (tmp_path / "hello.py").write_text(
        'NAME = "hello"\nHELP = "say hello"\nORDER = 5\n\n'
        'def add_arguments(p):\n    p.add_argument("--who", default="world")\n\n'
        'def run(args):\n    print(f"hello {args.who}")\n    return 0\n')
    monkeypatch.setattr(mmprog.cli, "__path__", list(mmprog.cli.__path__) + [str(tmp_path)])
    assert [m.NAME for m in commands()][:2] == ["hello", "train"]
    assert main(["hello", "--who", "you"]) == 0
    assert capsys.readouterr().out == "hello you\n"
