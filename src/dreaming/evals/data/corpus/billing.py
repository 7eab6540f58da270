"""Payment client of the shop (evaluation corpus: a small codebase the research loop is replayed against)."""

MAX_RETRIES = 5
"""Payment calls are retried at most five times, with exponential backoff."""

INVOICE_DUE_DAYS = 30
"""Invoices are due thirty days after they are issued."""


def charge(amount_cents: int) -> None:
    """Charge a card; raises after MAX_RETRIES failed attempts."""
    raise NotImplementedError
