"""Bench records (mmprog.bench.record): written whole (temporary file, then renamed), read back as written, rows
that do not say who produced them refused, the file's mode the umask's."""
import json
import os
import stat

import pytest

from mmprog.bench import record


def test_record_round_trip(tmp_path):
    path = tmp_path / "sub" / "crf.json"
    rows = [{"system": "mmprog", "setting": "rich", "f1": 93.8}, {"system": "crfsuite", "setting": "rich", "f1": 93.7}]
    rec = record.write(str(path), "crf", rows, packages=("numpy",), notes=["slice"], argv=["--task", "esp x"])
    back = record.read(str(path))
    assert back == json.loads(json.dumps(rec))
    assert back["rows"] == rows
    assert back["command"] == "python -m mmprog.bench crf --task 'esp x'"
    assert back["versions"]["numpy"] is not None and "mmprog" in back["versions"]
    assert back["machine"]["cpus"] == os.cpu_count()
    assert os.listdir(path.parent) == ["crf.json"]          # no temporary file left


def test_record_mode_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "r.json"
        record.write(str(path), "x", [{"system": "mmprog", "setting": "s"}], argv=[])
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_record_row_without_system_is_refused(tmp_path):
    with pytest.raises(ValueError, match="row 0 has no 'system'"):
        record.write(str(tmp_path / "r.json"), "x", [{"setting": "s"}], argv=[])
    assert not os.listdir(tmp_path)
