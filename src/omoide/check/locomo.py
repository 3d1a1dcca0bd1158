"""A LoCoMo conversation (Maharana et al., ACL 2024) as a memory-check scenario
of format 1 (scenario.py), so the check runs conversations nobody here wrote.

Pure conversion: a LoCoMo conversation object in, a scenario object and the
count of each LoCoMo category kept and dropped (with why) out. The rules:

- **Who is who.** `speaker_a` is the user (the scenario's `user`, named as in
  the file); `speaker_b` is the character: the host character plays her, and
  her name is replaced by the host's display name in every turn, answer and
  question, as a whole word only ("Melanie" and "Melanie's" become "Suzune" and
  "Suzune's"; a nickname such as "Mel" stays).
- **Sessions are days.** The scenario starts on the first session's date (at
  08:00: the check's clock ticks three minutes a message, so a day starting in
  the morning never runs past midnight; times of day are not kept); each session
  is a `day` event at its real offset in days, gaps of months included. The
  questions are asked on the day after the last session.
- **Turns are stored lines.** Consecutive turns of one speaker are joined with a
  newline; each user turn and the character's turn after it become one `user`
  event with its `reply`, both stored as said (no model turn). A character turn
  with no user turn before it (a session she opens) gets the cue "…", and a user
  turn the character does not answer gets the reply "…": an ellipsis says
  nothing a memory could keep or a question ask. A shared image is added as
  LoCoMo's own evaluation scripts add it: `[shares <blip_caption>]` after the
  turn's text (here on the same line, after a space).
- **Which questions are kept.** Open-domain (category 3) is left out: its
  answers are inferences, not what was said. The others are kept only when the
  answer's content words stand in an evidence turn (matched with plural and
  tense endings): single-hop (4) becomes `single` when one evidence turn holds
  every content word of the answer; multi-hop (1) becomes `multihop` only when
  two evidence turns each give a fact (one holds words of the answer, the other
  the answer's or the question's) and together they hold the whole answer;
  temporal (2) becomes a `days_ago` question only when the answer is one day
  ("7 May 2023", "the Friday before 15 July 2023") and the evidence turn carries
  it: said that day, or with a phrase that names exactly that day from the
  day it was said ("yesterday", "last Friday", "two days ago"); a month, a year,
  a week or a weekend is dropped. It is asked "What did <who> do on <day>?" and
  answered by the event's words. Adversarial (5) becomes `abstention`: its
  premise is false, so nothing in the conversation answers it.
- **Facts come from the evidence turns, never from the answer alone.** A fact
  is told where the check's reader looks for it: a sentence of the evidence
  turn that is no question, and the sentences beside it on its line. Its value
  words are the answer's content words as the turn says them: the rarest in the
  conversation that stands in that sentence first, then at most two more beside
  it (the sentence chosen is the one with the most of them around it). A
  further group of the words around them must stand there too: those the
  question shares, else the rarest, never words said in more than one turn in
  twenty (for an event always the rarest, so two tellings of the same kind of
  event are told apart; a relative phrase dates, it does not tell). So only the
  evidence sentence tells the fact, not the answer's words met elsewhere. A
  temporal fact's value words are the question's words for the event that
  stand in its turn. Each fact records who said it (`said_by`: "user" or
  "character"). The question's answer is the fact's first value word; its other
  value words must be in the answer too (`also`). A question whose key word is
  said in more than one turn in twenty is dropped: naming it shows nothing
  remembered, and the check counts any other question's value named in an
  answer as a wrong guess.

Nothing here knows any particular conversation's words: the rules work on the
categories and the text, so other LoCoMo conversations and hand-written stories
in the same shape convert the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from omoide.check.locomo_words import (CATEGORY_NAMES, answer_day, category_of, content, match_in, parse_when,
                                        relative_phrases, stem, words)

__all__ = ["CATEGORY_NAMES", "CUE", "Conversion", "answer_day", "convert"]

CUE = "…"
"""The line on the other side of a turn nobody answered or cued."""

_DIA = re.compile(r"D(\d+):(\d+)")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
"""Where the check's reader ends a sentence on a line (reader._SENTENCE_END)."""
COMMON_SHARE = 0.05
"""A word said in more turns than this share of them is too common to be an answer's key."""
_WHEN_WORDS = frozenset({"when", "long", "ago", "date", "day", "time", "year", "month", "week", "weekend"})


@dataclass(frozen=True, slots=True)
class Turn:
    dia: str
    speaker: str
    """'user' or 'character'."""
    text: str
    session: int
    said: date
    dias: tuple[str, ...] = ()
    """Every turn of a run of one speaker (the first is `dia`)."""


@dataclass(slots=True)
class Conversion:
    scenario: dict[str, Any]
    """A format-1 scenario object (scenario.parse reads it)."""
    kept: Counter[str] = field(default_factory=Counter)
    """LoCoMo category name -> questions kept."""
    dropped: dict[str, Counter[str]] = field(default_factory=dict)
    """LoCoMo category name -> why a question was dropped -> how many."""

    def drop(self, category: str, why: str) -> None:
        self.dropped.setdefault(category, Counter())[why] += 1


def _rename(text: str, old: str, new: str) -> str:
    return text if not old or old == new else re.sub(rf"(?<![\w]){re.escape(old)}(?![\w])", new, text)


def _turn_text(turn: Mapping[str, Any]) -> str:
    text = str(turn.get("text", "") or "").strip()
    caption = str(turn.get("blip_caption", "") or "").strip()
    return f"{text} [shares {caption}]".strip() if caption else text


def sessions(data: Mapping[str, Any]) -> list[tuple[int, datetime, list[Mapping[str, Any]]]]:
    """(number, when, turns) of every session with turns, in order."""
    found = []
    for key, value in data.items():
        number = re.fullmatch(r"session_(\d+)", key)
        if number and isinstance(value, list) and value:
            when = parse_when(str(data.get(f"{key}_date_time", "")))
            if when is not None:
                found.append((int(number.group(1)), when, value))
    return sorted(found, key=lambda s: s[0])


class Converter:
    def __init__(self, data: Mapping[str, Any], *, name: str, host: str, host_name: str) -> None:
        self.data = data
        self.name = name
        self.host = host
        self.user = str(data["speaker_a"])
        self.character = str(data["speaker_b"])
        self.host_name = host_name
        self.names = (self.user, self.host_name, self.character)
        self.out = Conversion({})
        self.turns: dict[str, Turn] = {}
        self.order: list[list[Turn]] = []
        """Each session's turns, runs of one speaker joined."""
        self.df: Counter[str] = Counter()
        self.facts: list[dict[str, Any]] = []
        self.fact_of_turn: dict[str, str] = {}

    def rename(self, text: str) -> str:
        return _rename(text, self.character, self.host_name)

    def read_turns(self) -> None:
        for number, when, raw in sessions(self.data):
            runs: list[Turn] = []
            for turn in raw:
                speaker = "user" if turn.get("speaker") == self.user else "character"
                text = self.rename(_turn_text(turn))
                dia = str(turn.get("dia_id", ""))
                single = Turn(dia, speaker, text, number, when.date())
                self.turns[dia] = single
                self.df.update(set(words(text)))
                if runs and runs[-1].speaker == speaker:
                    last = runs[-1]
                    runs[-1] = Turn(last.dia, speaker, f"{last.text}\n{text}", number, last.said, (*last.dias, dia))
                else:
                    runs.append(Turn(dia, speaker, text, number, when.date(), (dia,)))
            self.order.append(runs)

    def common(self, word: str) -> bool:
        """Said in more than one turn in COMMON_SHARE: naming it shows nothing remembered."""
        return self.df[word] > max(3, len(self.turns) * COMMON_SHARE)

    def rarest(self, found: Iterable[str]) -> list[str]:
        return sorted(dict.fromkeys(found), key=lambda w: (self.df[w], w))

    def evidence_turns(self, qa: Mapping[str, Any]) -> list[Turn]:
        ids = [f"D{a}:{b}" for item in qa.get("evidence", []) or [] for a, b in _DIA.findall(str(item))]
        return [self.turns[i] for i in dict.fromkeys(ids) if i in self.turns]

    def window(self, turn: Turn, wanted: Sequence[str], phrase: str = "") -> tuple[str, list[str], str] | None:
        """Where in `turn` the fact is told, as the check's reader reads a prompt
        (reader.statements: a sentence that is no question, and the sentences
        beside it on its line): (the rarest value word of the sentence that holds
        the most of `wanted` around it, the other value words around it, the
        text around it). With `phrase`, that sentence must say it too."""
        best: tuple[tuple[int, int], str, list[str], str] | None = None
        for line in turn.text.split("\n"):
            sentences = [part.strip() for part in _SENTENCE_END.split(line)]
            for i, sentence in enumerate(sentences):
                if not sentence or sentence.endswith("?"):
                    continue
                if phrase and not re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", sentence.casefold()):
                    continue
                here = self.values(wanted, sentence)
                if not here:
                    continue
                around = " ".join(sentences[max(0, i - 1): i + 2])
                anchor = self.rarest(here)[0]
                beside = [w for w in self.rarest(self.values(wanted, around)) if w != anchor]
                rank = (len(beside), -self.df[anchor])
                if best is None or rank > best[0]:
                    best = (rank, anchor, beside, around)
        return None if best is None else best[1:]

    def fact(self, fid: str, turn: Turn, wanted: Sequence[str], link_from: Sequence[str], *, phrase: str = "",
             extra: dict[str, Any] | None = None) -> list[str] | None:
        """A fact told in `turn`: its value words (the rarest in a sentence, at
        most two more beside it), and a group of the words around them (those
        the question shares, else the rarest; for an event always the rarest,
        which tell it from another telling of the same kind of event). Its
        value words, or None when no sentence of the turn tells it."""
        found = self.window(turn, wanted, phrase)
        if found is None:
            return None
        anchor, beside, around = found
        value = [anchor, *beside[:2]]
        stems = {stem(w) for w in (*value, *words(phrase))}  # the phrase dates the event: it tells nothing of it
        rest = [w for w in content(around, self.names) if stem(w) not in stems]
        rest = [w for w in rest if not self.common(w)] or rest  # words said everywhere tell no sentence apart
        shared = [] if extra and extra.get("event") else [w for w in rest if match_in(w, link_from) is not None]
        link = shared[:4] or self.rarest(rest)[:3]
        evidence: list[list[str]] = [[w] for w in value]
        if link:
            evidence.append(link)
        self.facts.append({"id": fid, "evidence": evidence, "said_by": turn.speaker, **(extra or {})})
        self.fact_of_turn.setdefault(turn.dia, fid)
        return value

    def values(self, wanted: Sequence[str], text: str) -> list[str]:
        """`text`'s own forms of the `wanted` words it says."""
        said = words(text)
        return list(dict.fromkeys(found for w in wanted if (found := match_in(w, said)) is not None))

    def question(self, n: int, qa: Mapping[str, Any], ask_day: date) -> dict[str, Any] | None:
        category = category_of(qa)
        ask = self.rename(str(qa.get("question") or "").strip())
        qid = f"q{n}"
        if category == "unknown" or not ask:
            self.out.drop(category, "no category or no question")
            return None
        if category == "open-domain":
            self.out.drop(category, "open-domain: an inference, not something said")
            return None
        if category == "adversarial":
            return {"id": qid, "category": "abstention", "ask": ask, "abstain": True,
                    "truth": "nothing in the conversation answers it (its premise is false)"}
        turns = self.evidence_turns(qa)
        if not turns:
            self.out.drop(category, "no evidence turn in the conversation")
            return None
        answer = self.rename(str(qa.get("answer", "")))
        if category == "temporal":
            return self.temporal(qid, ask, answer, turns, ask_day)
        wanted = content(answer, self.names)
        if not wanted:
            self.out.drop(category, "the answer has no content words (a name of a speaker, a yes or no)")
            return None
        if category == "single-hop":
            best = max(turns, key=lambda t: len(self.values(wanted, t.text)))
            if len(self.values(wanted, best.text)) < len(wanted):
                self.out.drop(category, "the answer's words are not all in one evidence turn")
                return None
            if self.common(self.rarest(self.values(wanted, best.text))[0]):
                self.out.drop(category, "the answer's words are common in the conversation")
                return None
            value = self.fact(qid, best, wanted, content(ask, self.names))
            if value is None:
                self.out.drop(category, "no statement of the evidence turn holds the answer (only questions)")
                return None
            return {"id": qid, "category": "single", "ask": ask, "truth": answer, "answer": [value[0]],
                    "also": [[w] for w in value[1:]], "needs": [qid]}
        return self.multihop(qid, ask, answer, wanted, turns)

    def multihop(self, qid: str, ask: str, answer: str, wanted: list[str], turns: list[Turn]) -> dict[str, Any] | None:
        asked = content(ask, self.names)
        covered = {w for w in wanted for turn in turns if match_in(w, words(turn.text)) is not None}
        parts = [(turn, wanted if self.values(wanted, turn.text) else asked) for turn in turns
                 if self.values(wanted, turn.text) or self.values(asked, turn.text)]  # else the link: the question's words
        if len(parts) < 2:
            self.out.drop("multi-hop", "fewer than two evidence turns tell a part of it")
            return None
        if covered != set(wanted):
            self.out.drop("multi-hop", "the answer's words are not all in its evidence turns")
            return None
        key = self.rarest(w for turn in turns for w in self.values(wanted, turn.text))
        if self.common(key[0]):
            self.out.drop("multi-hop", "the answer's words are common in the conversation")
            return None
        needs: list[str] = []
        values: list[str] = []
        for turn, these in parts:
            made = self.fact(f"{qid}.{len(needs) + 1}", turn, these, asked)
            if made is not None:
                needs.append(f"{qid}.{len(needs) + 1}")
                values += [w for w in made if these is wanted]
        if len(needs) < 2:
            self.facts = [f for f in self.facts if f["id"] not in needs]
            self.out.drop("multi-hop", "fewer than two evidence turns tell a part of it")
            return None
        key = self.rarest(values)[:3] or key[:3]
        return {"id": qid, "category": "multihop", "ask": ask, "truth": answer, "answer": [key[0]],
                "also": [[w] for w in key[1:]], "needs": needs}

    def temporal(self, qid: str, ask: str, answer: str, turns: list[Turn], ask_day: date) -> dict[str, Any] | None:
        day = answer_day(answer)
        if day is None:
            self.out.drop("temporal", "the answer is not one day (a month, a year, a week, a span)")
            return None
        event = [w for w in content(ask, self.names) if w not in _WHEN_WORDS]
        for turn in turns:
            event_words = [w for w in self.values(event, turn.text) if not self.common(w)]
            if not event_words:
                continue
            before = (turn.said - day).days
            relative = ""
            if before:
                folded = turn.text.casefold()
                relative = next((p for p, n in relative_phrases(turn.said) if n == before and
                                 re.search(rf"(?<!\w){re.escape(p)}(?!\w)", folded)), "")
                if not relative:
                    continue
            extra = {"event": True, **({"relative": relative, "days_before": before} if relative else {})}
            value = self.fact(qid, turn, event_words, event, phrase=relative, extra=extra)
            if value is None:
                continue
            who = next((n for n in (self.user, self.host_name) if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", ask)),
                       self.user if turn.speaker == "user" else self.host_name)
            return {"id": qid, "category": "temporal", "ask": f"What did {who} do on {day:%A}, {day.day} {day:%B %Y}?",
                    "truth": f"{answer}: {ask}", "answer": value, "needs": [qid],
                    "days_ago": (ask_day - day).days}
        self.out.drop("temporal", "no evidence turn dates it (said that day, or with a phrase naming the day) "
                                  "in words not common in the conversation")
        return None

    def convert(self) -> Conversion:
        self.read_turns()
        dated = sessions(self.data)
        if not dated:
            raise ValueError("no session with turns and a readable session_N_date_time")
        first = dated[0][1].date()
        last = dated[-1][1].date()
        ask_day = last + timedelta(days=1)
        questions = []
        listed = self.data.get("qa")
        for n, qa in enumerate(listed if isinstance(listed, list) else [], 1):
            qa = qa if isinstance(qa, Mapping) else {}  # not a question object: dropped as "no question"
            category = category_of(qa)
            made = self.question(n, qa, ask_day)
            if made is not None:
                questions.append(made)
                self.out.kept[category] += 1
        events: list[dict[str, Any]] = []
        for (_, when, _), runs in zip(dated, self.order):
            events.append({"day": (when.date() - first).days + 1})
            pending: Turn | None = None
            for turn in runs:
                if turn.speaker == "user":
                    if pending is not None:
                        events.append(self.pair(pending.text, CUE, pending))
                    pending = turn
                else:
                    events.append(self.pair(pending.text if pending else CUE, turn.text, pending, turn))
                    pending = None
            if pending is not None:
                events.append(self.pair(pending.text, CUE, pending))
        events.append({"day": (ask_day - first).days + 1})
        events += [{"ask": q["id"]} for q in questions]
        self.out.scenario = {
            "format": 1, "name": self.name, "family": "locomo", "user": self.user, "host": self.host,
            "start": f"{first.isoformat()}T08:00",
            "about": (f"LoCoMo (Maharana et al., ACL 2024): {self.user} and {self.character} "
                      f"(played by {self.host_name}), {len(dated)} sessions, converted by omoide.check.locomo"),
            "facts": self.facts, "questions": questions, "events": events,
        }
        return self.out

    def pair(self, cue: str, reply: str, *turns: Turn | None) -> dict[str, Any]:
        event: dict[str, Any] = {"user": cue, "reply": reply}
        planted = [self.fact_of_turn[d] for t in turns if t is not None for d in t.dias if d in self.fact_of_turn]
        if planted:
            event["fact"] = planted[0]
        return event


def convert(data: Mapping[str, Any], *, name: str = "locomo", host: str = "suzune", host_name: str = "Suzune") -> Conversion:
    """A LoCoMo conversation object (`speaker_a`, `speaker_b`, `session_N`, `session_N_date_time`, `qa`; or an item
    of locomo10.json, which keeps them in `conversation` beside `qa`) as a format-1 scenario and the categories'
    counts (the module docstring has the rules)."""
    if isinstance(data, Mapping) and isinstance(data.get("conversation"), Mapping):
        data = {**data["conversation"], "qa": data.get("qa", data["conversation"].get("qa"))}
    if not isinstance(data, Mapping) or not {"speaker_a", "speaker_b"} <= set(data):
        raise ValueError("not a LoCoMo conversation: it needs speaker_a, speaker_b and session_N")
    return Converter(data, name=name, host=host, host_name=host_name).convert()
