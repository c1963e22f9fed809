"""The Web API methods the simulator answers, by Slack's method name."""

from __future__ import annotations

from collections.abc import Callable

from slacksim import chat, files, people, views
from slacksim.workspace import Json, Workspace

Method = Callable[[Workspace, Json], Json]

METHODS: dict[str, Method] = {
    "auth.test": people.auth_test,
    "chat.postMessage": chat.chat_post_message,
    "chat.update": chat.chat_update,
    "chat.postEphemeral": chat.chat_post_ephemeral,
    "chat.getPermalink": chat.chat_get_permalink,
    "conversations.open": people.conversations_open,
    "users.info": people.users_info,
    "usergroups.users.list": people.usergroups_users_list,
    "files.getUploadURLExternal": files.files_get_upload_url_external,
    "files.completeUploadExternal": files.files_complete_upload_external,
    "views.open": views.views_open,
    "reactions.add": chat.reactions_add,
}
