"""textpile.signals.interruptions_deferred: a signal that comes during a short step that must
not be cut in two (a scraping worker being started) is handled right after it, by the
handler in place before it, never lost; an ignored one stays ignored."""

import signal
import threading

import pytest

from textpile.signals import interruptions_deferred


@pytest.fixture
def usr1_handled():
    """SIGUSR1 handled by appending "handled" to the list given; the handler is restored after."""
    seen: list[str] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: seen.append("handled"))
    yield seen
    signal.signal(signal.SIGUSR1, previous)


def test_a_signal_in_the_block_is_handled_after_it(usr1_handled):
    with interruptions_deferred((signal.SIGUSR1, signal.SIGUSR2)):
        signal.raise_signal(signal.SIGUSR1)
        signal.raise_signal(signal.SIGUSR1)  # twice in the block: handled once, as a pending signal is
        usr1_handled.append("block went on")
    usr1_handled.append("after")
    assert usr1_handled == ["block went on", "handled", "after"]
    signal.raise_signal(signal.SIGUSR1)  # the handler of before is back
    assert usr1_handled[-1] == "handled" and len(usr1_handled) == 4
    assert signal.getsignal(signal.SIGUSR2) is signal.SIG_DFL


def test_a_keyboard_interrupt_comes_after_the_block_even_when_the_block_raised():
    previous = signal.signal(signal.SIGUSR1, signal.default_int_handler)
    steps = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with interruptions_deferred((signal.SIGUSR1,)):
                signal.raise_signal(signal.SIGUSR1)
                steps.append("block went on")
        with pytest.raises(KeyboardInterrupt) as caught:
            with interruptions_deferred((signal.SIGUSR1,)):
                signal.raise_signal(signal.SIGUSR1)
                raise ValueError("the block's own error")
        assert isinstance(caught.value.__context__, ValueError)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert steps == ["block went on"]


def test_an_ignored_signal_stays_ignored():
    previous = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    try:
        with interruptions_deferred((signal.SIGUSR1,)):
            assert signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN
            signal.raise_signal(signal.SIGUSR1)
        assert signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_outside_the_main_thread_nothing_changes(usr1_handled):
    handlers = []

    def run():
        with interruptions_deferred((signal.SIGUSR1,)):
            handlers.append(signal.getsignal(signal.SIGUSR1))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert handlers == [signal.getsignal(signal.SIGUSR1)] and handlers[0] is not signal.SIG_DFL

