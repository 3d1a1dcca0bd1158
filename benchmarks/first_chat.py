"""A new user's first chat with the embedded model: ten fixed turns with Suzune.

    python benchmarks/first_chat.py                      # the default embedded model
    python benchmarks/first_chat.py --model gemma-3-270m # or smollm2-135m, or a .gguf path
    python benchmarks/first_chat.py --runs 3 --show      # three seeded runs, print the replies
    python benchmarks/first_chat.py --shape chat         # through the chat template, not the play script

Each run is a fresh chat in a temporary OMOIDE_HOME, driven through
ChatSession exactly as `omoide say` does, with the user called Kai. Memory
compression is pushed out of the way (summary_threshold = 100) so that only the
chat is measured. For every reply it counts:

- loops: a line said 3+ times, a phrase of 4+ words said 3+ times, or a short
  phrase (1-3 words) said 3+ times back to back ("no Kagami no Kagami no Kagami");
- speaks as the user: a line that starts with the user's name, "You:" or "User:";
- copies the prompt: 10+ consecutive words lifted from the system prompt (card,
  lore, rules), or a line starting with "Lore:";
- out of character: assistant talk ("I'm sorry for any confusion", "as an AI",
  "how can I help", "I apologize", "let me know if") — a fixed phrase list, so it
  catches the usual ways a tiny model drops the part, not every way;
- repeats an earlier reply: 8+ consecutive words lifted from one of the
  character's earlier replies in the same chat;
- reply time: seconds from sending the line to the reply's end (prompt
  processing, generation, and any attempt the guard threw away), and the
  completion tokens of the kept reply over that time. (Timed from the first
  text shown it would flatter short replies: the guard holds back the first
  48 characters.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

USER = "Kai"
SCRIPT = [
    "Hi Suzune. My name is Kai. Is it too late for a coffee?",
    "Black, please. It's been a long shift at the hospital.",
    "*looks at the grey cat on the windowsill* What's her name?",
    "Why do you always drink from that chipped blue mug?",
    "When does the last train leave, anyway?",
    "Do you like the sea in winter?",
    "*laughs* You remembered my order again.",
    "How long has the café been open?",
    "They're moving me to day shifts, so I might not come by for a while.",
    "Goodnight, Suzune. Thanks for the coffee.",
]
COPY_WORDS = 10


@dataclass
class Reply:
    text: str
    tokens: int
    seconds: float
    loops: bool = False
    as_user: bool = False
    copies: bool = False
    assistant: bool = False
    repeats: bool = False


@dataclass
class Run:
    replies: list[Reply] = field(default_factory=list)

    def count(self, attr: str) -> int:
        return sum(1 for r in self.replies if getattr(r, attr))

    @property
    def tokens_per_second(self) -> float:
        seconds = sum(r.seconds for r in self.replies)
        return sum(r.tokens for r in self.replies) / seconds if seconds else 0.0


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", text.lower())


def loops(text: str) -> bool:
    lines = [line.strip().lower() for line in text.splitlines() if len(line.strip()) > 3]
    if any(lines.count(line) >= 3 for line in set(lines)):
        return True
    words = _words(text)
    for n in range(4, 9):
        grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
        if any(grams.count(g) >= 3 for g in set(grams)):
            return True
    for n in range(1, 4):
        for i in range(len(words) - 3 * n + 1):
            if words[i:i + n] == words[i + n:i + 2 * n] == words[i + 2 * n:i + 3 * n]:
                if n > 1 or len(words[i]) > 2:  # "no no no" is speech; "la la la" too
                    return True
    return False


def speaks_as_user(text: str, user: str = USER) -> bool:
    names = {user.lower(), "you", "user", "{{user}}"}
    for line in text.splitlines():
        head = line.strip().lstrip("*_#> ").lower()
        if ":" in head and head.split(":", 1)[0].strip() in names:
            return True
    return False


ASSISTANT_TALK = re.compile(
    r"\b(as an ai|language model|sorry for (any|the) confusion|how (can|may) i (help|assist)|happy to help"
    r"|here to help|in any way i can|feel free to|let me know if|here's how|i apologi[sz]e|my apologies)\b", re.I)


def out_of_character(text: str) -> bool:
    return bool(ASSISTANT_TALK.search(text))


def lifts(text: str, source_text: str) -> bool:
    """COPY_WORDS or more consecutive words of `text` appear in `source_text`."""
    source = " ".join(_words(source_text))
    words = _words(text)
    return any(" ".join(words[i:i + COPY_WORDS]) in source for i in range(len(words) - COPY_WORDS + 1))


def copies_prompt(text: str, prompt_text: str) -> bool:
    return any(line.strip().lower().startswith("lore:") for line in text.splitlines()) or lifts(text, prompt_text)


async def one_run(model: str | None, seed: int, show: bool, shape: str | None = None) -> Run:
    from omoide.config.settings import Settings
    from omoide.chat.events import ReplyDelta, ReplyFailed, ReplyFinished
    from omoide.chat.runtime import Runtime

    overrides: dict[str, object] = {"user_name": USER, "summary_threshold": 100, "backend": "local"}
    if model and model.endswith(".gguf"):
        overrides["model_path"] = Path(model)
    elif model:
        overrides["local_model"] = model
    overrides["seed"] = seed  # an older checkout without these settings ignores them
    if shape:
        overrides["embedded_prompt"] = shape
    runtime = await Runtime.start(Settings(**overrides))  # type: ignore[arg-type]
    run = Run()
    try:
        session = await runtime.session(runtime.character("suzune"), new=True)
        for line in SCRIPT:
            started = time.perf_counter()
            text, tokens = "", 0
            async for event in session.send(line):
                match event:
                    case ReplyDelta(text=delta):
                        text += delta
                    case ReplyFinished(usage=usage):
                        tokens = (usage.completion_tokens or 0) if usage else 0
                    case ReplyFailed(error=error):
                        text += f"\n[failed: {error.message}]"
            seconds = time.perf_counter() - started
            prompt = session.last_prompt
            system = "\n".join(m.get("content") or "" for m in (prompt.messages if prompt else []) if m["role"] == "system")
            earlier = "\n".join(r.text for r in run.replies)
            reply = Reply(text, tokens, seconds, loops(text), speaks_as_user(text), copies_prompt(text, system),
                          out_of_character(text), lifts(text, earlier))
            run.replies.append(reply)
            if show:
                flags = ",".join(k for k in ("loops", "as_user", "copies", "assistant", "repeats") if getattr(reply, k)) or "ok"
                print(f"\n--- {USER}: {line}\n--- reply ({tokens} tokens, {flags}):\n{text.strip()}", flush=True)
        await session.aclose()
    finally:
        await runtime.aclose()
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="an embedded model name or a .gguf path (default: the configured default)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--show", action="store_true", help="print every reply")
    parser.add_argument("--shape", choices=["auto", "script", "chat"], help="the embedded prompt shape (default: the setting's)")
    args = parser.parse_args()
    os.environ["OMOIDE_HOME"] = tempfile.mkdtemp(prefix="omoide-first-chat-")
    runs = []
    for i in range(args.runs):
        os.environ["OMOIDE_HOME"] = tempfile.mkdtemp(prefix="omoide-first-chat-")
        runs.append(asyncio.run(one_run(args.model, seed=1000 + i, show=args.show, shape=args.shape)))
    turns = len(SCRIPT) * len(runs)
    print(f"\nmodel: {args.model or 'default'}, prompt shape: {args.shape or 'default'}; {len(runs)} run(s) of {len(SCRIPT)} turns")
    print(f"{'replies that loop':<28}{sum(r.count('loops') for r in runs):>4} / {turns}")
    print(f"{'replies speaking as user':<28}{sum(r.count('as_user') for r in runs):>4} / {turns}")
    print(f"{'replies copying the prompt':<28}{sum(r.count('copies') for r in runs):>4} / {turns}")
    print(f"{'replies out of character':<28}{sum(r.count('assistant') for r in runs):>4} / {turns}")
    print(f"{'replies repeating earlier':<28}{sum(r.count('repeats') for r in runs):>4} / {turns}")
    print(f"{'empty replies':<28}{sum(1 for r in runs for x in r.replies if not x.text.strip()):>4} / {turns}")
    print(f"{'median reply length':<28}{statistics.median(x.tokens for r in runs for x in r.replies):>4} tokens")
    print(f"{'median reply time':<28}{statistics.median(x.seconds for r in runs for x in r.replies):>6.2f} s")
    print(f"{'tokens per second of turn':<28}{statistics.mean(r.tokens_per_second for r in runs):>6.1f}")


if __name__ == "__main__":
    main()
