"""The read backlog (issue 10): requests get room for their bodies first come, first
served, a few at a time as pages are read and written, so that while the page readers
are behind every origin slows down alike instead of all of them stopping at once."""

from __future__ import annotations

import asyncio

import httpx

from textpile.crawl.fetcher.fetch import FetchLimits, fetch
from textpile.crawl.loop.backlog import BodyRoom, ReadBacklog


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


def test_a_body_bigger_than_its_reservation_waits_for_room_before_the_waiting_requests():
    async def scenario():
        backlog = full_backlog()  # 900 held, mean 100
        body = BodyRoom(backlog, await backlog.room())
        assert (body.amount, backlog.reserved) == (100, 100)
        waiting = asyncio.create_task(backlog.room())
        growing = asyncio.create_task(body(400))  # 300 more than it reserved
        await asyncio.sleep(0)
        assert not waiting.done() and not growing.done()
        backlog.release(400)  # 500 held + 100 reserved: the growth fits, then the waiting request
        await asyncio.sleep(0)
        assert growing.done()
        assert await waiting == 100
        assert (body.grown, backlog.reserved) == (300, 500)
        await body(400)  # already has room for 400
        assert backlog.reserved == 500
        body.give_back()
        assert backlog.reserved == 100

    asyncio.run(scenario())


def test_growth_beyond_the_limit_passes_one_at_a_time_when_no_body_is_held():
    async def scenario():
        backlog = ReadBacklog(limit=1000)
        backlog.add(100)
        backlog.release(100)  # nothing held, mean 100
        first = BodyRoom(backlog, await backlog.room())
        second = BodyRoom(backlog, await backlog.room())
        await first(5000)  # beyond the limit, but no body is held and nothing grew
        later = asyncio.create_task(second(5000))
        await asyncio.sleep(0)
        assert not later.done()
        backlog.add(5000)  # the first body is counted and waits to be read
        first.give_back()
        await asyncio.sleep(0)
        assert not later.done()
        backlog.release(5000)  # read and written
        await later
        assert (backlog.size, backlog.reserved) == (0, 5000)

    asyncio.run(scenario())


def test_a_cancelled_growth_reserves_nothing():
    async def scenario():
        backlog = full_backlog()
        body = BodyRoom(backlog, await backlog.room())
        growing = asyncio.create_task(body(1000))
        waiting = asyncio.create_task(backlog.room())
        await asyncio.sleep(0)
        growing.cancel()
        await asyncio.gather(growing, return_exceptions=True)
        assert (body.grown, backlog.reserved) == (0, 100)
        backlog.release(100)
        assert await waiting == 100

    asyncio.run(scenario())


def _client(handler) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def test_fetch_asks_room_for_the_declared_length_before_reading_and_the_wait_is_not_its_time():
    asked: list[int] = []

    async def room(total: int) -> None:
        asked.append(total)
        await asyncio.sleep(1.5)  # longer than the deadline: the wait does not count against it

    async def scenario():
        async with _client(lambda request: httpx.Response(200, headers={"Content-Length": "10000"}, stream=httpx.ByteStream(b"x" * 10_000))) as client:
            return await fetch(client, "http://h.example/big", limits=FetchLimits(deadline_s=1.0), room=room)

    result = asyncio.run(scenario())
    assert (result.exit_code, result.status, len(result.body or b"")) == (None, 200, 10_000)
    assert asked == [10_000]
    assert result.room_wait_s >= 1.5 and result.duration_s < result.room_wait_s


def test_fetch_asks_room_for_twice_as_much_as_an_undeclared_body_grows():
    asked: list[int] = []

    async def room(total: int) -> None:
        asked.append(total)

    async def chunks():
        for _ in range(5):
            yield b"y" * 1000

    async def scenario():
        async with _client(lambda request: httpx.Response(200, content=chunks())) as client:
            ok = await fetch(client, "http://h.example/streamed", room=room)
        async with _client(lambda request: httpx.Response(404, stream=httpx.ByteStream(b"z" * 5000))) as client:
            missing = await fetch(client, "http://h.example/missing", room=room)
        return ok, missing

    ok, missing = asyncio.run(scenario())
    assert (ok.exit_code, len(ok.body or b"")) == (None, 5000)
    assert asked == [1000, 2000, 4000, 8000]  # a 404's body is never held: no room asked
    assert missing.status == 404


def test_the_backlog_limit_is_a_share_of_the_memory_within_bounds():
    from textpile.crawl.loop.backlog import read_backlog_bytes

    mib, gib = 2**20, 2**30
    assert [read_backlog_bytes(m) for m in (512 * mib, 4 * gib, 8 * gib, 24 * gib, 32 * gib, 256 * gib)] == [
        128 * mib, 128 * mib, 256 * mib, 768 * mib, 1024 * mib, 1024 * mib]
    assert ReadBacklog().limit == read_backlog_bytes()
    assert ReadBacklog(limit=1000).limit == 1000


def test_usable_memory_is_the_lower_of_the_machine_and_its_control_group(tmp_path):
    import os

    from textpile.processes import usable_memory_bytes

    machine = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    limited, unlimited, junk = tmp_path / "memory.max", tmp_path / "unlimited", tmp_path / "junk"
    limited.write_text("1073741824\n")
    unlimited.write_text("max\n")
    junk.write_text("-1\n")
    assert usable_memory_bytes([str(tmp_path / "missing")]) == machine
    assert usable_memory_bytes([str(unlimited), str(junk)]) == machine
    assert usable_memory_bytes([str(unlimited), str(limited)]) == min(machine, 2**30)
    assert usable_memory_bytes([str(limited), str(tmp_path / "missing")]) == min(machine, 2**30)
    odd = [b"\xff\xfe1024", "\u00b2".encode(), "\uff11\uff10".encode(), b"9" * 5000,
           b"", b" \n", b"-5", b"1e9"]
    for i, content in enumerate(odd):  # not a byte count in ASCII digits: no limit, no error
        (tmp_path / f"odd{i}").write_bytes(content)
    assert usable_memory_bytes([str(tmp_path / f"odd{i}") for i in range(len(odd))] + [str(tmp_path)]) == machine
