"""Loans: a node moved for a while, and moved back when the time is up (`/join … for 8h`).

`model` (the loan and its states), `duration` (`for DURATION` in words and range), `store`
(loans in Redis, compare-and-set changes), `schedule` (the reminder and return jobs), `texts`.
"""
