"""The check's results on the terminal: a row per category and a column per arm
(rich, never markup from the model), the costs per arm, the notes that say what
the figures cover, and the answers themselves on request."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from omoide.check.judge import JUDGE_PROMPT
from omoide.check.results import KNOWABLE, SAID_BY, ArmResult, Horizon, cell
from omoide.check.run import CheckReport
from omoide.check.scenario import CATEGORIES
from omoide.check.sources import SOURCES
from omoide.safe_text import oneline, safe

SHORT = {"point_in_time": "point in time", "new_chat": "new chat", "abstention": "abstain", "preference": "prefer",
         SAID_BY + "other": "said by others", SAID_BY + "mixed": "said by several"}


def _categories(report: CheckReport) -> list[str]:
    return [c for c in CATEGORIES if any(a.category == c for r in report.arms for a in r.answers)]


def _sources(report: CheckReport) -> list[str]:
    """'said by user', 'said by character' ...: the groups of questions by who told them, as asked."""
    return [SAID_BY + s for s in (*SOURCES, "mixed") if any(a.source == s for r in report.arms for a in r.answers)]


def _table(report: CheckReport, title: str, caption: str, show: Callable[[list[ArmResult], str | None], str],
           *, floors: bool = False, after: Sequence[str] = ()) -> Table:
    out = Table(title=safe(title, "bold"), title_justify="left", caption=caption, caption_justify="left")
    out.add_column("category", style="bold")
    out.add_column("n", justify="right", style="dim")
    arms = report.arm_names(floors=floors)
    for arm in arms:
        out.add_column(arm.replace("+", "\n+"), justify="right")
    first = report.oracles[0] if report.oracles else ""
    for category in [*_categories(report), None, *after]:
        asked = cell(report.results(arms[0], first), category).questions if arms else 0
        row = [SHORT.get(category or "", category or "all"), str(asked)]
        row += [show(report.results(arm, first) if not report.oracles else [r for r in report.arms if r.arm == arm],
                     category) for arm in arms]
        out.add_row(*(Text(v) for v in row), style="bold" if category in (None, KNOWABLE) else "")
    return out


def kept_table(report: CheckReport) -> Table:
    if report.oracles:
        kinds = report.oracles

        def both(results: list[ArmResult], category: str | None) -> str:
            ran = [k for k in kinds if any(r.oracle == k for r in results)]  # the writer skips the baselines
            return "/".join(cell([r for r in results if r.oracle == k], category, kept=True).show() for k in ran)

        return _table(report, "Memory check: what the design keeps (" + " / ".join(f"{k} oracle" for k in kinds) + ")",
                      "kept %: an ideal reader of the prompt, less the character's own replies, answers right; "
                      "mean over the scenarios ±their spread (std.); n: questions per arm; said by: who told "
                      "what the question needs", both, after=_sources(report))
    return _table(report, f"Memory check: {report.backend} · {report.model or 'default'}: kept",
                  "kept %: an ideal reader of the same prompt, less the model's own replies, answers right; "
                  "said by: who told what the question needs",
                  lambda results, category: cell(results, category, kept=True).show(), after=_sources(report))


def answered_table(report: CheckReport) -> Table:
    return _table(report, f"Memory check: {report.backend} · {report.model or 'default'}: answered",
                  "answered %: the answer gives the value and names no other value of the story, "
                  "no stale value as current, nothing it must not know; knowable: every question but abstention "
                  "and must-not-know; declines, frequent: floors in the same run (a server that always says "
                  "\"I don't know\", one that always names the story's most frequent name)",
                  lambda results, category: cell(results, category).show(), floors=True, after=(KNOWABLE,))


def _horizon(results: list[ArmResult]) -> str:
    spans: list[Horizon] = [h for r in results for h in r.horizons]
    if not spans:
        return "–"
    lost = [h.messages for h in spans if not h.censored]
    return str(min(lost)) if lost else f"≥{max(h.messages for h in spans)}"


def cost_table(report: CheckReport) -> Table:
    out = Table(title="How long it holds, and what it costs", title_justify="left")
    out.add_column("arm", style="bold")
    if report.oracles:
        out.add_column("oracle")
    out.add_column("horizon", justify="right")
    out.add_column("stale %", justify="right")
    out.add_column("tokens/turn", justify="right")
    out.add_column("reply s", justify="right")
    out.add_column("memory s", justify="right")
    if report.judged:
        out.add_column("judge %", justify="right")
    for kind in report.oracles or ("",):
        for arm in report.arm_names():
            results = report.results(arm, kind)
            if not results:
                continue
            tokens = [t.prompt_tokens for r in results for t in r.turns]
            replies = sorted(t.reply_seconds for r in results for t in r.turns)
            memory = [t.memory_seconds for r in results for t in r.turns]
            stale = [a.stale_named for r in results for a in r.answers if a.category == "update"]
            row = [arm, *([kind] if report.oracles else []), _horizon(results),
                   f"{round(100 * sum(stale) / len(stale))}" if stale else "–",
                   f"{sum(tokens) / len(tokens):,.0f}" if tokens else "–",
                   f"{replies[len(replies) // 2]:.2f}" if replies else "–",
                   f"{sum(memory) / len(memory):.2f}" if memory else "–"]
            if report.judged:
                row.append(cell(results, None, judge=True).show())
            out.add_row(*(Text(v) for v in row), style="red" if any(r.error for r in results) else "")
    return out


def notes(report: CheckReport) -> Group:
    scenarios = ", ".join(f"{s['name']} ({s['messages']} messages, {s['questions']} questions)" for s in report.scenarios)
    lines = [
        f"{len(report.scenarios)} scenario(s): {scenarios}; context_size {report.context_size}.",
        "horizon: messages a fact stayed in every prompt after it was said: the shortest stay of a fact that "
        "left; ≥N: none left, the oldest was still there N messages on.",
        "stale %: knowledge-update answers that named the old value as current.",
        "reply s: median seconds to a whole reply; memory s: mean seconds of memory work after a turn.",
    ]
    sources = sorted({s for r in report.arms for s in r.token_source().split(", ")})
    lines.append("tokens/turn: prompt tokens as counted by " + ", ".join(sources)
                 + (" (characters / 4: no tokenizer)" if "estimate" in sources else "") + ".")
    for result in report.arms:
        if result.overflow_at is not None:
            lines.append(f"{result.arm} on {result.scenario}: from message {result.overflow_at} the prompt no longer "
                         "fit the context; its oldest messages were left out.")
        if result.error:
            lines.append(f"{result.arm} on {result.scenario} stopped: {oneline(result.error)}")
    if report.load_before is not None:
        after = report.load_after or report.load_before
        lines.append(f"{report.seconds:.0f} s; load average {report.load_before[0]:.2f} before, {after[0]:.2f} after, "
                     f"on {report.cpus} CPU(s): times taken beside other work are not figures to publish.")
    out: list[Text] = [safe(line, "dim") for line in lines]  # scenario names and sources are the file's text
    if report.judged:
        out.append(safe(f"\nThe judge ({report.judged}) was asked, for every answer:", "bold"))
        out.append(Text(JUDGE_PROMPT))
    return Group(*out)


def answers(report: CheckReport) -> Group:
    """Every answer, as the model gave it (inert: it is model output)."""
    rows: list[Text] = []
    for result in report.arms:
        rows.append(safe(f"\n{result.arm} · {result.scenario}" + (f" · {result.oracle} oracle" if result.oracle else ""),
                         "bold"))
        for answer in result.answers:
            mark = "✓" if answer.correct else "✗"
            line = Text(f"  {mark} ", style="green" if answer.correct else "red")
            line.append(safe(f"{oneline(answer.question, 24):<14} "))
            line.append(safe(oneline(answer.answer, 160)))
            if answer.judge_said:
                line.append(Text("  judge: ", style="dim"))
                line.append(safe(oneline(answer.judge_said, 20), "dim"))
            rows.append(line)
    return Group(*rows)


def show(console: Console, report: CheckReport, *, with_answers: bool = False) -> None:
    if not report.oracles:
        console.print(answered_table(report))
    console.print(kept_table(report))
    console.print(cost_table(report))
    console.print(notes(report))
    if with_answers:
        console.print(answers(report))
