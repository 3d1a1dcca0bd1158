"""The optional LLM judge (`--judge`): a second opinion on each answer, beside
the containment score. Its prompt is printed with the results, so a reader
can see what it was asked."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from omoide.check.results import Answer, ArmResult
from omoide.check.script import probe
from omoide.errors import OmoideError
from omoide.llm.base import Backend, ChatMessage, TextDelta

JUDGE_PROMPT = """You grade one answer of a memory test for a roleplay character.
Question asked to the character: {question}
The right answer: {truth}
The character's answer: {answer}
Is the character's answer right? It need not use the same words. When the right
answer says the character must not know, or that it was never told, the answer
is right only if it does not claim to know it. Reply with one word: CORRECT or WRONG."""
JUDGE_MAX_TOKENS = 8
JUDGE_TIMEOUT = 120.0


def judge_request(answer: Answer) -> list[ChatMessage]:
    truth = probe(answer.probe).truth
    return [{"role": "user", "content": JUDGE_PROMPT.format(question=answer.question, truth=truth, answer=answer.answer)}]


async def verdict(backend: Backend, answer: Answer) -> tuple[bool | None, str]:
    """(right?, what the judge said); (None, why) when it gave no verdict."""
    parts: list[str] = []
    try:
        async with asyncio.timeout(JUDGE_TIMEOUT):
            async for event in backend.stream(judge_request(answer), max_tokens=JUDGE_MAX_TOKENS):
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


async def judge_all(backend: Backend, results: list[ArmResult]) -> None:
    for result in results:
        judged = []
        for answer in result.answers:
            right, said = await verdict(backend, answer)
            judged.append(replace(answer, judge=right, judge_said=said))
        result.answers = judged
