"""Scripted answers for the end-of-conversation steps: each request is told
apart by its template's wording, so a test says what each step answers (or
that it fails) without caring about the order the pass asks in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omoide.llm.base import ChatMessage

MARKERS = [
    ("offscreen_goal", "If that goal still matters more"),
    ("offscreen", "second-hand in this conversation"),
    ("summary", "Summarize this conversation from"),
    ("memory", "Rewrite, from scratch, what"),
    ("goal", "goal for the next conversation with"),
    ("descriptor", "In one to three words"),
    ("global", "own memories, beliefs and goals"),
]

DEFAULTS = {
    "summary": "Kai dropped by the café after closing and talked about his exam; Suzune pretended not to care.",
    "memory": "Kai is a regular who takes his coffee black and has an exam on Friday.",
    "goal": "Ask whether the exam went well.",
    "descriptor": "Regular customer.",
    "offscreen": "NOTHING",
    "offscreen_goal": "KEEP",
    "global": "Suzune keeps the café going and quietly worries about her regulars.",
}


def step_of(messages: list[ChatMessage]) -> str:
    text = str(messages[-1].get("content", ""))
    for step, marker in MARKERS:
        if marker in text:
            return step
    return "chat"


class WorldScript:
    """`answers[step]` is a string, an exception to raise, or a callable of the
    request text returning either. Every request is recorded in `asked`."""

    def __init__(self, **answers: Any) -> None:
        self.answers: dict[str, Any] = {**DEFAULTS, **answers}
        self.asked: list[tuple[str, str]] = []

    def answer(self, messages: list[ChatMessage]) -> str:
        step = step_of(messages)
        text = str(messages[-1].get("content", ""))
        self.asked.append((step, text))
        answer = self.answers.get(step, "…")
        if callable(answer) and not isinstance(answer, BaseException):
            answer = answer(text)
        if isinstance(answer, BaseException):
            raise answer
        return str(answer)

    def default(self) -> Callable[[list[ChatMessage]], list[Any]]:
        """For ScriptedBackend(default=...): raising inside the stream, like a backend does."""
        def turn(messages: list[ChatMessage]) -> list[Any]:
            try:
                return [self.answer(messages)]
            except BaseException as exc:  # noqa: BLE001 - played back as the backend's failure
                return [exc]
        return turn

    def steps(self) -> list[str]:
        return [step for step, _ in self.asked]
