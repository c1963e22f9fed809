"""The Web API methods the simulator answers, by Slack's method name."""

from __future__ import annotations

from collections.abc import Callable

from slacksim.chat import (
    chat_get_permalink,
    chat_post_ephemeral,
    chat_post_message,
    chat_update,
    reactions_add,
)
from slacksim.conversations import conversations_history, conversations_replies
from slacksim.files import (
    files_complete_upload_external,
    files_delete,
    files_get_upload_url_external,
)
from slacksim.people import auth_test, conversations_open, usergroups_users_list, users_info
from slacksim.socket_mode import apps_connections_open
from slacksim.views import views_open
from slacksim.workspace import Json, Workspace

Method = Callable[[Workspace, Json], Json]

METHODS: dict[str, Method] = {
    "apps.connections.open": apps_connections_open,
    "auth.test": auth_test,
    "chat.postMessage": chat_post_message,
    "chat.update": chat_update,
    "chat.postEphemeral": chat_post_ephemeral,
    "chat.getPermalink": chat_get_permalink,
    "conversations.open": conversations_open,
    "conversations.replies": conversations_replies,
    "conversations.history": conversations_history,
    "users.info": users_info,
    "usergroups.users.list": usergroups_users_list,
    "files.getUploadURLExternal": files_get_upload_url_external,
    "files.completeUploadExternal": files_complete_upload_external,
    "files.delete": files_delete,
    "views.open": views_open,
    "reactions.add": reactions_add,
}
