"""The Slack app manifest declares what the bot uses."""

from pathlib import Path

import yaml

MANIFEST = Path(__file__).resolve().parents[2] / "slack" / "manifest.yaml"


def test_the_manifest_declares_the_command_buttons_scopes_and_socket_mode():
    manifest = yaml.safe_load(MANIFEST.read_text())
    commands = manifest["features"]["slash_commands"]
    assert [c["command"] for c in commands] == ["/join"]
    assert commands[0]["should_escape"] is False  # the text arrives exactly as typed
    settings = manifest["settings"]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is True
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {"commands", "chat:write", "chat:write.public", "usergroups:read"} <= scopes
    assert {"im:write", "files:write"} <= scopes  # Ignition files go by direct message
