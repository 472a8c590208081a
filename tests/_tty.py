"""A fake terminal for the progress-bar tests: a text buffer that says it is a TTY, so tqdm draws live frames."""

from __future__ import annotations

import io


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True
