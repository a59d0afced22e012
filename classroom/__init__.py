"""Live classes: rooms that pose the course's questions to a class, votes from phones, tallies.

Pure Python on SQLAlchemy Core (no Streamlit): an embedded SQLite file by default, PostgreSQL
across replicas (``GFG_CLASS_DB``). The "Live class" page is a thin layer over this.
"""

from classroom.ballot import Ballot, Delivery, Outbox, deliver, valid_voter
from classroom.store import (
    CODE_ALPHABET,
    CODE_LENGTH,
    PHASES,
    Room,
    RoomError,
    Store,
    StoreUnavailable,
    VoteTooLate,
    VoteWaits,
    check_answer,
    client_address,
    normalise_code,
    open_store,
)

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
