"""Reporting: tables, comparisons with significance tests, the CI gate and the leaderboard."""
