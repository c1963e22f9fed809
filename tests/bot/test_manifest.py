"""The Slack app manifest declares what the bot uses, and nothing more."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "slack" / "manifest.yaml"
# Where the code that talks to Slack lives (the CLI, the workers and the domain never do).
SLACK_CODE = [ROOT / "bot", ROOT / "joinops", ROOT / "workers", ROOT / "cli"]
# slack_sdk's WebClient methods, named as the code calls them: every Web API family.
CALL = re.compile(
    r"\.((?:admin|apps|auth|bookmarks|bots|calls|chat|conversations|dialog|dnd|emoji|files|"
    r"functions|im|mpim|oauth|openid|pins|reactions|reminders|rtm|search|stars|team|"
    r"usergroups|users|views|workflows)_[A-Za-z0-9_]+)\("
)
# The bot token scope each method the bot calls needs (docs.slack.dev/reference/methods).
NEEDS = {
    "chat_postMessage": "chat:write",
    "chat_update": "chat:write",
    # a reply whose post went unanswered is looked for in its thread, public or private
    "conversations_replies": "channels:history groups:history",
    "conversations_history": "channels:history groups:history",
    "conversations_open": "im:write",
    "files_upload_v2": "files:write",  # files.getUploadURLExternal, files.completeUploadExternal
    "files_delete": "files:write",
    "usergroups_users_list": "usergroups:read",
    "users_info": "users:read",  # guests and other organisations' members are refused
}
NO_SCOPE = {"auth_test"}  # the installing workspace: any token may ask
# Scopes no method call shows: the slash command, and posting where the bot was not invited.
WITHOUT_A_CALL = {"commands", "chat:write.public"}


def manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def methods_called() -> set[str]:
    found: set[str] = set()
    for directory in SLACK_CODE:
        for path in directory.rglob("*.py"):
            found |= set(CALL.findall(path.read_text()))
    return found


def test_the_manifest_declares_the_command_buttons_and_socket_mode():
    commands = manifest()["features"]["slash_commands"]
    assert [c["command"] for c in commands] == ["/join"]
    assert commands[0]["should_escape"] is False  # the text arrives exactly as typed
    settings = manifest()["settings"]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is True


def test_the_app_home_shows_the_bots_direct_messages_read_only():
    app_home = manifest()["features"]["app_home"]
    assert app_home == {
        "home_tab_enabled": False,
        "messages_tab_enabled": True,  # the Ignition files' DMs can be seen…
        "messages_tab_read_only_enabled": True,  # …and nobody types to the bot there
    }


def test_the_scopes_are_exactly_what_the_bots_web_api_calls_need():
    called = methods_called()
    unknown = called - set(NEEDS) - NO_SCOPE
    assert not unknown, f"methods without a known scope in this test: {sorted(unknown)}"
    assert {"chat_postMessage", "chat_update", "conversations_open"} <= called
    assert {"files_upload_v2", "files_delete", "usergroups_users_list"} <= called
    needed = {scope for m in called - NO_SCOPE for scope in NEEDS[m].split()} | WITHOUT_A_CALL
    assert set(manifest()["oauth_config"]["scopes"]["bot"]) == needed
    assert {"users_info", "auth_test"} <= called  # who may ask is checked with Slack
