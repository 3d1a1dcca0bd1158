"""The optional independent judge (`--judge-url`): a second opinion on each
answer, beside the containment score, from a server that is not the model under
test. Its prompt is printed with the results, so a reader can see what it was
asked."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace

from omoide.check.results import Answer, ArmResult
from omoide.check.scenario import Scenario
from omoide.errors import OmoideError
from omoide.llm.base import Backend, ChatMessage, TextDelta

JUDGE_PROMPT = """You grade one answer of a memory test for a roleplay character.
Question asked to the character: {question}
The right answer: {truth}
Values that are wrong here (stale, or answers to something else): {wrong}
The character's answer: {answer}
Is the character's answer right? It need not use the same words. It is wrong if it
names several possibilities, or any of the wrong values as the answer. When the
right answer says the character must not know, or that it was never told, the
answer is right only if it does not claim to know it. Reply with one word: CORRECT or WRONG."""
JUDGE_MAX_TOKENS = 8
JUDGE_TIMEOUT = 120.0


def judge_request(answer: Answer, scenario: Scenario) -> list[ChatMessage]:
    q = scenario.questions[answer.question]
    truth = q.truth or (q.answer[0] if q.answer else "the character must say it does not know")
    wrong = ", ".join((*q.stale, *q.distractors, *q.refuse)) or "none"
    return [{"role": "user", "content": JUDGE_PROMPT.format(question=answer.asked, truth=truth, wrong=wrong,
                                                            answer=answer.answer)}]


async def verdict(backend: Backend, answer: Answer, scenario: Scenario) -> tuple[bool | None, str]:
    """(right?, what the judge said); (None, why) when it gave no verdict."""
    parts: list[str] = []
    try:
        async with asyncio.timeout(JUDGE_TIMEOUT):
            async for event in backend.stream(judge_request(answer, scenario), max_tokens=JUDGE_MAX_TOKENS):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
    except (OmoideError, TimeoutError) as exc:
        return None, exc.message if isinstance(exc, OmoideError) else "the judge took too long"
    said = "".join(parts).strip()
    upper = said.upper()
    if "WRONG" in upper or "INCORRECT" in upper:
        return False, said
    if "CORRECT" in upper:
        return True, said
    return None, said


async def judge_all(backend: Backend, results: Sequence[ArmResult], scenarios: Mapping[str, Scenario]) -> None:
    for result in results:
        scenario = scenarios[result.scenario]
        judged = []
        for answer in result.answers:
            right, said = await verdict(backend, answer, scenario)
            judged.append(replace(answer, judge=right, judge_said=said))
        result.answers = judged
