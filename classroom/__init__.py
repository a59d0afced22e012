"""Live classes: rooms that pose the course's questions to a class, votes from phones, tallies.

Pure Python on SQLAlchemy Core (no Streamlit): an embedded SQLite file by default, PostgreSQL
across replicas (``GFG_CLASS_DB``). The "Live class" page is a thin layer over this.
"""

from __future__ import annotations

import importlib
from typing import Any

# The names below load on first use (PEP 562), so that ``classroom.numbers`` (the answer reader the
# lessons' pages share) does not import SQLAlchemy: the store costs 7.7 MiB of server memory
# (bench.server_memory's per-import figures) that a reader who never opens the Live class
# page need not pay.
_HOMES = {
    "Ballot": "classroom.ballot",
    "Delivery": "classroom.ballot",
    "Outbox": "classroom.ballot",
    "deliver": "classroom.ballot",
    "valid_voter": "classroom.ballot",
    "CODE_ALPHABET": "classroom.store",
    "CODE_LENGTH": "classroom.store",
    "PHASES": "classroom.store",
    "Room": "classroom.store",
    "RoomError": "classroom.store",
    "Store": "classroom.store",
    "StoreUnavailable": "classroom.store",
    "VoteTooLate": "classroom.store",
    "VoteWaits": "classroom.store",
    "check_answer": "classroom.store",
    "client_address": "classroom.store",
    "normalise_code": "classroom.store",
    "open_store": "classroom.store",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "PHASES",
    "Ballot",
    "Delivery",
    "Outbox",
    "Room",
    "RoomError",
    "Store",
    "StoreUnavailable",
    "VoteTooLate",
    "VoteWaits",
    "check_answer",
    "client_address",
    "deliver",
    "normalise_code",
    "open_store",
    "valid_voter",
]
