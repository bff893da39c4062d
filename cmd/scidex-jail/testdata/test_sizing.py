"""A test suite that sizes itself, as numpy's @requires_memory does: a
test that needs 1 GiB looks at MemAvailable in /proc/meminfo first and
skips itself when it is short. Under the jail's memory limit it must be
skipped, not take the run down (TestSuiteSizesItself)."""

import os

import pytest

NEED = 1 << 30


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            if key == "MemAvailable":
                return int(value.split()[0]) * 1024
    raise AssertionError("/proc/meminfo has no MemAvailable")


@pytest.mark.skipif(available_bytes() < NEED, reason="needs 1 GiB of available memory")
def test_allocates_1gib():
    # Filled, so that every page is touched and charged (bytearray(n)
    # alone may be mapped lazily).
    b = bytearray(b"\x01") * NEED
    assert len(b) == NEED


def test_cpu_count_is_the_affinity():
    assert os.cpu_count() == len(os.sched_getaffinity(0))
