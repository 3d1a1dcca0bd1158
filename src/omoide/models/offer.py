"""The model the first-run screen and `/models` offer when no server is found:
the recommended model that suits this machine, with what it costs to have it
(download size, memory) and the speed to expect from it here.

The speed is an estimate, said as one: on a CPU, making one token reads the
whole model from memory once, so tokens per second are about the memory
bandwidth the cores can use divided by the file's size.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from omoide.models.catalog import RECOMMENDED, Recommended

BANDWIDTH_PER_CORE = 2.5e9
"""Bytes a second one core reads from memory while generating (a rough rule for CPUs)."""
BANDWIDTH_CORES = 8
"""Past this many cores the memory bus, not the cores, sets the pace."""
MIN_SPEED = 4.0
"""Tokens a second below which a reply is too slow to chat with (about 3 words a second)."""
_SIZE = re.compile(r"^\s*([\d.]+)\s*(KB|MB|GB|TB)\s*$", re.IGNORECASE)
_UNITS = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}


def parse_size(text: str) -> int:
    """'986 MB' -> 986000000."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"not a size: {text!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


@dataclass(frozen=True, slots=True)
class Machine:
    cores: int
    memory: int | None
    """Bytes of RAM, when the system says."""

    @classmethod
    def here(cls) -> Machine:
        try:
            memory: int | None = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            memory = None
        return cls(cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1),
                   memory=memory)


@dataclass(frozen=True, slots=True)
class Offer:
    model: Recommended
    size: int
    ram: int
    speed: float
    """Estimated tokens a second on this machine."""
    machine: Machine

    def describe(self) -> list[str]:
        """The offer as lines of plain text: what, how big, what it needs, how fast."""
        cores = f"{self.machine.cores} CPU core{'s' if self.machine.cores != 1 else ''}"
        return [
            f"{self.model.name}: {self.model.note}",
            f"Download {self.model.size} · needs about {self.model.ram} of RAM · licence: {self.model.licence}",
            f"Expect {self.pace('a second')} here ({_count(self.speed * 0.75, 'word', 'roughly')}; an estimate for {cores}).",
        ]

    def pace(self, per: str = "/s") -> str:
        """'about 5 tokens a second', 'about 1 token/s', 'under 1 token/s'."""
        return f"{_count(self.speed, 'token')}{' ' if per[0] != '/' else ''}{per}"


def _count(amount: float, noun: str, about: str = "about") -> str:
    """An estimated count, said as one: 'about 5 tokens', 'about 1 token', 'under 1 token'."""
    if amount < 0.5:
        return f"under 1 {noun}"
    whole = round(amount)
    return f"{about} {whole} {noun}{'s' if whole != 1 else ''}"


def estimate_speed(size: int, machine: Machine) -> float:
    return min(machine.cores, BANDWIDTH_CORES) * BANDWIDTH_PER_CORE / max(size, 1)


def offer_for(model: Recommended, machine: Machine | None = None) -> Offer:
    machine = machine or Machine.here()
    size = parse_size(model.size)
    return Offer(model, size, parse_size(model.ram), estimate_speed(size, machine), machine)


def recommend(machine: Machine | None = None) -> Offer:
    """The largest recommended model that fits in half this machine's memory and
    still answers at a chatting pace; the smallest when none does."""
    machine = machine or Machine.here()
    offers = sorted((offer_for(m, machine) for m in RECOMMENDED), key=lambda o: o.size)
    fitting = [o for o in offers if o.speed >= MIN_SPEED and (machine.memory is None or o.ram <= machine.memory // 2)]
    return fitting[-1] if fitting else offers[0]
