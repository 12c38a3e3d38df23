"""Text progress bar for long calls (``progress=True`` everywhere in tswarp).

The C library calls the bar from the calling thread about every 50 ms with the number of
pairs (or cells) done and the total; the Python loops (shapelet trees, k-means,
barycenters) call it after each step. The bar redraws one stderr line in place with
``\\r``, with the elapsed time, the rate and an estimate of the time left, and ends it with
a newline when the call finishes or fails.
"""

import sys
import time

__all__ = ["ProgressBar", "make_progress"]


def _rate(x):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.1f}{unit}"
    return f"{x:.0f}"


def _clock(seconds):
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class ProgressBar:
    """Callable ``bar(done, total)`` drawing ``desc [####....] done/total pct elapsed rate``.

    Parameters
    ----------
    desc : str
        Label at the start of the line (the function name).
    stream : file-like, optional
        Where to draw; ``sys.stderr`` (looked up at each draw) by default.
    width : int
        Characters of the bar itself.
    min_interval : float
        Seconds between redraws (the final state is always drawn).
    unit : str
        What done and total count ("pairs"; the alignment functions set "cells").

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressBar("cdist", stream=out)
    >>> bar(10, 10); bar.close()
    >>> out.getvalue().endswith("\\n")
    True
    """

    def __init__(self, desc="", stream=None, width=30, min_interval=0.1, unit="pairs"):
        self.desc = desc
        self.unit = unit
        self.stream = stream
        self.width = width
        self.min_interval = min_interval
        self.start = time.perf_counter()
        self._last_draw = None
        self._open = False  # a line has been drawn and not yet ended

    def _out(self):
        return self.stream if self.stream is not None else sys.stderr

    def __call__(self, done, total):
        now = time.perf_counter()
        final = done >= total
        if not final and self._last_draw is not None and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        elapsed = now - self.start
        frac = done / total if total > 0 else 1.0
        filled = int(round(frac * self.width))
        bar = "#" * filled + "." * (self.width - filled)
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = "--:--" if rate <= 0 else _clock((total - done) / rate)
        line = (
            f"\r{self.desc} [{bar}] {done}/{total} {100.0 * frac:5.1f}% "
            f"{_clock(elapsed)} eta {eta if not final else _clock(0)} {_rate(rate)} {self.unit}/s"
        )
        out = self._out()
        out.write(line)
        out.flush()
        self._open = True
        if final:
            self.close()

    def close(self):
        """End the line (idempotent); called by the binding after every call."""
        if self._open:
            out = self._out()
            out.write("\n")
            out.flush()
            self._open = False


def make_progress(progress, desc, unit="steps"):
    """What a function's ``progress`` argument asks for: None (False/None), a ProgressBar
    (True), or the caller's callable(done, total); anything else is a TypeError."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return ProgressBar(desc, unit=unit)
    if callable(progress):
        return progress
    raise TypeError(f"progress must be a bool or a callable(done, total), got "
                    f"{type(progress).__name__}")
