"""The course's link to the learner's browser: progress kept in ``localStorage``, the keys a
presentation clicker sends, and where the keyboard focus goes after an answer or a step change.

One small inline component of Streamlit's own ``st.components.v2`` (no package, no build step, no
iframe): on a page load it hands the stored progress to Python once (the ``loaded`` trigger), it
writes the progress back whenever Python sends a new copy (``save`` with a new ``seq``), and in
presenter view it turns PageDown/PageUp and the arrow keys into ``next``/``prev`` (the ``key``
trigger) unless a form field has the focus. Nothing is sent to a server: the record stays in this
browser until the learner exports it.

Focus (WCAG 2.4.3): Streamlit redraws a page without moving the focus, so after "Next" a keyboard or
screen-reader user would be left on a button of the old step, and after an answer on the page body.
Python names the new content (``focus``: a CSS selector, the text it must contain, and a sequence
number so each request is carried out once); the script waits for that element to be drawn, makes
it focusable (``tabindex=-1``), moves the focus to it and scrolls it into view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from classroom.numbers import NUMBER_JS

STORAGE_KEY = "gfg-progress-v1"

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const KEY = "__KEY__";
  const g = (window.__gfgCourse = window.__gfgCourse || { seq: null, loaded: false, keys: false });
  g.setTrigger = setTriggerValue;
  if (!g.loaded) {
    g.loaded = true;
    let stored = null;
    try { stored = window.localStorage.getItem(KEY); } catch (e) { stored = null; }
    setTriggerValue("loaded", stored === null ? "" : stored);
  }
  if (data && typeof data.save === "string" && data.seq !== g.seq) {
    g.seq = data.seq;
    try { window.localStorage.setItem(KEY, data.save); } catch (e) { /* storage full or blocked */ }
  }
  const focus = data && data.focus;
  if (focus && focus.seq !== g.focusSeq) {
    g.focusSeq = focus.seq;
    const find = () => [...document.querySelectorAll(focus.selector)].find(
      (el) => !focus.text || (el.textContent || "").includes(focus.text));
    const move = (el) => {
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: focus.block || "start" });
    };
    let tries = 0;
    const look = () => {
      const el = find();
      if (el) {
        move(el);
        // Streamlit may replace the element once the run ends: focus its successor once more.
        setTimeout(() => {
          const again = find();
          if (again && document.activeElement !== again &&
              (document.activeElement === document.body || !document.activeElement)) move(again);
        }, 600);
      } else if (++tries < 60) {
        setTimeout(look, 75);
      }
    };
    look();
  }
  g.keys = !!(data && data.keys);
  if (!g.listening) {
    g.listening = true;
    let count = 0;
    window.addEventListener("keydown", (event) => {
      if (!g.keys || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      const target = event.target;
      if (target && target.closest &&
          target.closest("input, textarea, select, [contenteditable], [role=slider], [role=radiogroup], " +
                         "[role=listbox], [role=combobox], [role=spinbutton], [role=tablist]")) return;
      let move = null;
      if (event.key === "PageDown" || event.key === "ArrowRight") move = "next";
      if (event.key === "PageUp" || event.key === "ArrowLeft") move = "prev";
      if (!move) return;
      event.preventDefault();
      count += 1;
      g.setTrigger("key", move + ":" + count);
    });
  }
}
""".replace("__KEY__", STORAGE_KEY)

_component = st.components.v2.component("gfg_course_browser", js=_JS)


def _ignore() -> None:
    """Trigger callbacks name the events this component sends; the page reads the values."""


def browser_link(
    *, save: str | None, seq: int, keys: bool, focus: dict[str, Any] | None = None
) -> tuple[str | None, str | None]:
    """Mount the component; returns (the stored progress JSON on the run after a page load, else
    None; "next"/"prev" when a clicker key was pressed, else None). ``focus`` (``selector``,
    ``text``, ``block``, ``seq``) moves the keyboard focus to the element it names, once per ``seq``."""
    result: Any = _component(
        key="gfg-course-browser",
        data={"save": save, "seq": seq, "keys": keys, "focus": focus},
        height=0,
        on_loaded_change=_ignore,
        on_key_change=_ignore,
    )
    loaded = getattr(result, "loaded", None)
    key = getattr(result, "key", None)
    move = key.split(":", 1)[0] if isinstance(key, str) else None
    return (loaded if isinstance(loaded, str) else None), move


# -- the live class ------------------------------------------------------------------------------
#
# A second component for the Live class page (ui/class_view.py), kept apart from the course's so
# neither can disturb the other. In this browser's localStorage under CLASS_STORAGE_KEY:
#
# * ``voter``: a random id minted once per browser (16 random bytes, base64url). It is this
#   device's identity in every room: reopening the join link, a new tab or a reload is the same
#   voter, and no link ever carries it.
# * ``hosts``: for each room this browser controls, its lecturer credential (the store keeps only
#   its hash). A lecturer link carries a one-time token after ``#`` (browsers never send that part
#   to a server); on first open the script takes it out of the address bar and this history entry
#   and hands it to Python, which exchanges it for this browser's own credential.
# * ``pending``: every vote not yet heard back about, one per (room, question, variant, round).
#   A vote is stored here before it is sent, and sent again until the page reports what became of
#   it: counted, too late, or refused. So a vote pressed while the database or the connection is
#   down is kept on the phone, and a replica that dies mid-vote loses nothing.
#
# Three mounts: ``link`` (the top of every class page, no height: identity, credentials, the
# one-time token), ``ballot`` (a student's vote form and its status, inside the poll fragment) and
# ``live`` (the lecturer's poll fragment, no height). All of them can announce a change to screen
# readers (one polite live region appended to the document) and move the keyboard focus to new
# content. Every text is set with textContent: nothing from Python is parsed as HTML.

CLASS_STORAGE_KEY = "gfg-class-v1"

_CLASS_CSS = """
.gfg-ballot { font-family: var(--st-font); color: var(--st-text-color); font-size: 1.05rem;
  line-height: 1.4; }
.gfg-ballot fieldset { border: 0; margin: 0 0 0.8rem; padding: 0; min-width: 0; }
.gfg-ballot legend { font-weight: 600; margin-bottom: 0.4rem; padding: 0; }
.gfg-ballot .option { display: flex; gap: 0.65rem; align-items: flex-start; box-sizing: border-box;
  min-height: 44px; padding: 0.6rem 0.75rem; margin-bottom: 0.45rem; cursor: pointer;
  border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.3));
  border-radius: var(--st-base-radius, 0.5rem); }
.gfg-ballot .option:has(input:checked) { border-color: var(--st-primary-color);
  box-shadow: inset 0 0 0 1px var(--st-primary-color); }
.gfg-ballot input[type="radio"] { width: 1.2rem; height: 1.2rem; margin: 0.1rem 0 0; flex: none;
  accent-color: var(--st-primary-color); }
.gfg-ballot .number span { display: block; font-weight: 600; margin-bottom: 0.4rem; }
.gfg-ballot .number input { font: inherit; color: inherit; box-sizing: border-box; width: 100%;
  max-width: 18rem; min-height: 44px; padding: 0.5rem 0.75rem;
  background: var(--st-secondary-background-color);
  border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.3));
  border-radius: var(--st-base-radius, 0.5rem); }
.gfg-ballot .sure { display: flex; flex-wrap: wrap; gap: 0.45rem 0.8rem; }
.gfg-ballot .sure .option { margin: 0; padding: 0.45rem 0.9rem; }
.gfg-ballot button.vote { font: inherit; font-weight: 600; min-height: 44px; padding: 0.55rem 1.8rem;
  cursor: pointer; border: 0; border-radius: var(--st-button-radius, 0.5rem);
  background: var(--st-primary-color); color: var(--st-background-color); }
.gfg-ballot input:focus-visible, .gfg-ballot button:focus-visible,
.gfg-ballot [tabindex]:focus-visible { outline: 3px solid #0072B2; outline-offset: 2px; }
.gfg-ballot .timer { font-weight: 600; margin: 0 0 0.5rem; }
.gfg-ballot .timer:empty { display: none; }
.gfg-ballot .status { margin: 0.7rem 0 0; padding: 0.65rem 0.85rem;
  border-radius: var(--st-base-radius, 0.5rem); }
/* The status is a live region: it stays in the page (and the accessibility tree) while empty, so
   a screen reader hears the text the moment it appears. */
.gfg-ballot .status:empty { padding: 0; margin: 0; }
.gfg-ballot .understood { margin: 0.35rem 0 0; font-size: 0.95rem; }
.gfg-ballot .understood[data-kind="error"] { color: var(--st-red-text-color); }
.gfg-ballot .status[data-kind="success"] { background: var(--st-green-background-color);
  color: var(--st-green-text-color); }
.gfg-ballot .status[data-kind="info"] { background: var(--st-blue-background-color);
  color: var(--st-blue-text-color); }
.gfg-ballot .status[data-kind="warning"] { background: var(--st-yellow-background-color);
  color: var(--st-yellow-text-color); }
.gfg-ballot .status[data-kind="error"] { background: var(--st-red-background-color);
  color: var(--st-red-text-color); }
"""

_CLASS_JS = (
    """
__NUMBER_JS__
export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  const d = data || {};
  const KEY = "__KEY__";
  const g = (window.__gfgClass = window.__gfgClass || { memory: {}, lastSend: {}, received: {} });
  const read = () => {
    try { const raw = window.localStorage.getItem(KEY); return raw ? JSON.parse(raw) || {} : {}; }
    catch (e) { return g.memory; }
  };
  const write = (s) => {
    g.memory = s;
    // Storage blocked (some private modes): the id lives as long as this tab.
    try { window.localStorage.setItem(KEY, JSON.stringify(s)); } catch (e) { /* this tab only */ }
  };
  const mint = (bytes) => {
    const b = new Uint8Array(bytes); window.crypto.getRandomValues(b);
    return btoa(String.fromCharCode(...b)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  };
  const el = (tag, props, text) => {
    const e = document.createElement(tag);
    Object.entries(props || {}).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  };

  // -- announcements (one polite live region) and focus ------------------------------------------
  const announce = (text) => {
    let region = document.getElementById("gfg-class-live");
    if (!region) {
      region = el("div", { id: "gfg-class-live", role: "status", "aria-live": "polite", "aria-atomic": "true",
        style: "position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);" +
               "white-space:nowrap" });
      document.body.appendChild(region);
    }
    region.textContent = "";
    setTimeout(() => { region.textContent = text; }, 60);
  };
  if (d.announce && d.announce.id !== g.announced) {
    g.announced = d.announce.id;
    announce(d.announce.text);
  }
  if (d.focus && d.focus.id !== g.focused) {
    g.focused = d.focus.id;
    let tries = 0;
    const look = () => {
      const idle = !document.activeElement || document.activeElement === document.body;
      const target = d.focus.own ? parentElement.querySelector(d.focus.selector)
        : [...document.querySelectorAll(d.focus.selector)].find(
            (e) => !d.focus.text || (e.textContent || "").includes(d.focus.text));
      if (target && idle) {
        if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
        target.focus({ preventScroll: true });
        target.scrollIntoView({ block: "nearest" });
      } else if (!target && ++tries < 40) {
        setTimeout(look, 75);
      }
    };
    setTimeout(look, 120);
  }

  // -- identity, lecturer credentials, the one-time lecturer link ---------------------------------
  if (d.mode === "link") {
    const s = read();
    let changed = false;
    s.hosts = s.hosts || {};
    s.pending = s.pending || {};
    Object.entries(d.hosts || {}).forEach(([code, cred]) => {
      if (!s.hosts[code] || s.hosts[code].cred !== cred) {
        s.hosts[code] = { cred, at: Date.now() };
        changed = true;
      }
    });
    (d.forget || []).forEach((code) => { if (s.hosts[code]) { delete s.hosts[code]; changed = true; } });
    Object.keys(s.hosts).sort((a, b) => s.hosts[b].at - s.hosts[a].at).slice(20)
      .forEach((code) => { delete s.hosts[code]; changed = true; });
    Object.entries(s.pending).forEach(([slot, b]) => {
      if (!b || !b.at || Date.now() - b.at > 12 * 3600e3) { delete s.pending[slot]; changed = true; }
    });
    if (!/^[A-Za-z0-9_-]{16,43}$/.test(s.voter || "")) { s.voter = mint(16); changed = true; }
    if (changed) write(s);
    if (d.sid && d.sid !== g.sid) {
      g.sid = d.sid;
      const hash = new URLSearchParams(window.location.hash.slice(1));
      const search = new URLSearchParams(window.location.search);
      const link = hash.get("host") || search.get("host") || null;
      if (hash.has("host") || search.has("host")) {
        search.delete("host");
        const query = search.toString();
        const clean = window.location.pathname + (query ? "?" + query : "");
        window.history.replaceState(window.history.state, "", clean);
      }
      const room = d.room || "";
      const latest = Object.entries(s.hosts).sort((a, b) => b[1].at - a[1].at)[0];
      setTriggerValue("hello", {
        voter: s.voter,
        host: room && s.hosts[room] ? s.hosts[room].cred : null,
        lecturer: latest ? { code: latest[0], cred: latest[1].cred } : null,
        link: link,
        pending: Object.values(s.pending).filter((b) => b.code === room),
      });
    }
    return;
  }
  if (d.mode === "live") {
    // The projector's own poll: each run sends a new beat. No beat for a while (the server or the
    // network stopped answering this screen) is said on the screen itself, not only to Streamlit's
    // small connection badge; the notice goes when the beats come back.
    if (d.beat !== undefined && d.beat !== g.beat) { g.beat = d.beat; g.lastBeat = Date.now(); }
    if (!g.watchdog) {
      g.watchdog = setInterval(() => {
        let notice = document.getElementById("gfg-class-stalled");
        const stalled = g.lastBeat && Date.now() - g.lastBeat > __STALL_MS__;
        if (stalled && !notice) {
          notice = el("div", { id: "gfg-class-stalled", role: "alert", style:
            "position:fixed;top:0;left:0;right:0;z-index:1000100;padding:0.6rem 1rem;font:600 1.25rem " +
            "var(--st-font, sans-serif);background:#8a1c1c;color:#fff;text-align:center" },
            "This screen has stopped updating: votes and results here are not current. " +
            "It reconnects by itself; reload the page if this stays.");
          document.body.appendChild(notice);
        } else if (!stalled && notice) {
          notice.remove();
        }
      }, 1000);
    }
    return;
  }
  if (d.mode !== "ballot") return;

  // -- a student's ballot ---------------------------------------------------------------------------
  g.voteTrigger = setTriggerValue;
  g.room = d.room;
  if (d.sid !== g.ballotSid) { g.ballotSid = d.sid; g.received = {}; }
  const forget = (id) => {
    const s = read();
    Object.entries(s.pending || {}).forEach(([slot, b]) => { if (b.id === id) delete s.pending[slot]; });
    write(s);
  };
  (d.outcomes || []).forEach((o) => {
    g.received[o.id] = true;
    if (o.status !== "waiting") forget(o.id);
  });
  let box = parentElement.querySelector(".gfg-ballot");
  if (!box) { box = el("div", { class: "gfg-ballot" }); parentElement.appendChild(box); }
  const say = (kind, text) => {
    const status = box.querySelector(".status");
    if (!status) return;
    status.setAttribute("data-kind", kind);
    status.textContent = text;
  };
  const b = d.ballot;
  const key = b ? b.key : "none";
  if (!box.querySelector(".status")) {
    box.append(el("p", { class: "timer" }), el("div", { class: "ask" }),
               el("p", { class: "status", role: "status", "aria-live": "polite" }));
  }
  if (box.getAttribute("data-key") !== key) {
    box.setAttribute("data-key", key);
    const ask = box.querySelector(".ask");
    ask.replaceChildren();
    if (b) {
      const form = el("form", { class: "form", novalidate: "" });
      if (b.kind === "choice") {
        const set = el("fieldset", { role: "radiogroup", "aria-label": "Your answer" });
        set.append(el("legend", {}, b.label));
        b.options.forEach((text, i) => {
          const label = el("label", { class: "option" });
          const input = el("input", { type: "radio", name: "answer", value: String(i) });
          if (b.selected === String(i)) input.checked = true;
          label.append(input, el("span", {}, text));
          set.append(label);
        });
        form.append(set);
      } else {
        const label = el("label", { class: "number" });
        const input = el("input", { type: "text", name: "answer", inputmode: "decimal",
                                    autocomplete: "off", "aria-describedby": "gfg-understood" });
        if (b.selected !== null && b.selected !== undefined) input.value = b.selected;
        label.append(el("span", {}, b.label), input);
        const wrap = el("fieldset");
        // What the page understood, shown as the student types (before Vote): "270,336" is read
        // as 270336, never 270.336; a stray "²" is named.
        const understood = el("p", { class: "understood", id: "gfg-understood" });
        const show = () => {
          if (!input.value.trim()) { understood.textContent = ""; return; }
          const read = gfgReadNumber(input.value);
          understood.setAttribute("data-kind", read.error ? "error" : "info");
          understood.textContent = read.error ? `Not a number yet: ${read.error}.`
            : `Read as ${gfgNumberText(read.value)}${b.unit ? " " + b.unit : ""}`;
        };
        input.addEventListener("input", show);
        wrap.append(label, understood);
        form.append(wrap);
        show();
      }
      if (b.confidence) {
        const set = el("fieldset");
        set.append(el("legend", {}, "How sure are you? (optional)"));
        const row = el("div", { class: "sure" });
        [["sure", "Sure"], ["unsure", "Not sure"]].forEach(([value, text]) => {
          const label = el("label", { class: "option" });
          const input = el("input", { type: "radio", name: "confidence", value });
          if (b.selected_confidence === value) input.checked = true;
          label.append(input, el("span", {}, text));
          row.append(label);
        });
        set.append(row);
        form.append(set);
      }
      form.append(el("button", { type: "submit", class: "vote" }, "Vote"));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const fields = new FormData(form);
        let answer = fields.get("answer");
        if (answer === null || String(answer).trim() === "") {
          say("warning", "Choose or type an answer first.");
          return;
        }
        if (b.kind !== "choice") {
          const read = gfgReadNumber(answer);
          if (read.error) { say("warning", `Not sent: ${read.error}.`); return; }
          if (b.min !== null && b.min !== undefined && read.value < b.min) {
            say("warning", "This quantity cannot be negative.");
            return;
          }
          answer = String(answer).trim();  // sent as typed; the server reads it by the same rules
        }
        const now = Date.now();
        const ballot = { id: mint(9), code: b.code, question: b.question, variant: b.variant,
                         round: b.round, asking: b.asking, answer: String(answer),
                         confidence: fields.get("confidence") || null, at: now, sent: now };
        const s = read();
        s.pending = s.pending || {};
        s.pending[b.key] = ballot;
        write(s);
        g.lastSend[ballot.id] = Date.now();
        g.local = ballot.id;
        say("info", "Sending your vote…");
        g.voteTrigger("vote", [ballot]);
        setTimeout(() => {
          const still = Object.values(read().pending || {}).some((p) => p.id === ballot.id);
          if (still && g.local === ballot.id && !g.received[ballot.id])
            say("warning",
                "No answer from the class yet — your vote is kept on this phone and will be sent.");
        }, 5000);
      });
      ask.append(form);
    }
    g.pyStatus = null;
  }
  // Python's word on the vote, unless the voter pressed since and Python has not answered that press.
  const answered = !g.local || (d.outcomes || []).some((o) => o.id === g.local);
  const status = d.status || { kind: "info", text: "" };
  if (answered && (status.text !== g.pyStatus || g.local)) {
    g.local = null;
    g.pyStatus = status.text;
    say(status.kind, status.text);
  }
  // A countdown, ticking here between polls.
  g.deadline = typeof d.countdown_s === "number" ? Date.now() + d.countdown_s * 1000 : null;
  const tick = () => {
    const timer = box.querySelector(".timer");
    if (!timer) return;
    if (g.deadline === null) { timer.textContent = ""; return; }
    const left = Math.max(0, Math.ceil((g.deadline - Date.now()) / 1000));
    const clock = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    timer.textContent = left > 0 ? `Voting closes in ${clock}` : "Voting is closing…";
  };
  tick();
  if (!g.ticker) g.ticker = setInterval(() => g.tick && g.tick(), 500);
  g.tick = tick;
  // Send again every vote the page has not received (a reconnect, a replica that died mid-vote).
  if (!g.resender) {
    g.resender = setInterval(() => {
      if (!g.voteTrigger) return;
      const now = Date.now();
      const due = Object.values(read().pending || {}).filter(
        (p) => p.code === g.room && !g.received[p.id] && now - (g.lastSend[p.id] || 0) > 4000);
      if (!due.length) return;
      due.forEach((p) => { g.lastSend[p.id] = now; });
      g.voteTrigger("vote", due.map((p) => ({ ...p, sent: Date.now() })));
    }, 2000);
  }
}
""".replace("__KEY__", CLASS_STORAGE_KEY)
    .replace("__NUMBER_JS__", NUMBER_JS)
    .replace("__STALL_MS__", "8000")
)

_class_component = st.components.v2.component("gfg_class_browser", js=_CLASS_JS, css=_CLASS_CSS)


def trigger_value(key: str, event: str) -> Any:
    """A component's trigger value for ``event`` on this run, read from session state (inside an
    ``on_<event>_change`` callback, before the script body runs); None if it did not fire."""
    value = st.session_state.get(key)
    if value is None:
        return None
    try:
        return value[event]
    except (KeyError, TypeError):
        return getattr(value, event, None)


def class_link(
    *,
    key: str,
    sid: str,
    room: str,
    hosts: dict[str, str],
    forget: list[str],
    on_hello: Callable[[], None],
    announce: dict[str, str] | None = None,
    focus: dict[str, Any] | None = None,
) -> None:
    """Mount the class page's link to this browser (no height). Once per page session it sends
    ``hello`` (read with ``trigger_value(key, "hello")`` in ``on_hello``): this browser's voter
    id, its lecturer credential for ``room`` if it has one, a one-time lecturer link token taken
    out of the address, and the votes for ``room`` not yet heard back about. ``hosts`` (room code →
    credential) are stored in the browser; codes in ``forget`` are removed."""
    _class_component(
        key=key,
        data={
            "mode": "link",
            "sid": sid,
            "room": room,
            "hosts": hosts,
            "forget": forget,
            "announce": announce,
            "focus": focus,
        },
        height=0,
        on_hello_change=on_hello,
    )


def class_ballot(*, key: str, data: dict[str, Any], on_vote: Callable[[], None]) -> None:
    """Mount a student's ballot: ``data`` has ``sid``, ``room``, ``ballot`` (None when voting is
    closed; else ``key``, ``code``, ``question``, ``variant``, ``round``, ``kind`` "choice" or
    "number", ``label``, ``options``, ``min``, ``confidence``, ``selected``), ``status`` (``kind``
    and ``text``), ``outcomes`` (``id`` and ``status`` of ballots handled), ``countdown_s``,
    ``announce`` and ``focus``. A press sends ``vote``: a list of ballots (JSON)."""
    _class_component(key=key, data={"mode": "ballot", **data}, height="content", on_vote_change=on_vote)


def class_live(
    *, key: str, announce: dict[str, str] | None, focus: dict[str, Any] | None, beat: int | None = None
) -> None:
    """Mount the lecturer's announcer (no height): ``announce`` (``id``, ``text``) is read out
    politely once per id; ``focus`` (``id``, ``selector``, ``text``) moves the keyboard focus to
    that element when it is drawn, once per id, if the focus has dropped to the page."""
    _class_component(
        key=key, data={"mode": "live", "announce": announce, "focus": focus, "beat": beat}, height=0
    )
