"""A number as a student types it on a phone, read the way the course prints numbers (pure).

The course writes thousands with commas ("270,336", ``lessons.model.number_text``), large and
small numbers as "2.7e+05"; students also type "270 336", "2.7e5", "2.7×10^5" or "270k". Each of
these reads as the same number, and the phone shows what it understood before the vote is sent
(the ballot's script in ``ui/browser.py`` reads with the same rules, ``NUMBER_JS``). Anything else
is refused with a sentence that says what was wrong, never read as another number: "270,336" is
never 270.336, and a stray "²" is named.

Rules: an optional sign; digits, either plain or in groups of three after a first group of one to
three digits (not starting with 0), the groups separated by one kind of separator (comma, space,
no-break or thin space, apostrophe); an optional decimal part after "." (or after "," when the
digits are not grouped by commas, so "2,5" is 2.5 but "270,336" is 270336); an optional exponent
("e5", "E-3", "×10^5", "x10^5", "*10^5"); an optional multiplier (k, M, G, T, or the words
thousand, million, billion, trillion).
"""

from __future__ import annotations

import math
import re

MULTIPLIERS = {
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
}
SEPARATORS = ", '\u00a0\u2009\u202f\u2019"
_NUMBER = re.compile(
    r"""^(?P<sign>[-+]?)
    (?:(?P<grouped>[1-9]\d{0,2}(?P<sep>[,\ '\u00a0\u2009\u202f\u2019])\d{3}(?:(?P=sep)\d{3})*)
      |(?P<plain>\d+))?
    (?:(?P<point>[.,])(?P<fraction>\d+))?
    (?:[eE](?P<exp>[-+]?\d{1,3})|\ ?[x×*·]\ ?10\^(?P<exp10>[-+]?\d{1,3}))?
    \ ?(?P<multiplier>k|K|M|G|T|thousand|million|billion|trillion)?$""",
    re.VERBOSE,
)
_ALLOWED = set("0123456789+-.,eE^x×*·" + SEPARATORS) | set("".join(MULTIPLIERS))
EXAMPLES = "e.g. 270336, 270,336, 270 336, 2.7e5 or 270k"
MAX_LENGTH = 40


class NumberError(ValueError):
    """A typed answer that is not a number this page reads; the message says why, in words."""


def read_number(text: str) -> float:
    """The number ``text`` means, read as described in the module docstring; ``NumberError``
    with a sentence for anything else (an empty answer, a stray character, "1.2.3", a grouping
    that is not in threes, a number too large to be finite)."""
    if not isinstance(text, str):
        raise NumberError("the answer is not text")
    cleaned = text.strip().replace("\u2212", "-")  # the minus sign a keyboard may give
    if not cleaned:
        raise NumberError("type a number first")
    if len(cleaned) > MAX_LENGTH:
        raise NumberError(f"that is too long for a number (at most {MAX_LENGTH} characters)")
    stray = [ch for ch in dict.fromkeys(cleaned) if ch not in _ALLOWED]
    if stray:
        named = ", ".join(f"“{ch}”" for ch in stray[:3])
        return _refuse(f"{named} cannot be part of a number: type digits only, {EXAMPLES}")
    match = _NUMBER.match(cleaned)
    if match is None or not (match["grouped"] or match["plain"] or match["fraction"]):
        return _refuse(f"“{cleaned}” is not a number this page can read: {EXAMPLES}")
    if match["grouped"] and match["point"] and match["point"] == match["sep"]:
        return _refuse(f"“{cleaned}” uses “{match['sep']}” both for thousands and for decimals: {EXAMPLES}")
    digits = match["grouped"] or match["plain"] or "0"
    if match["sep"]:
        digits = digits.replace(match["sep"], "")
    exponent = int(match["exp"] or match["exp10"] or 0)
    value = float(f"{digits}.{match['fraction'] or '0'}e{exponent}")
    value *= MULTIPLIERS.get(match["multiplier"] or "", 1.0)
    if match["sign"] == "-":
        value = -value
    if not math.isfinite(value):
        return _refuse(f"“{cleaned}” is too large a number")
    return value


def _refuse(message: str) -> float:
    raise NumberError(message)


# The same rules in the ballot's JavaScript (ui/browser.py), so a phone shows what it understood
# before it sends the vote; the store reads the typed text again with ``read_number``.
NUMBER_JS = r"""
const gfgReadNumber = (raw) => {
  const text = String(raw).trim().replace(/\u2212/g, "-");
  const examples = "e.g. 270336, 270,336, 270 336, 2.7e5 or 270k";
  if (!text) return { error: "type a number first" };
  if (text.length > 40) return { error: "that is too long for a number (at most 40 characters)" };
  const allowed = /[0-9+\-.,eE^x×*·, '\u00a0\u2009\u202f\u2019kKMGTthousandmilionbr]/;
  const stray = [...new Set([...text])].filter((ch) => !allowed.test(ch));
  if (stray.length) return { error: stray.slice(0, 3).map((c) => `“${c}”`).join(", ") +
    " cannot be part of a number: type digits only, " + examples };
  const m = text.match(new RegExp(
    "^([-+]?)(?:([1-9]\\d{0,2}([, '\\u00a0\\u2009\\u202f\\u2019])\\d{3}(?:\\3\\d{3})*)|(\\d+))?" +
    "(?:([.,])(\\d+))?(?:[eE]([-+]?\\d{1,3})| ?[x×*·] ?10\\^([-+]?\\d{1,3}))?" +
    " ?(k|K|M|G|T|thousand|million|billion|trillion)?$"));
  if (!m || !(m[2] || m[4] || m[6]))
    return { error: `“${text}” is not a number this page can read: ${examples}` };
  if (m[2] && m[5] && m[5] === m[3])
    return { error: `“${text}” uses “${m[3]}” both for thousands and for decimals: ${examples}` };
  let digits = m[2] || m[4] || "0";
  if (m[3]) digits = digits.split(m[3]).join("");
  const mult = { k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, thousand: 1e3, million: 1e6, billion: 1e9,
                 trillion: 1e12 }[m[9] || ""] || 1;
  let value = Number(`${digits}.${m[6] || "0"}e${Number(m[7] || m[8] || 0)}`) * mult;
  if (m[1] === "-") value = -value;
  if (!Number.isFinite(value)) return { error: `“${text}” is too large a number` };
  return { value };
};
const gfgNumberText = (value) => {
  const big = Math.abs(value);
  if (big !== 0 && (big >= 1e15 || big < 1e-4)) return value.toExponential(4).replace(/\.?0+e/, "e");
  return value.toLocaleString("en-US", { maximumFractionDigits: 6 });
};
"""
