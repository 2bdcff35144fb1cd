import io
import os
import tarfile
from pathlib import Path

import pytest

from assay.evaluation.bundle import BundleTooLarge, pack, unpack


def tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print('a')\n")
    (root / "run.sh").write_text("echo hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "empty").mkdir()
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".assay" / "evals").mkdir(parents=True)
    (root / ".assay" / "evals" / "big.json").write_text("{}")
    (root / "src" / "__pycache__").mkdir()
    (root / "src" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    os.symlink("src/a.py", root / "link.py")
    return root


def test_round_trip_keeps_files_modes_links_and_leaves_out_git_data_and_caches(tmp_path):
    root = tree(tmp_path / "project")
    bundle = pack(root, exclude=[root / ".assay"])
    out = unpack(bundle.data, tmp_path / "copy")
    assert (out / "src" / "a.py").read_text() == "print('a')\n"
    assert os.access(out / "run.sh", os.X_OK)
    assert (out / "empty").is_dir()
    assert os.readlink(out / "link.py") == "src/a.py"
    assert not (out / ".git").exists() and not (out / ".assay").exists()
    assert not (out / "src" / "__pycache__").exists()


def test_same_tree_same_digest_and_an_edit_changes_it(tmp_path):
    root = tree(tmp_path / "project")
    first = pack(root)
    os.utime(root / "run.sh", (1, 1))  # times do not count
    assert pack(root).digest == first.digest
    (root / "src" / "a.py").write_text("print('b')\n")
    assert pack(root).digest != first.digest


def test_over_the_limit_is_refused(tmp_path):
    root = tmp_path / "big"
    root.mkdir()
    (root / "blob").write_bytes(b"x" * 4096)
    with pytest.raises(BundleTooLarge, match="more than"):
        pack(root, max_bytes=1024)


def test_a_member_escaping_the_target_is_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(tarfile.TarError):
        unpack(buffer.getvalue(), tmp_path / "target")
    assert not (tmp_path / "escaped.txt").exists()
