"""collections_paused: the cyclic collector off inside, as it was after (also after an error)."""

from __future__ import annotations

import gc

import pytest

from textpile.gc_pause import collections_paused


@pytest.fixture(autouse=True)
def collector_restored():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_enabled_again_after():
    gc.enable()
    with collections_paused():
        assert not gc.isenabled()
        with collections_paused():  # nested: the outer pause holds
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off():
    gc.disable()
    with collections_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_enabled_again_after_an_error():
    gc.enable()
    with pytest.raises(KeyError), collections_paused():
        raise KeyError("inside")
    assert gc.isenabled()
