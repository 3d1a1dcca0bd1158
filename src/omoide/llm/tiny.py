"""Keeping a tiny embedded model (135M-270M parameters) in character.

Three things, none of which needs llama.cpp, so each is tested on its own:

- `sampling(settings)`: penalties against repetition and min_p/top_p cut-offs
  tuned for tiny models, and the stop strings that end a turn when the model
  starts writing the user's next line, or another character's.
- `shape(messages)`: the prompt as a tiny model reads it best: markdown
  headings ("## Scenario"), which it otherwise continues with headings of its
  own ("## Chapter 1" … "## Chapter 50"), become plain labels ("Scenario:").
- `ReplyGuard`: watches the reply as it streams and ends it at the first sign
  of a loop: a line or sentence said again, a short phrase said three times
  running ("no Kagami no Kagami no Kagami"), a markdown heading, the user's
  name or a message stamp at the start of a line, or a run of words recited
  from the prompt. It holds back the last few characters (and a
  sentence that so far repeats an earlier one) so that the loop is cut before
  the user sees it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omoide.config.settings import Settings
from omoide.llm.base import ChatMessage

REPLY_TOKENS = 200
"""The embedded model's reply length unless max_tokens is set: tiny models
lose the thread in long replies, and a short one comes back sooner."""
HOLD = 48
"""Characters held back while streaming, so a loop can be cut before it shows."""
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_NEW_MESSAGE = re.compile(r"\n[ \t]*\[\d{1,2}/\d{1,2} \d{1,2}:\d{2}\]")
"""A line opening with the prompt's message stamp ([MM/DD HH:MM]): the model is writing the next message."""
_SEGMENT_END = re.compile(r"(?<=[.!?…])[\"'”’)*_]*\s+|\n+")
_SENTENCE_DONE = re.compile(r"[.!?…][\"'”’)*_]*$")
_PHRASE_LOOP = re.compile(r"\b(\w+(?:\W+\w+){0,3}?)(?:\W+\1\b){2,}", re.I)
_TAIL = 240
"""How far back the phrase-loop check looks (it runs on every streamed piece)."""
_MIN_SEGMENT = 12
_PHRASE_WORDS = 4
COPY_WORDS = 8
"""Words in a row taken from the prompt that make a reply a recital of the card or the lore."""


@dataclass(frozen=True, slots=True)
class Sampling:
    temperature: float
    top_p: float
    min_p: float
    top_k: int
    repeat_penalty: float
    frequency_penalty: float
    presence_penalty: float
    stop: list[str]
    seed: int | None

    def kwargs(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature, "top_p": self.top_p, "min_p": self.min_p, "top_k": self.top_k,
            "repeat_penalty": self.repeat_penalty, "frequency_penalty": self.frequency_penalty,
            "presence_penalty": self.presence_penalty, "stop": self.stop, "seed": self.seed,
        }


def speaker_names(user_name: str) -> list[str]:
    """Names that start the user's line in a transcript the model might continue."""
    names = [user_name, "You", "User", "{{user}}"]
    return list(dict.fromkeys(n for n in names if n.strip()))


def stop_strings(user_name: str, others: Sequence[str] = ()) -> list[str]:
    """`others`: the other characters of a group scene, whose lines are not this reply's."""
    stops = [f"\n{name}:" for name in [*speaker_names(user_name), *others]]
    # <START> separates the card's example dialogues: writing it is starting another example.
    stops += [f"\n**{user_name}:**", f"\n*{user_name}:*", "\n#", "<START>", "<|im_end|>", "<end_of_turn>", "<|im_start|>"]
    return list(dict.fromkeys(stops))


def sampling(settings: Settings, user_name: str, *, script: bool = False, others: Sequence[str] = ()) -> Sampling:
    """`script`: the prompt is a play script, whose notes for the turn are lines
    in brackets; a reply that opens such a line is writing the prompt."""
    return Sampling(
        temperature=settings.backend.temperature, top_p=settings.backend.top_p, min_p=settings.embedded.min_p, top_k=settings.embedded.top_k,
        repeat_penalty=settings.embedded.repeat_penalty, frequency_penalty=settings.embedded.frequency_penalty,
        presence_penalty=settings.embedded.presence_penalty, stop=stop_strings(user_name, others) + (["\n("] if script else []), seed=settings.embedded.seed,
    )


def shape(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Headings become labels, and the volatile tail (date, fresh diary lines,
    lore) comes just before the user's last message instead of after it: a tiny
    model answers whatever it read last ("The user has asked about the current
    date and time…"). Everything before the last message stays as it was, so
    the prompt cache still reuses the prefix."""
    out: list[ChatMessage] = []
    for message in messages:
        content = message.get("content") or ""
        if message["role"] == "system" and "#" in content:
            message = {**message, "content": _HEADING.sub(lambda m: f"{m.group(1)}:", content)}
        out.append(message)
    if len(out) >= 3 and out[-1]["role"] == "system" and out[-2]["role"] == "user":
        out[-2], out[-1] = out[-1], out[-2]
    return out


def gemma_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """Gemma's turn format, for a Gemma GGUF that carries no chat template. Gemma
    has no system role: system text is a user turn, as Google's template has it,
    and turns by the same speaker in a row are joined."""
    turns: list[list[str]] = []
    for message in messages:
        role = "model" if message["role"] == "assistant" else "user"
        content = (message.get("content") or "").strip()
        if turns and turns[-1][0] == role:
            turns[-1][1] += "\n\n" + content
        else:
            turns.append([role, content])
    body = "".join(f"<start_of_turn>{role}\n{content}<end_of_turn>\n" for role, content in turns)
    return f"<bos>{body}<start_of_turn>model\n"


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


class ReplyGuard:
    """Feed it the streamed text; it says what may be shown and when to stop."""

    def __init__(self, user_name: str, character_name: str = "", source: str = "", others: Sequence[str] = ()) -> None:
        names = [re.escape(n) for n in [*speaker_names(user_name), *others]]
        if character_name.strip():
            names.append(re.escape(character_name))
        # A speaker's label at the start of any line but the first: the model is writing the next turn.
        self._speaker = re.compile(rf"\n[ \t]*[*_]*(?:{'|'.join(names)})[*_]*[ \t]*:", re.I)
        self._own_label = re.compile(rf"^\s*[*_]*{re.escape(character_name)}[*_]*\s*:\s*", re.I) if character_name.strip() else None
        self._source = " " + _norm(source) + " " if source.strip() else ""
        """The prompt's own text (card, lore, rules): a reply copying it is reciting, not talking."""
        self.text = ""
        self.shown = 0
        self.stopped = False
        self.reason = ""

    def feed(self, piece: str) -> str:
        """Add `piece`; returns the text that may be shown now ("" when stopped)."""
        if self.stopped:
            return ""
        self.text += piece
        if self._check():
            return self._release(len(self.text))
        return self._release(self._safe_end())

    def finish(self) -> str:
        """The end of the reply: whatever was held back, loops already cut."""
        if not self.stopped:
            self._check(final=True)
        return self._release(len(self.text))

    # -- rules --------------------------------------------------------------------------

    def _cut(self, at: int, reason: str, *, whole_sentences: bool = False) -> None:
        """End the reply at `at`; with `whole_sentences`, at the end of the last
        whole sentence before it (a reply never stops mid-sentence on a loop or a
        recital), as far back as what is already shown."""
        if whole_sentences:
            kept = self.text[:at].rstrip()
            if not _SENTENCE_DONE.search(kept):
                at = max((m.end() for m in _SEGMENT_END.finditer(kept)), default=0)
        at = max(at, self.shown)
        if self.shown == 0 and not re.search(r"\w", self.text[:at]):
            at = 0  # only "*" or a quote mark before the cut: nothing worth showing, so another try
        self.text = self.text[:at].rstrip() if at > self.shown else self.text[:at]
        self.stopped, self.reason = True, reason

    def _check(self, final: bool = False) -> bool:
        """Apply the rules; True when the reply must end here."""
        self._apply_rules(final)
        return self.stopped

    def _apply_rules(self, final: bool) -> None:
        if self._own_label is not None and self.shown == 0:
            label = self._own_label.match(self.text)
            if label and label.end() < len(self.text):
                self.text = self.text[label.end():]
        heading = re.search(r"(?:^|\n)[ \t]*#{1,6}[ \t]", self.text)
        if heading:
            if heading.start() == 0:
                line_end = self.text.find("\n")
                if line_end != -1:  # a title line first: drop it, keep what follows
                    self.text = self.text[line_end + 1:]
                    self._apply_rules(final)
                elif final:
                    self._cut(0, "heading")
                return
            self._cut(heading.start(), "heading")
            return
        speaker = self._speaker.search(self.text)
        if speaker:
            self._cut(speaker.start(), "speaker")
            return
        stamp = _NEW_MESSAGE.search(self.text)
        if stamp:
            self._cut(stamp.start(), "a new message")
            return
        tail_start = max(0, len(self.text) - _TAIL)
        thrice = self._phrase_said_thrice()
        if thrice is not None:
            self._cut(thrice, "phrase loop", whole_sentences=True)
            return
        for loop in _PHRASE_LOOP.finditer(self.text, tail_start):
            phrase = loop.group(1)
            if " " in phrase.strip() or len(phrase) >= 4:  # "no, no, no" and "ha ha ha" are speech
                self._cut(loop.start() + len(phrase), "phrase loop", whole_sentences=True)
                return
        repeat = self._repeated_segment(final)
        if repeat is not None:
            self._cut(repeat, "repeated line")
            return
        copied = self._copied_run()
        if copied is not None:
            self._cut(copied, "copied the prompt", whole_sentences=True)

    def _copied_run(self) -> int | None:
        """Where the reply began reciting the prompt, if its newest COPY_WORDS words come from it.
        (Checked on every piece, so only the newest words can be new.)"""
        if not self._source:
            return None
        offset = max(0, len(self.text) - _TAIL * 2)
        words = list(re.finditer(r"\w+", self.text[offset:]))
        if len(words) < COPY_WORDS:
            return None
        i = len(words) - COPY_WORDS

        def copied(first: int) -> bool:
            return f" {' '.join(w.group().lower() for w in words[first:first + COPY_WORDS])} " in self._source

        if not copied(i):
            return None
        while i > 0 and copied(i - 1):
            i -= 1  # back to where the recital began
        return offset + words[i].start()

    def _phrase_said_thrice(self) -> int | None:
        """Where the newest four words start, if the reply has said them twice before
        ("current date and time: …" on line after line, each with another date)."""
        words = list(re.finditer(r"\w+", self.text))
        if len(words) < 3 * _PHRASE_WORDS:
            return None
        newest = [w.group().lower() for w in words[-_PHRASE_WORDS:]]
        seen = sum(
            1 for i in range(len(words) - _PHRASE_WORDS)
            if [w.group().lower() for w in words[i:i + _PHRASE_WORDS]] == newest
        )
        return words[-_PHRASE_WORDS].start() if seen >= 2 else None

    def _segments(self, final: bool) -> list[tuple[int, str]]:
        """(start, text) of each finished sentence or line; the last too when `final`."""
        out, start = [], 0
        for end in _SEGMENT_END.finditer(self.text):
            out.append((start, self.text[start:end.start()]))
            start = end.end()
        if final and start < len(self.text):
            out.append((start, self.text[start:]))
        return out

    def _repeated_segment(self, final: bool) -> int | None:
        seen: set[str] = set()
        for start, segment in self._segments(final):
            key = _norm(segment)
            if len(key) < _MIN_SEGMENT:
                continue
            if key in seen:
                return start
            seen.add(key)
        return None

    # -- what may be shown ----------------------------------------------------------

    def _safe_end(self) -> int:
        end = max(self.shown, len(self.text) - HOLD)
        # A sentence under way that so far matches an earlier one is held whole.
        last_break = max((m.end() for m in _SEGMENT_END.finditer(self.text)), default=0)
        partial = _norm(self.text[last_break:])
        if len(partial) >= 3:
            earlier = {_norm(s) for _, s in self._segments(final=False)}
            if any(e.startswith(partial) and len(e) >= _MIN_SEGMENT for e in earlier):
                end = min(end, last_break)
        return max(end, self.shown)

    def _release(self, end: int) -> str:
        end = min(end, len(self.text))
        if end <= self.shown:
            return ""
        out, self.shown = self.text[self.shown:end], end
        return out
