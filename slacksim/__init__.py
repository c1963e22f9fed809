"""slacksim."""
