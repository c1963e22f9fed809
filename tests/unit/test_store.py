"""Request records: atomic transitions mean racing clicks end in exactly one outcome."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from joinops.requests.ids import is_request_id
from joinops.requests.lifecycle import State
from joinops.requests.store import RequestStore
from tests.support.engine import stored_request
from workers.locks import LockSet, node_lock


def test_created_request_round_trips(redis_client):
    store = RequestStore(redis_client)
    made = stored_request(store, extra={"note": "x"})
    assert is_request_id(made.id)
    got = store.get(made.id)
    assert got == made
    assert [r.id for r in store.active()] == [made.id]


def test_twenty_racing_approvals_move_it_once(redis_client):
    store = RequestStore(redis_client)
    request = stored_request(store)
    with ThreadPoolExecutor(20) as pool:
        results = list(
            pool.map(
                lambda i: store.transition(request.id, State.APPROVED, decided_by=f"U{i}")[0],
                range(20),
            )
        )
    assert results.count(True) == 1
    winner = store.get(request.id)
    assert winner.state is State.APPROVED
    assert winner.decided_by == f"U{results.index(True)}"


def test_no_approval_after_rejection_or_expiry(redis_client):
    store = RequestStore(redis_client)
    rejected, expired = stored_request(store), stored_request(store)
    assert store.transition(rejected.id, State.REJECTED)[0]
    assert store.transition(expired.id, State.EXPIRED)[0]
    for request in (rejected, expired):
        moved, before = store.transition(request.id, State.APPROVED)
        assert not moved and before in (State.REJECTED, State.EXPIRED)
    assert store.active() == []


def test_cancel_is_refused_once_the_agent_started(redis_client):
    store = RequestStore(redis_client)
    request = stored_request(store, state=State.RUNNING)
    assert store.set_flag_if_state(request.id, "agent_started", {State.RUNNING})
    moved, before = store.transition(request.id, State.CANCELLED, unless_flag="agent_started")
    assert not moved and before is State.RUNNING


def test_agent_does_not_start_after_a_cancel(redis_client):
    store = RequestStore(redis_client)
    request = stored_request(store, state=State.RUNNING)
    assert store.transition(request.id, State.CANCELLED, unless_flag="agent_started")[0]
    assert not store.set_flag_if_state(request.id, "agent_started", {State.RUNNING})


def test_a_lock_names_its_holder_and_expires(redis_client):
    first = LockSet(redis_client, [node_lock("node-7")], "req-00000001", ttl_seconds=0.2)
    second = LockSet(redis_client, [node_lock("node-7")], "req-00000002", ttl_seconds=5)
    assert first.acquire() is None
    held = second.acquire()
    assert held is not None and held.holder == "req-00000001"
    assert first.acquire() is None  # its own lock: taken back on resume
    redis_client.pexpire(node_lock("node-7"), 1)  # the holder died: its lock runs out
    while redis_client.exists(node_lock("node-7")):
        pass
    assert second.acquire() is None
    assert second.holding()


def test_ended_requests_never_count_against_the_per_person_limit(redis_client):
    store = RequestStore(redis_client)
    made = [stored_request(store) for _ in range(5)]
    for request in made[:4]:
        assert store.transition(request.id, State.REJECTED)[0]
    assert store.open_count("U1", exact_from=3) == 1  # 5 remembered: counted, the 4 forgotten
    assert store.open_count("U1") == 1
    assert store.open_count("U2", exact_from=3) == 0
