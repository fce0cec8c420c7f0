"""Python's cyclic garbage collector paused around work that makes many short-lived objects.

textpile's bulk steps (scraping a page, integrating a batch) make hundreds of thousands of
tuples, lists and dicts that their reference counts free as soon as they are done with.
CPython still starts a collection whenever 700 more container objects are made than freed,
and each one walks the objects that survived: work that finds nothing to free. Paused for
such a step, a reference cycle made meanwhile waits for the next collection after it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collections_paused() -> Iterator[None]:
    """The cyclic garbage collector disabled while inside, then enabled again if it was
    enabled before (a caller that turned it off keeps it off). Nesting is safe."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
