"""CPU seconds and peak memory of a process and all its descendants, for benchmarks.

textpile's worker processes (page readers, the crawl's database process, scraping
workers) come from a forkserver: they are the forkserver's children, not this
process's, so ``getrusage(RUSAGE_CHILDREN)`` never counts them. :class:`ProcessTree`
samples the whole tree with psutil instead (every ``interval_s``; the list of
descendants, a scan of /proc, every ``children_every`` samples) and keeps, per process,
the last CPU time seen, so a worker's CPU still counts after it exited (less at most
one interval).
"""

from __future__ import annotations

import resource
import threading


class ProcessTree:
    """Use as a context manager around the measured work; then read :attr:`peak_rss`
    (bytes, the largest sum over the tree seen), :attr:`peak_pss` (the same with each
    process's proportional set size: pages shared by workers forked from one forkserver
    counted once, not once per process) and :meth:`cpu_s`."""

    def __init__(self, interval_s: float = 0.1, children_every: int = 10) -> None:
        import psutil

        self.process = psutil.Process()
        self.interval_s = interval_s
        self.children_every = children_every
        self.peak_rss = 0
        self.peak_pss = 0
        self._children: list = []
        self._child_cpu: dict[tuple[int, float], float] = {}
        self._start_cpu = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _own_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def _sample(self, refresh: bool) -> None:
        import psutil

        if refresh:
            try:
                self._children = self.process.children(recursive=True)
            except psutil.Error:
                pass
        total = self.process.memory_info().rss
        proportional = _pss(self.process, total)
        for child in self._children:
            try:
                with child.oneshot():
                    rss = child.memory_info().rss
                    total += rss
                    proportional += _pss(child, rss)
                    times = child.cpu_times()
                    self._child_cpu[(child.pid, child.create_time())] = times.user + times.system
            except psutil.Error:
                continue
        self.peak_rss = max(self.peak_rss, total)
        self.peak_pss = max(self.peak_pss, proportional)

    def _run(self) -> None:
        count = 0
        while not self._done.wait(self.interval_s):
            self._sample(count % self.children_every == 0)
            count += 1

    def __enter__(self) -> "ProcessTree":
        self._sample(True)
        self._baseline = dict(self._child_cpu)
        self._start_cpu = self._own_cpu()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()
        self._sample(True)
        self._end_cpu = self._own_cpu()

    def cpu_s(self) -> float:
        """CPU seconds (user + system) of this process and its descendants between
        entering and leaving the context (descendants as last sampled)."""
        children = sum(cpu - self._baseline.get(key, 0.0) for key, cpu in self._child_cpu.items())
        return self._end_cpu - self._start_cpu + children


def _pss(process, rss: int) -> int:
    """The proportional set size of ``process`` (Linux), else its ``rss``."""
    import psutil

    try:
        return process.memory_full_info().pss
    except (AttributeError, OSError, psutil.Error):
        return rss
