"""The LLM steps of the end-of-conversation pass: one template and one call
each, and what counts as a usable answer.

Each template is the whole user message of its request (instructions and data
placeholders), after a fixed one-line system message. `omoide templates edit
world.goal` changes one; the names below are the ones the user sees.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from omoide.memory import templates
from omoide.llm.base import ChatMessage

NONE_YET = "(nothing yet)"
"""What a step's input says when there is nothing of it yet."""

SYSTEM = (
    "You keep the memories of the characters in an ongoing story. "
    "Follow the instructions exactly and reply with the requested text only, with no preamble."
)

SUMMARY = templates.register("world.summary", """\
{char} just had a conversation with {others}.
About {char}: {char_description}

The conversation:
{transcript}

Summarize this conversation from {char}'s point of view, in third person, past
tense, in at most five sentences: what happened, what was said that matters,
promises and plans, and how {char} felt about it. Reply with the summary only.""",
    ("char", "char_description", "others", "transcript"),
    "After a conversation: what it was, from one character's point of view.")

MEMORY = templates.register("world.memory", """\
Rewrite, from scratch, what {char} remembers about {other}.

What {char} remembered before:
{previous_memory}

Recent conversations between {char} and {other}, oldest first:
{summaries}

What {char} heard about {other} from others:
{offscreen}

Write {char}'s memory of {other} in at most six sentences, third person. Keep
what still matters, let old details fade unless they keep coming up, say when
things happened (the dates in brackets), and never invent facts. Reply with
the memory only.""",
    ("char", "other", "previous_memory", "summaries", "offscreen"),
    "After a conversation: the consolidated memory of each other participant, rewritten.")

GOAL = templates.register("world.goal", """\
{char} just talked with {other}. What happened, as {char} saw it:
{summary}

What {char} remembers about {other}:
{memory}

{char}'s goal for this conversation was: {previous_goal}

Write {char}'s goal for the next conversation with {other}: one short
sentence, something {char} wants to ask, do or find out, that keeps the story
moving (for example: "ask whether the exam went well"). Reply with the goal only.""",
    ("char", "other", "summary", "memory", "previous_goal"),
    "After a conversation: what the character wants from the next one with each participant.")

DESCRIPTOR = templates.register("world.descriptor", """\
What {char} remembers about {other}:
{memory}

Until now {other} was, to {char}: {previous_descriptor}

In one to three words, what is {other} to {char} now? Examples: regular
customer, rival, old friend, distant acquaintance. Reply with the words only.""",
    ("char", "other", "memory", "previous_descriptor"),
    "After a conversation: the 1-3 word relationship label.")

OFFSCREEN = templates.register("world.offscreen", """\
{other} was not part of this conversation, but was talked about in it.

The conversation:
{transcript}

What {char} already remembered about {other}:
{known}

List what {char} learned about {other} second-hand in this conversation, in
one to three short sentences, third person. Only new information about
{other}. If {char} learned nothing new about {other}, reply NOTHING.""",
    ("char", "other", "transcript", "known"),
    "After a conversation: what a listener learned about someone who was not there.")

OFFSCREEN_GOAL = templates.register("world.offscreen_goal", """\
{char} just heard this about {other}, who was not there:
{learned}

What {char} remembers about {other}:
{memory}

{char}'s goal for the next conversation with {other} is: {previous_goal}

If that goal still matters more, reply KEEP. Otherwise write the new goal in
one short sentence. Reply with KEEP or the goal only.""",
    ("char", "other", "learned", "memory", "previous_goal"),
    "After gossip: the goal toward the one talked about (the old one may be kept).")

GLOBAL = templates.register("world.global", """\
Rewrite, from scratch, {char}'s own memories, beliefs and goals: the things
{char} carries into every conversation, whoever it is with.
About {char}: {char_description}

What {char} carried before:
{previous_global}

{char}'s recent conversations, oldest first:
{summaries}

Write at most eight short lines in third person. Keep what still matters and
let the rest fade. Reply with the memories only.""",
    ("char", "char_description", "previous_global", "summaries"),
    "After a conversation: the character's global memory, rewritten.")


class InvalidOutput(ValueError):
    """The model's answer cannot be used for this step."""


NOTHING = "NOTHING"
KEEP = "KEEP"

_TEMPLATE_TOKENS = re.compile(r"<\|im_(start|end)\|>|<\|eot_id\|>|<\|endoftext\|>|</?s>")
_LABEL = re.compile(r"^\s*(summary|memory|goal|descriptor|answer|reply|global memory|memories)\s*:\s*", re.IGNORECASE)


def clean_text(text: str, *, min_chars: int = 10) -> str:
    out = _TEMPLATE_TOKENS.sub("", text).strip()
    out = _LABEL.sub("", out).strip()
    if len(out) < min_chars:
        raise InvalidOutput("the answer came back empty or too short")
    return out


def clean_goal(text: str) -> str:
    out = clean_text(text, min_chars=5)
    return out.split("\n\n")[0].strip().strip('"“”').strip()[:300]


def clean_descriptor(text: str) -> str:
    line = next((ln for ln in _TEMPLATE_TOKENS.sub("", text).splitlines() if ln.strip()), "")
    line = _LABEL.sub("", line)
    words = re.findall(r"[^\W_][\w'’-]*", line)
    if not words:
        raise InvalidOutput("no descriptor came back")
    return " ".join(words[:3]).lower()


def check_echo(answer: str, template_text: str) -> str:
    """Small models often repeat the prompt instead of answering it: an answer
    that opens with a line of the template's own wording is not an answer."""
    opening = answer.lstrip()
    for fragment in templates.fields_and_text(template_text):
        fragment = fragment.strip()
        if len(fragment) >= 12 and opening.startswith(fragment):
            raise InvalidOutput("the model repeated the prompt instead of answering it")
    return answer


def is_keyword(text: str, keyword: str) -> bool:
    return _TEMPLATE_TOKENS.sub("", text).strip().strip(".!\"'").upper().startswith(keyword)


@dataclass(frozen=True, slots=True)
class StepKind:
    template: templates.TemplateSpec
    max_tokens: int
    clean: Callable[[str], str]


STEPS = {
    "summary": StepKind(SUMMARY, 300, clean_text),
    "memory": StepKind(MEMORY, 350, clean_text),
    "goal": StepKind(GOAL, 80, clean_goal),
    "descriptor": StepKind(DESCRIPTOR, 16, clean_descriptor),
    "offscreen": StepKind(OFFSCREEN, 200, lambda t: clean_text(t, min_chars=4)),
    "offscreen_goal": StepKind(OFFSCREEN_GOAL, 80, lambda t: clean_text(t, min_chars=4)),
    "global": StepKind(GLOBAL, 350, clean_text),
}


def request(kind: StepKind, values: dict[str, object]) -> tuple[list[ChatMessage], templates.Template]:
    template = templates.get(kind.template.name)
    messages: list[ChatMessage] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": template.render(**values)},
    ]
    return messages, template
