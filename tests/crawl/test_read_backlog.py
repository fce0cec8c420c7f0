"""The read backlog (issue 10): requests get room for their bodies first come, first
served, a few at a time as pages are read and written, so that while the page readers
are behind every origin slows down alike instead of all of them stopping at once."""

from __future__ import annotations

import asyncio

from textpile.crawl.origin import ReadBacklog


def full_backlog() -> ReadBacklog:
    """A backlog of limit 1000 holding nine bodies of 100 bytes (mean 100)."""
    backlog = ReadBacklog(limit=1000)
    for _ in range(9):
        backlog.add(100)
    return backlog


def test_room_is_given_in_the_order_asked_and_by_class():
    async def scenario():
        backlog = full_backlog()
        admitted: list[str] = []

        async def ask(name: str, reading: bool) -> int:
            amount = await backlog.room(reading=reading)
            admitted.append(name)
            return amount

        assert await backlog.room() == 100  # 900 + 100 fits the limit at once
        assert (backlog.size, backlog.reserved) == (900, 100)
        tasks = [asyncio.create_task(ask(name, reading)) for name, reading in
                 [("b-reading", True), ("c", False), ("d", False), ("e-reading", True)]]
        await asyncio.sleep(0)
        assert admitted == []  # 1000 held: nobody fits
        backlog.release(100)  # 900 held: one non-reading request fits, the reading one needs < 750
        await asyncio.sleep(0)
        assert admitted == ["c"]
        backlog.release(350)  # 650 held: 450 of bodies, 200 reserved (the first request and c)
        await asyncio.sleep(0)
        # b, which asked first, fits now (650 + 100 <= 750) and gets room first, then d
        # (850 <= 1000); e would make 950 > 750 and waits.
        assert admitted == ["c", "b-reading", "d"]
        assert (backlog.size, backlog.reserved) == (450, 400)
        backlog.unreserve(100)  # requests whose bodies did not come (a 404, a timeout)
        backlog.unreserve(100)
        backlog.unreserve(100)
        await asyncio.sleep(0)
        assert admitted == ["c", "b-reading", "d", "e-reading"]  # 450 + 100 + 100 <= 750
        assert await asyncio.gather(*tasks) == [100, 100, 100, 100]
        assert (backlog.size, backlog.reserved) == (450, 200)

    asyncio.run(scenario())


def test_a_newcomer_waits_behind_the_requests_already_waiting():
    async def scenario():
        backlog = full_backlog()
        await backlog.room()  # 1000 held
        first = asyncio.create_task(backlog.room())
        await asyncio.sleep(0)
        backlog.release(50)  # 950 held: the waiting request does not fit yet
        late = asyncio.create_task(backlog.room())  # would not fit either; must not jump the queue
        await asyncio.sleep(0)
        backlog.release(100)  # 850 held: room for one
        await asyncio.sleep(0)
        assert first.done() and not late.done()
        backlog.release(200)
        assert await late == 100

    asyncio.run(scenario())


def test_a_cancelled_wait_reserves_nothing_and_lets_the_next_in():
    async def scenario():
        backlog = full_backlog()
        await backlog.room()
        waiting = asyncio.create_task(backlog.room())
        behind = asyncio.create_task(backlog.room())
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        backlog.release(100)
        assert await behind == 100
        assert (backlog.size, backlog.reserved) == (800, 200)

    asyncio.run(scenario())


def test_an_empty_backlog_lets_any_body_through_and_the_estimate_follows_the_bodies():
    async def scenario():
        backlog = ReadBacklog(limit=1000)
        assert backlog.estimate() == ReadBacklog.FIRST_ESTIMATE
        assert await backlog.room() == ReadBacklog.FIRST_ESTIMATE  # bigger than the limit, but nothing is held
        backlog.add(3000)
        backlog.unreserve(ReadBacklog.FIRST_ESTIMATE)
        backlog.add(1000)
        assert backlog.estimate() == 2000
        blocked = asyncio.create_task(backlog.room())
        await asyncio.sleep(0)
        assert not blocked.done()
        backlog.release(4000)
        assert await blocked == 2000

    asyncio.run(scenario())
