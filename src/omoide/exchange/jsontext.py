"""JSON for files omoide writes out (chat and memo exports).

`json.dumps(..., ensure_ascii=False)` escapes C0 controls but writes DEL and the
8-bit C1 controls (U+0080–U+009F, CSI among them) raw, and a terminal acts on
those when the export is printed or `cat`. Here every one is written as a
\\u escape: the same JSON to a parser, inert on a screen."""

from __future__ import annotations

import json
import re
from typing import Any

_RAW_CONTROLS = re.compile("[\x7f-\x9f\u2028\u2029]")


def json_text(value: Any, *, indent: int | None = None) -> str:
    """`value` as JSON with non-ASCII kept readable and every control character escaped."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    # Outside strings JSON has only ASCII punctuation, so these can only be in strings.
    return _RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
