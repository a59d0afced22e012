"""Live classes: rooms that pose the course's questions to a class, votes from phones, tallies.

Pure Python on SQLAlchemy Core (no Streamlit): an embedded SQLite file by default, PostgreSQL
across replicas (``GFG_CLASS_DB``). The "Live class" page is a thin layer over this.
"""

from classroom.store import (
    CODE_ALPHABET,
    CODE_LENGTH,
    PHASES,
    Room,
    RoomError,
    Store,
    StoreUnavailable,
    check_answer,
    normalise_code,
    open_store,
)

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "PHASES",
    "Room",
    "RoomError",
    "Store",
    "StoreUnavailable",
    "check_answer",
    "normalise_code",
    "open_store",
]
