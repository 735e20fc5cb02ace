"""Atomic writes: the file appears whole or not at all, and leftovers of killed writers go."""

from benign.core.io import atomic_path, write_text


def test_a_write_removes_the_temporary_files_of_a_killed_earlier_writer(tmp_path):
    target = tmp_path / "runs.parquet"
    stale = tmp_path / ".runs.abc123.tmp.parquet"  # what a writer killed mid-write leaves
    stale.write_bytes(b"partial")
    other = tmp_path / ".curves.abc123.tmp.parquet"  # another file's: not ours to remove
    other.write_bytes(b"partial")
    with atomic_path(target) as tmp:
        tmp.write_bytes(b"whole")
    assert target.read_bytes() == b"whole" and not stale.exists() and other.exists()


def test_a_failed_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "table.md"
    write_text(target, "old")
    try:
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    except RuntimeError:
        pass
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["table.md"]
