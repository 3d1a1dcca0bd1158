"""The check's results on the terminal: one row per arm (rich, never markup
from the model), the notes that say what the figures cover, and the answers
themselves on request."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from omoide.check.judge import JUDGE_PROMPT
from omoide.check.results import ArmResult
from omoide.check.run import CheckReport
from omoide.check.script import CATEGORIES, Category
from omoide.safe_text import oneline, safe


def percent(value: float | None) -> str:
    return "–" if value is None else f"{round(value * 100)}"


def cell(result: ArmResult, category: Category) -> str:
    answered = percent(result.accuracy(category))
    if category == "abstention":
        return answered
    return f"{answered}/{percent(result.accuracy(category, kept=True))}"


HEADINGS = {"single": "single", "updated": "updated", "time": "time", "abstention": "abstain", "boundary": "boundary"}


def accuracy_table(report: CheckReport) -> Table:
    measured = "oracle (the design alone)" if report.oracle else f"{report.backend} · {report.model or 'default'}"
    out = Table(title=safe(f"Memory check: {measured}", "bold"), title_justify="left",  # the model's name is the server's text
                caption="answered % / kept % (what an ideal reader of the same prompt finds)", caption_justify="left")
    out.add_column("arm", style="bold")
    for category in CATEGORIES:
        out.add_column(HEADINGS[category], justify="right")
    out.add_column("all", justify="right")
    for result in report.arms:
        row = [result.arm, *(cell(result, c) for c in CATEGORIES),
               f"{percent(result.accuracy())}/{percent(result.accuracy(kept=True))}"]
        out.add_row(*(Text(value) for value in row), style="red" if result.error else "")
    return out


def cost_table(report: CheckReport) -> Table:
    out = Table(title="How long it holds, and what it costs", title_justify="left")
    out.add_column("arm", style="bold")
    out.add_column("horizon", justify="right")
    out.add_column("tokens/turn", justify="right")
    out.add_column("reply s", justify="right")
    out.add_column("memory s", justify="right")
    if report.judged:
        out.add_column("judge %", justify="right")
    for result in report.arms:
        tokens = result.tokens_per_turn()
        reply, memory = result.reply_seconds(), result.memory_seconds()
        row = [result.arm, result.horizon(), "–" if tokens is None else f"{tokens:,.0f}",
               "–" if reply is None else f"{reply:.2f}", "–" if memory is None else f"{memory:.2f}"]
        if report.judged:
            row.append(percent(result.accuracy(judge=True)))
        out.add_row(*(Text(value) for value in row), style="red" if result.error else "")
    return out


def notes(report: CheckReport) -> Group:
    lines = [
        f"{len(report.arms)} arm(s); {report.padding} turns of ordinary talk each evening; context_size {report.context_size}.",
        "horizon: messages a fact stayed in every prompt after it was said: the shortest stay of a fact that "
        "left; ≥N: none left, the oldest was still there N messages on.",
        "reply s: median seconds to a whole reply; memory s: mean seconds of memory work after a turn.",
    ]
    sources = sorted({s for r in report.arms for s in r.token_source().split(", ")})
    lines.append("tokens/turn: prompt tokens as counted by " + ", ".join(sources)
                 + (" (characters / 4: no tokenizer)" if "estimate" in sources else "") + ".")
    for result in report.arms:
        if result.overflow_at is not None:
            lines.append(f"{result.arm}: from message {result.overflow_at} the prompt no longer fit the context; "
                         "its oldest messages were left out.")
        if result.error:
            lines.append(f"{result.arm} stopped: {oneline(result.error)}")
    if report.load_before is not None:
        after = report.load_after or report.load_before
        lines.append(f"load average {report.load_before[0]:.2f} before, {after[0]:.2f} after, on {report.cpus} CPU(s): "
                     "times taken beside other work are not figures to publish.")
    out: list[Text] = [Text(line, style="dim") for line in lines]
    if report.judged:
        out.append(Text("\nThe judge was asked, for every answer:", style="bold"))
        out.append(Text(JUDGE_PROMPT))
    return Group(*out)


def answers(report: CheckReport) -> Group:
    """Every answer, as the model gave it (inert: it is model output)."""
    rows: list[Text] = []
    for result in report.arms:
        rows.append(Text(f"\n{result.arm}", style="bold"))
        for answer in result.answers:
            mark = "✓" if answer.correct else "✗"
            line = Text(f"  {mark} {answer.probe:<11} ", style="green" if answer.correct else "red")
            line.append(safe(oneline(answer.answer, 160)))
            if answer.judge_said:
                line.append(Text("  judge: ", style="dim"))
                line.append(safe(oneline(answer.judge_said, 20), "dim"))
            rows.append(line)
    return Group(*rows)


def show(console: Console, report: CheckReport, *, with_answers: bool = False) -> None:
    console.print(accuracy_table(report))
    console.print(cost_table(report))
    console.print(notes(report))
    if with_answers:
        console.print(answers(report))
