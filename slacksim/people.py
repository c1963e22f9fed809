"""Who is who: auth.test (the bot itself), users.info, usergroups.users.list, and
conversations.open (the DM or group DM with some people)."""

from __future__ import annotations

import re

from slacksim.params import id_list
from slacksim.workspace import Json, SlackError, Workspace

_USER_ID = re.compile(r"^[UW][A-Z0-9]+$")


def auth_test(ws: Workspace, params: Json) -> Json:
    return {
        "ok": True,
        "url": f"https://{ws.team_domain}.slack.com/",
        "team": ws.team_name,
        "user": ws.bot_name,
        "team_id": ws.team_id,
        "user_id": ws.bot_user_id,
        "bot_id": ws.bot_id,
        "is_enterprise_install": False,
    }


def conversations_open(ws: Workspace, params: Json) -> Json:
    if params.get("channel"):
        return {"ok": True, "channel": {"id": params["channel"]}}
    users = id_list(params.get("users"))
    if not users:
        raise SlackError("users_list_not_supplied")
    if len(users) > 8:
        raise SlackError("too_many_users")
    key = tuple(sorted(set(users)))
    answer: Json = {"ok": True}
    if key in ws.dms:
        answer.update({"no_op": True, "already_open": True})
    else:
        ws.dms[key] = ws.next_id("D" if len(key) == 1 else "G")
    answer["channel"] = {"id": ws.dms[key]}
    return answer


def users_info(ws: Workspace, params: Json) -> Json:
    user_id = str(params.get("user") or "")
    if not _USER_ID.match(user_id):
        raise SlackError("user_not_found")
    return {"ok": True, "user": ws.user(user_id)}


def usergroups_users_list(ws: Workspace, params: Json) -> Json:
    group = params.get("usergroup")
    if not group or group not in ws.usergroups:
        raise SlackError("no_such_subteam")
    return {"ok": True, "users": list(ws.usergroups[group])}
