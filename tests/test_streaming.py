"""What the parse benchmark's memory figure guards (tests/bench/test_parse_speed.py), checked cheaply in the default
run: stats.txt is streamed, so reading a file with four times the dumps, keeping a few stats, needs no more memory
(README's target: <= 1.1x the peak)."""

from __future__ import annotations

from bench.test_parse_speed import WANTED, _peak_rss_bytes, _write


def test_a_filtered_read_of_four_times_the_dumps_needs_no_more_memory(tmp_path):
    small, large = tmp_path / "stats.txt", tmp_path / "stats4x.txt"
    _write(small, 10_000_000)  # 10 MB: if the text were held, 4x would add 30 MB to the ~100 MB a process starts with
    _write(large, 40_000_000)
    assert _peak_rss_bytes(large, WANTED) / _peak_rss_bytes(small, WANTED) <= 1.1
