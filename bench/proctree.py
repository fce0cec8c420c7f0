"""CPU seconds and peak memory of a process and all its descendants, for benchmarks.

textpile's worker processes (page readers, the crawl's database process, scraping
workers) come from a forkserver: they are the forkserver's children, not this
process's, so ``getrusage(RUSAGE_CHILDREN)`` never counts them. :class:`ProcessTree`
samples the whole tree with psutil instead (every ``interval_s``; the list of
descendants, a scan of /proc, every ``children_every`` samples) and keeps, per process,
the last CPU time seen, so a worker's CPU still counts after it exited (less at most
one interval). The sampler's own CPU (a thread of this process: /proc reads, psutil)
is measured with ``time.thread_time`` and left out of :meth:`cpu_s`, so the figure is
the measured work's, not the instrument's.
"""

from __future__ import annotations

import resource
import threading
import time


class ProcessTree:
    """Use as a context manager around the measured work; then read :attr:`peak_rss`
    (bytes, the largest sum over the tree seen), :attr:`peak_pss` (the same with each
    process's proportional set size: pages shared by workers forked from one forkserver
    counted once, not once per process), :meth:`cpu_s` and its parts :meth:`own_cpu_s`
    (this process, less the sampler) and :meth:`children_cpu_s`. ``pss_every``: read
    PSS (a walk of each process's page tables: costly for big processes) every that many
    samples only."""

    def __init__(self, interval_s: float = 0.1, children_every: int = 10, pss_every: int = 1) -> None:
        import psutil

        self.process = psutil.Process()
        self.interval_s = interval_s
        self.children_every = children_every
        self.pss_every = pss_every
        #: CPU seconds the sampler thread used (left out of cpu_s)
        self.sampler_cpu_s = 0.0
        self.peak_rss = 0
        self.peak_pss = 0
        self._children: list = []
        self._child_cpu: dict[tuple[int, float], float] = {}
        #: the process name (``comm``) of each child, as last sampled
        self._child_name: dict[tuple[int, float], str] = {}
        self._start_cpu = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _own_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def _sample(self, refresh: bool, pss: bool = True) -> None:
        import psutil

        if refresh:
            try:
                self._children = self.process.children(recursive=True)
            except psutil.Error:
                pass
        total = self.process.memory_info().rss
        proportional = _pss(self.process, total) if pss else total
        for child in self._children:
            try:
                with child.oneshot():
                    rss = child.memory_info().rss
                    total += rss
                    proportional += _pss(child, rss) if pss else rss
                    times = child.cpu_times()
                    key = (child.pid, child.create_time())
                    self._child_cpu[key] = times.user + times.system
                    self._child_name[key] = child.name()
            except psutil.Error:
                continue
        self.peak_rss = max(self.peak_rss, total)
        if pss:
            self.peak_pss = max(self.peak_pss, proportional)

    def _run(self) -> None:
        started = time.thread_time()
        count = 0
        while not self._done.wait(self.interval_s):
            self._sample(count % self.children_every == 0, count % self.pss_every == 0)
            count += 1
        self.sampler_cpu_s = time.thread_time() - started

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

    def own_cpu_s(self) -> float:
        """CPU seconds (user + system) of this process between entering and leaving the
        context, less the sampler thread's."""
        return self._end_cpu - self._start_cpu - self.sampler_cpu_s

    def children_cpu_s(self) -> float:
        """CPU seconds of the descendants in the same span (as last sampled)."""
        return sum(cpu - self._baseline.get(key, 0.0) for key, cpu in self._child_cpu.items())

    def children_cpu_by_name(self) -> dict[str, float]:
        """:meth:`children_cpu_s` per process name (``comm``: textpile names its workers
        by role, see textpile.processes.name_this_process), largest first."""
        by_name: dict[str, float] = {}
        for key, cpu in self._child_cpu.items():
            name = self._child_name.get(key, "?")
            by_name[name] = by_name.get(name, 0.0) + cpu - self._baseline.get(key, 0.0)
        return dict(sorted(by_name.items(), key=lambda item: -item[1]))

    def cpu_s(self) -> float:
        """CPU seconds (user + system) of this process (less the sampler) and its
        descendants between entering and leaving the context."""
        return self.own_cpu_s() + self.children_cpu_s()


def _pss(process, rss: int) -> int:
    """The proportional set size of ``process`` (Linux), else its ``rss``."""
    import psutil

    try:
        return process.memory_full_info().pss
    except (AttributeError, OSError, psutil.Error):
        return rss
