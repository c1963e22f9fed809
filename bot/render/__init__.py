"""View → blocks: slack_sdk Block Kit blocks from the views of `bot.views`.

Renderers word nothing: every string is in the view (import-linter keeps `bot.texts` and the
domain out of here).
"""
