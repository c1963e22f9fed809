"""SlackSim driven through the real slack_sdk WebClient, over HTTP."""

import threading
import time
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import builtin_handlers
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.webhook import WebhookClient

from slacksim.server import SlackSim
from slacksim.tiers import Tiers

SECTION = {"type": "section", "text": {"type": "mrkdwn", "text": "*moving* node-1"}}


def error_of(call: Callable[[], object]) -> str:
    """The Slack error code `call` fails with."""
    with pytest.raises(SlackApiError) as caught:
        call()
    return str(caught.value.response["error"])


def test_auth_test_describes_the_bot(client: WebClient, sim: SlackSim) -> None:
    answer = client.auth_test()
    assert answer["ok"] is True
    assert answer["user_id"] == sim.workspace.bot_user_id
    assert answer["bot_id"].startswith("B")
    assert answer["team_id"].startswith("T")
    assert answer["url"].startswith("https://")


def test_post_message_answers_like_slack_and_is_recorded(client: WebClient, sim: SlackSim) -> None:
    first = client.chat_postMessage(channel="C1", text="moving", blocks=[SECTION])
    second = client.chat_postMessage(channel="C1", text="again")

    assert first["channel"] == "C1"
    assert first["ts"] == "1733150000.000100"
    assert float(second["ts"]) > float(first["ts"])
    assert first["message"]["blocks"] == [SECTION]
    assert first["message"]["text"] == "moving"
    assert first["message"]["bot_id"] == sim.workspace.bot_id

    call = sim.calls_to("chat.postMessage")[0]
    assert call.params == {"channel": "C1", "text": "moving", "blocks": [SECTION]}
    assert call.token == sim.token
    assert call.headers["authorization"] == f"Bearer {sim.token}"
    assert call.status == 200 and call.response["ts"] == first["ts"]
    assert list(sim.messages("C1")) == [first["ts"], second["ts"]]


def test_form_encoded_calls_are_parsed_and_json_params_decoded(
    client: WebClient, sim: SlackSim
) -> None:
    client.api_call(
        "chat.postMessage",
        params={"channel": "C1", "text": "x", "blocks": '[{"type": "divider"}]'},
    )
    call = sim.calls_to("chat.postMessage")[0]
    assert call.headers["content-type"] == "application/x-www-form-urlencoded"
    assert call.params["blocks"] == [{"type": "divider"}]


@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing")
def test_post_message_needs_a_channel_and_some_text(client: WebClient) -> None:
    assert error_of(lambda: client.chat_postMessage(channel="C1")) == "no_text"
    assert error_of(lambda: client.chat_postMessage(channel="", text="x")) == "channel_not_found"
    assert error_of(lambda: client.chat_postMessage(channel="C1", text="x" * 40_001)) == (
        "msg_too_long"
    )


def test_update_changes_the_stored_message(client: WebClient, sim: SlackSim) -> None:
    ts = client.chat_postMessage(channel="C1", text="pending", blocks=[SECTION])["ts"]

    answer = client.chat_update(channel="C1", ts=ts, text="done")
    assert answer["ts"] == ts and answer["text"] == "done"
    stored = sim.messages("C1")[ts]
    assert stored["text"] == "done"
    assert stored["blocks"] == [SECTION]  # omitted blocks are kept, as Slack does
    assert "edited" in stored

    client.chat_update(channel="C1", ts=ts, text="plain", blocks=[])
    assert "blocks" not in sim.messages("C1")[ts]


def test_update_of_a_missing_message_fails(client: WebClient) -> None:
    assert error_of(lambda: client.chat_update(channel="C1", ts="1.000000", text="x")) == (
        "message_not_found"
    )


def test_thread_replies_are_kept_in_order(client: WebClient, sim: SlackSim) -> None:
    parent = client.chat_postMessage(channel="C1", text="request")["ts"]
    replies = [
        client.chat_postMessage(channel="C1", thread_ts=parent, text=f"step {n}")["ts"]
        for n in range(3)
    ]

    assert [m["text"] for m in sim.thread("C1", parent)] == ["step 0", "step 1", "step 2"]
    assert [m["thread_ts"] for m in sim.thread("C1", parent)] == [parent] * 3
    assert list(sim.messages("C1")) == [parent]  # replies are not top-level
    assert sim.messages("C1")[parent]["reply_count"] == 3
    assert sim.messages("C1")[parent]["latest_reply"] == replies[-1]


def test_ephemeral_reaches_only_its_user(client: WebClient, sim: SlackSim) -> None:
    answer = client.chat_postEphemeral(channel="C1", user="U1", text="only you")
    assert answer["message_ts"]
    assert [(e["text"], e["channel"]) for e in sim.ephemerals("U1")] == [("only you", "C1")]
    assert sim.ephemerals("U2") == []
    assert sim.messages("C1") == {}


def test_permalink_points_at_the_message(client: WebClient) -> None:
    parent = client.chat_postMessage(channel="C1", text="a")["ts"]
    reply = client.chat_postMessage(channel="C1", text="b", thread_ts=parent)["ts"]

    link = client.chat_getPermalink(channel="C1", message_ts=parent)["permalink"]
    assert link.endswith(f"/archives/C1/p{parent.replace('.', '')}")
    reply_link = client.chat_getPermalink(channel="C1", message_ts=reply)["permalink"]
    assert reply_link.endswith(f"?thread_ts={parent}&cid=C1")
    assert error_of(lambda: client.chat_getPermalink(channel="C1", message_ts="9.9")) == (
        "message_not_found"
    )


def test_conversations_open_gives_a_stable_dm(client: WebClient) -> None:
    first = client.conversations_open(users="U1")
    again = client.conversations_open(users=["U1"])
    other = client.conversations_open(users="U2")

    assert first["channel"]["id"].startswith("D")
    assert again["channel"]["id"] == first["channel"]["id"]
    assert again["already_open"] is True
    assert other["channel"]["id"] != first["channel"]["id"]
    assert error_of(lambda: client.api_call("conversations.open")) == "users_list_not_supplied"


def test_users_info_synthesises_users_and_takes_overrides(client: WebClient, sim: SlackSim) -> None:
    sim.users["U2"] = {"real_name": "Grace Hopper", "tz": "America/New_York", "is_admin": True}

    plain = client.users_info(user="U1")["user"]
    assert plain["id"] == "U1" and plain["is_bot"] is False and "profile" in plain
    special = client.users_info(user="U2")["user"]
    assert special["real_name"] == "Grace Hopper" and special["is_admin"] is True
    assert error_of(lambda: client.users_info(user="nobody")) == "user_not_found"


def test_usergroup_membership_is_configurable(client: WebClient, sim: SlackSim) -> None:
    sim.usergroups["S123"] = ["U1", "U2"]
    assert client.usergroups_users_list(usergroup="S123")["users"] == ["U1", "U2"]
    assert error_of(lambda: client.usergroups_users_list(usergroup="S999")) == "no_such_subteam"


def test_files_upload_v2_stores_bytes_and_where_they_were_shared(
    client: WebClient, sim: SlackSim
) -> None:
    parent = client.chat_postMessage(channel="C1", text="request")["ts"]

    answer = client.files_upload_v2(
        channel="C1",
        thread_ts=parent,
        content=b"ignition: {}\n",
        filename="node-1.ign",
        title="Ignition for node-1",
        initial_comment="here you go",
    )

    assert answer["file"]["name"] == "node-1.ign"
    upload_url_call = sim.calls_to("files.getUploadURLExternal")[0]
    assert upload_url_call.response["upload_url"].startswith(sim.url + "/upload/F")
    [upload] = sim.uploads
    assert upload.content == b"ignition: {}\n"
    assert upload.completed and upload.title == "Ignition for node-1"
    assert (upload.channel_id, upload.thread_ts) == ("C1", parent)
    assert upload.initial_comment == "here you go"
    [shared] = sim.thread("C1", parent)
    assert shared["text"] == "here you go"
    assert shared["files"][0]["id"] == upload.file_id


def test_completing_an_upload_that_was_never_sent_fails(client: WebClient) -> None:
    file_id = client.files_getUploadURLExternal(filename="a.txt", length=3)["file_id"]
    assert (
        error_of(lambda: client.files_completeUploadExternal(files=[{"id": file_id}]))
        == "file_not_found"
    )


def test_views_open_and_reactions(client: WebClient, sim: SlackSim) -> None:
    view = {"type": "modal", "title": {"type": "plain_text", "text": "Join"}, "blocks": []}
    opened = client.views_open(trigger_id="1.2.abc", view=view)["view"]
    assert opened["id"].startswith("V") and opened["title"] == view["title"]
    assert [v["id"] for v in sim.views] == [opened["id"]]
    assert error_of(lambda: client.views_open(trigger_id="", view=view)) == "invalid_arguments"

    ts = client.chat_postMessage(channel="C1", text="x")["ts"]
    client.reactions_add(channel="C1", timestamp=ts, name="white_check_mark")
    assert sim.messages("C1")[ts]["reactions"][0]["name"] == "white_check_mark"
    assert (
        error_of(lambda: client.reactions_add(channel="C1", timestamp=ts, name="white_check_mark"))
        == "already_reacted"
    )


def test_unknown_methods_and_bad_tokens_are_refused(sim: SlackSim) -> None:
    good = WebClient(token=sim.token, base_url=sim.api_url)
    assert error_of(lambda: good.api_call("nodes.migrate")) == "unknown_method"
    wrong = WebClient(token="xoxb-wrong", base_url=sim.api_url)
    assert error_of(lambda: wrong.chat_postMessage(channel="C1", text="x")) == "invalid_auth"
    missing = WebClient(base_url=sim.api_url)
    assert error_of(lambda: missing.chat_postMessage(channel="C1", text="x")) == "not_authed"
    assert sim.messages("C1") == {}
    assert [(c.method, c.token) for c in sim.calls] == [
        ("nodes.migrate", sim.token),
        ("chat.postMessage", "xoxb-wrong"),
        ("chat.postMessage", None),
    ]


def test_rate_limit_is_honoured_by_the_sdk_retry_handler(
    sim: SlackSim, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    fake_time = types.SimpleNamespace(sleep=slept.append)
    monkeypatch.setattr(builtin_handlers, "time", fake_time)  # record, don't wait
    fault = sim.faults.add(method="chat.postMessage", status=429, retry_after=2, times=2)
    client = WebClient(
        token=sim.token,
        base_url=sim.api_url,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
    )

    answer = client.chat_postMessage(channel="C1", text="eventually")

    assert answer["ok"] is True
    assert fault.hits == 2
    assert [c.status for c in sim.calls_to("chat.postMessage")] == [429, 429, 200]
    assert sim.calls_to("chat.postMessage")[0].response == {"ok": False, "error": "ratelimited"}
    assert [int(s) for s in slept] == [2, 2]  # Retry-After reached the handler
    assert len(sim.messages("C1")) == 1  # refused attempts changed nothing


def test_rate_limit_without_retries_surfaces_retry_after(client: WebClient, sim: SlackSim) -> None:
    sim.faults.add(method="chat.postMessage", status=429, retry_after=7)
    with pytest.raises(SlackApiError) as caught:
        client.chat_postMessage(channel="C1", text="x")
    assert caught.value.response.status_code == 429
    assert caught.value.response.headers["Retry-After"] == "7"
    client.chat_postMessage(channel="C1", text="x")  # the fault was used up


def test_server_errors_and_api_errors_can_be_injected(client: WebClient, sim: SlackSim) -> None:
    sim.faults.add(method="chat.update", status=500)
    sim.faults.add(method="chat.postMessage", error="not_in_channel", times=None)

    with pytest.raises(SlackApiError) as caught:
        client.chat_update(channel="C1", ts="1.1", text="x")
    assert caught.value.response.status_code == 500
    for _ in range(2):
        assert error_of(lambda: client.chat_postMessage(channel="C1", text="x")) == (
            "not_in_channel"
        )
    sim.faults.clear()
    assert client.chat_postMessage(channel="C1", text="x")["ok"] is True


def test_latency_delays_the_answer(client: WebClient, sim: SlackSim) -> None:
    sim.faults.add(method="auth.test", latency=0.05)
    started = time.perf_counter()
    assert client.auth_test()["ok"] is True
    assert time.perf_counter() - started >= 0.05


def test_wait_for_wakes_on_calls_from_other_threads(client: WebClient, sim: SlackSim) -> None:
    poster = threading.Thread(target=lambda: client.chat_postMessage(channel="C1", text="late"))
    poster.start()
    [call] = sim.wait_for_calls("chat.postMessage", timeout=5)
    poster.join()
    assert call.params["text"] == "late"
    assert sim.wait_for(lambda: sim.messages("C1"), timeout=1)


def test_wait_for_times_out_naming_what_it_saw(client: WebClient, sim: SlackSim) -> None:
    client.auth_test()
    with pytest.raises(TimeoutError, match=r"calls seen: auth\.test"):
        sim.wait_for(lambda: sim.calls_to("chat.postMessage"), timeout=0.05)


def test_concurrent_posts_get_unique_timestamps() -> None:
    # 100 posts at once into one channel: far over Slack's posting limit, which this test of
    # timestamps switches off (test_slacksim_tiers.py tests the limits).
    with SlackSim(tiers=Tiers.off()) as sim, ThreadPoolExecutor(max_workers=25) as pool:
        client = WebClient(token=sim.token, base_url=sim.api_url, timeout=5)
        answers = list(
            pool.map(lambda n: client.chat_postMessage(channel="C1", text=str(n)), range(100))
        )
    assert len({a["ts"] for a in answers}) == 100
    assert len(sim.messages("C1")) == 100


def test_response_url_records_bodies_and_applies_them(sim: SlackSim) -> None:
    ts = WebClient(token=sim.token, base_url=sim.api_url).chat_postMessage(
        channel="C1", text="Approve?"
    )["ts"]
    url = sim.response_url("abc", channel="C1", user="U1", message_ts=ts)
    hook = WebhookClient(url)

    assert hook.send(text="working on it").body == "ok"
    assert hook.send(text="approved", replace_original=True).status_code == 200
    hook.send(text="for everyone", response_type="in_channel")

    assert [r["text"] for r in sim.responses("abc")] == [
        "working on it",
        "approved",
        "for everyone",
    ]
    assert sim.responses("abc")[1]["replace_original"] is True
    assert [e["text"] for e in sim.ephemerals("U1")] == ["working on it"]
    assert [m["text"] for m in sim.messages("C1").values()] == ["approved", "for everyone"]
    assert list(sim.response_urls) == ["abc"]


def test_response_url_limits_like_slack(sim: SlackSim) -> None:
    hook = WebhookClient(sim.url + "/response/unbound")
    assert hook.send(blocks=[SECTION]).status_code == 200
    assert hook.send(text="").status_code == 400  # no_text
    for _ in range(4):
        hook.send(text="x")
    used = hook.send(text="sixth")
    assert (used.status_code, used.body) == (404, "used_url")
    assert len(sim.responses("unbound")) == 5


def test_reset_forgets_everything(client: WebClient, sim: SlackSim) -> None:
    client.chat_postMessage(channel="C1", text="x")
    sim.faults.add(method="auth.test", status=500)
    sim.reset()
    assert sim.calls == [] and sim.messages("C1") == {} and len(sim.faults) == 0
    assert client.chat_postMessage(channel="C1", text="x")["ts"] == "1733150000.000100"


def test_files_delete_removes_the_file_and_leaves_a_tombstone(
    client: WebClient, sim: SlackSim
) -> None:
    dm = client.conversations_open(users="U1")["channel"]["id"]
    file_id = client.files_upload_v2(channel=dm, content=b"secret", filename="a.ign")["file"]["id"]

    assert client.files_delete(file=file_id)["ok"] is True
    [upload] = sim.uploads
    assert upload.deleted and upload.content is None
    [shared] = sim.messages(dm).values()
    assert shared["files"] == [{"id": file_id, "mode": "tombstone"}]
    assert error_of(lambda: client.files_delete(file=file_id)) == "file_deleted"


def test_files_delete_refuses_an_unknown_or_unfinished_file(client: WebClient) -> None:
    assert error_of(lambda: client.files_delete(file="F0NOSUCH01")) == "file_not_found"
    pending = client.files_getUploadURLExternal(filename="a.txt", length=3)["file_id"]
    assert error_of(lambda: client.files_delete(file=pending)) == "file_not_found"
    assert error_of(lambda: client.files_delete(file="")) == "invalid_arguments"
