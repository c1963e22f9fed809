"""Facts → view: what each Slack message shows, every string already worded.

One module per message kind turns the facts (a request record, a verdict, a plan) into a frozen
view; `bot.render` turns that view into Block Kit blocks without wording anything itself.
"""
