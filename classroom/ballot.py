"""A vote on its way from a phone to the store: kept until it lands, then said to have landed,
arrived too late, or been refused (pure Python over ``Store``; no Streamlit).

The phone keeps every vote it has not heard back about (in its browser storage) and sends it again
until the page tells it what happened; the page keeps it too and retries it on every poll while
the database does not answer. Sending it twice is harmless: a vote is keyed by (room, question,
variant, round, voter), so the same vote lands once, and one pressed for a round that has since
closed is refused as too late rather than counted in another round.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from classroom.store import (
    MAX_ID,
    MAX_VARIANT,
    RoomError,
    Store,
    StoreUnavailable,
    VoteTooLate,
    VoteWaits,
    normalise_code,
)

VOTER_ID = re.compile(r"^[A-Za-z0-9_-]{16,43}$")  # what the browser mints: 16 random bytes, base64url
BALLOT_ID = re.compile(r"^[A-Za-z0-9_-]{6,43}$")

COUNTED = "counted"
WAITING = "waiting"  # the database is not answering: kept, and sent again
LATE = "late"  # arrived after its round closed: not counted
REFUSED = "refused"  # not a vote this question takes (out of range, negative, …)

MESSAGES = {
    COUNTED: "counted. You can change it until voting closes.",
    WAITING: "The class's database is not answering — your vote is kept on this phone and will be sent.",
    LATE: "Your vote arrived after voting closed: it was not counted.",
}


def valid_voter(value: Any) -> bool:
    """Whether ``value`` looks like a voter id a browser minted (never anything typed)."""
    return isinstance(value, str) and bool(VOTER_ID.match(value))


@dataclass(frozen=True)
class Ballot:
    """One press of "Vote": what the phone showed (room, question, variant, round), the answer and
    the optional confidence, and an id the phone gives the press (to hear back about it)."""

    id: str
    code: str
    question_id: str
    variant: str
    round: int
    answer: str
    confidence: str | None = None
    asking: int | None = None  # which asking of the question (``Room.position``) the phone showed
    pressed_at: float | None = None  # when the phone pressed Vote, on the server's clock

    @classmethod
    def from_payload(cls, payload: Any, received_at: float | None = None) -> Ballot:
        """A ballot from the JSON the phone sends; ``RoomError`` for anything malformed. The
        phone stamps a press (``at``) and each sending of it (``sent``) with its own clock, in
        ms; with ``received_at`` (this server's clock, s) the press is put on the server's clock
        as ``received_at - (sent - at)``, so a phone's wrong clock does not matter."""
        if not isinstance(payload, dict):
            raise RoomError("not a vote")
        ballot_id, code = payload.get("id"), normalise_code(payload.get("code"))
        question_id, variant = payload.get("question"), payload.get("variant", "")
        round_number, answer = payload.get("round"), payload.get("answer")
        confidence = payload.get("confidence") or None
        if not (isinstance(ballot_id, str) and BALLOT_ID.match(ballot_id)) or not code:
            raise RoomError("not a vote")
        if not isinstance(question_id, str) or not 0 < len(question_id) <= MAX_ID:
            raise RoomError("not a vote")
        if not isinstance(variant, str) or len(variant) > MAX_VARIANT:
            raise RoomError("not a vote")
        if round_number not in (1, 2):
            raise RoomError("not a vote")
        if isinstance(answer, bool) or not isinstance(answer, str | int | float):
            raise RoomError("a vote is an option or a number")
        if confidence is not None and not isinstance(confidence, str):
            raise RoomError("confidence is sure or unsure")
        asking = payload.get("asking")
        if asking is not None and (isinstance(asking, bool) or not isinstance(asking, int) or asking < 0):
            raise RoomError("not a vote")
        pressed_at = None
        at, sent = payload.get("at"), payload.get("sent")
        if received_at is not None and all(
            isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) for t in (at, sent)
        ):
            held_s = (float(sent) - float(at)) / 1000
            if 0 <= held_s <= 12 * 3600:
                pressed_at = received_at - held_s
        return cls(
            ballot_id,
            code,
            question_id,
            variant,
            int(round_number),
            str(answer)[:64],
            confidence,
            asking,
            pressed_at,
        )

    @property
    def slot(self) -> tuple[str, str, str, int]:
        """The (room, question, variant, round) this vote is for: a later press replaces it."""
        return (self.code, self.question_id, self.variant, self.round)


@dataclass(frozen=True)
class Delivery:
    """What became of a ballot: ``status`` is COUNTED, WAITING, LATE or REFUSED; ``detail`` says
    why a ballot was refused."""

    ballot: Ballot
    status: str
    detail: str = ""

    @property
    def final(self) -> bool:
        """Whether the phone can forget the ballot (everything but WAITING)."""
        return self.status != WAITING


def deliver(store: Store, voter: str, ballot: Ballot) -> Delivery:
    """Send one ballot to the store as ``voter``: COUNTED, LATE (its round or question had closed
    when it arrived), REFUSED (with the reason) or WAITING (the database is not answering)."""
    try:
        store.vote(
            ballot.code,
            voter,
            ballot.answer,
            question_id=ballot.question_id,
            variant=ballot.variant,
            round=ballot.round,
            confidence=ballot.confidence,
            asking=ballot.asking,
            pressed_at=ballot.pressed_at,
        )
    except StoreUnavailable:
        return Delivery(ballot, WAITING)
    except VoteWaits as exc:
        return Delivery(ballot, WAITING, str(exc))
    except VoteTooLate as exc:
        return Delivery(ballot, LATE, str(exc))
    except RoomError as exc:
        return Delivery(ballot, REFUSED, str(exc))
    return Delivery(ballot, COUNTED)


class Outbox:
    """The ballots one page session holds until the store has them: the latest per slot. ``send``
    delivers a new ballot; ``retry`` tries the waiting ones again (each poll)."""

    def __init__(self) -> None:
        self.waiting: dict[tuple[str, str, str, int], Ballot] = {}
        self.outcomes: dict[str, Delivery] = {}  # ballot id -> what became of it (latest 50)

    def send(self, store: Store, voter: str, ballot: Ballot) -> Delivery:
        known = self.outcomes.get(ballot.id)
        if known is not None and known.final:
            return known  # the phone sent it again before it heard back: already done
        current = self.waiting.get(ballot.slot)
        if current is not None and current.id != ballot.id:
            self.waiting.pop(ballot.slot)  # a newer press replaces an older one still waiting
        delivery = deliver(store, voter, ballot)
        self._note(delivery)
        return delivery

    def retry(self, store: Store, voter: str) -> list[Delivery]:
        """Try every waiting ballot again; what became of each (stops at the first still waiting:
        the database is still not answering)."""
        done = []
        for ballot in list(self.waiting.values()):
            delivery = deliver(store, voter, ballot)
            self._note(delivery)
            done.append(delivery)
            if not delivery.final:
                break
        return done

    def _note(self, delivery: Delivery) -> None:
        if delivery.final:
            self.waiting.pop(delivery.ballot.slot, None)
        else:
            self.waiting[delivery.ballot.slot] = delivery.ballot
        self.outcomes[delivery.ballot.id] = delivery
        while len(self.outcomes) > 50:
            self.outcomes.pop(next(iter(self.outcomes)))
