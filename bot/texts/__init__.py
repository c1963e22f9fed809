"""Every user-facing string of the Slack side, one module per message family.

Import the module you need (`from bot.texts import request as request_texts`); this package
re-exports nothing.
"""
