"""The conformance report: progress while the suite runs, the table, and the JSON for CI.

``Report`` collects one ``UnitResult`` per row. ``Report.table()`` is what
``minijax conformance`` prints; ``Report.to_json()`` is what ``--report
FILE.json`` writes, described by ``REPORT_SCHEMA`` (a small subset of JSON
Schema: ``type``, ``properties``, ``required``, ``items``, ``enum``) and
checked by ``validate(value, REPORT_SCHEMA)``. ``docs/conformance.md``
documents every field.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from minijax.testing.suite import UnitResult

SCHEMA_ID = "minijax-conformance-report/1"

_COUNT = {"type": "integer", "minimum": 0}
_ULPS = {"type": ["number", "null"], "description": "worst error in ulps; null when not finite"}

REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema", "minijax_version", "backend", "reference", "settings", "seconds", "ok", "totals", "results"],
    "properties": {
        "schema": {"type": "string", "enum": [SCHEMA_ID]},
        "minijax_version": {"type": "string"},
        "backend": {"type": "string"},
        "reference": {"type": "string"},
        "settings": {
            "type": "object",
            "required": ["examples", "law_examples", "seed", "only", "sections"],
            "properties": {
                "examples": _COUNT,
                "law_examples": _COUNT,
                "seed": {"type": ["integer", "null"]},
                "only": {"type": ["array", "null"], "items": {"type": "string"}},
                "slice": {"type": ["string", "null"]},
                "jit": {"type": "boolean"},
                "sections": {"type": "array", "items": {"type": "string", "enum": ["primitives", "laws", "corpus", "programs"]}},
            },
        },
        "seconds": {"type": "number"},
        "ok": {"type": "boolean"},
        "totals": {
            "type": "object",
            "required": ["checks", "passed", "failed", "unsupported", "executions", "rows"],
            "properties": {
                "checks": _COUNT,
                "passed": _COUNT,
                "failed": _COUNT,
                "unsupported": _COUNT,
                "executions": _COUNT,
                "rows": _COUNT,
            },
        },
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["section", "kind", "subject", "dtype", "status", "passed", "failed", "unsupported",
                             "worst_ulps", "failure", "reproducer", "note", "seconds"],  # fmt: skip
                "properties": {
                    "section": {"type": "string", "enum": ["primitives", "laws", "corpus", "programs"]},
                    "kind": {"type": "string", "enum": ["primitive", "jit", "program", "jvp", "vjp", "transpose", "vmap", "nested"]},
                    "subject": {"type": "string"},
                    "dtype": {"type": "string"},
                    "status": {"type": "string", "enum": ["pass", "fail", "unsupported"]},
                    "passed": _COUNT,
                    "failed": _COUNT,
                    "unsupported": _COUNT,
                    "worst_ulps": _ULPS,
                    "failure": {"type": ["string", "null"]},
                    "reproducer": {"type": ["string", "null"]},
                    "note": {"type": "string"},
                    "seconds": {"type": "number"},
                },
            },
        },
    },
}

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def validate(value: Any, schema: dict[str, Any], path: str = "report") -> list[str]:
    """The ways ``value`` breaks ``schema`` (empty when it conforms)."""
    problems: list[str] = []
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        # bool is an int in Python, but not a JSON integer or number.
        fits = any(isinstance(value, _JSON_TYPES[n]) and not (n in ("integer", "number") and isinstance(value, bool))
                   for n in names)  # fmt: skip
        if not fits:
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__} {value!r}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        problems.append(f"{path}: {value!r} is below the minimum {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}: the field {key!r} is missing")
        properties = schema.get("properties", {})
        for key, item in value.items():
            if key not in properties:
                problems.append(f"{path}: unexpected field {key!r}")
            else:
                problems.extend(validate(item, properties[key], f"{path}.{key}"))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problems.extend(validate(item, schema["items"], f"{path}[{i}]"))
    return problems


def schema_fields(schema: dict[str, Any] = REPORT_SCHEMA, prefix: str = "") -> list[str]:
    """Every field the schema names, as dotted paths (``results[].worst_ulps``)."""
    fields: list[str] = []
    for key, sub in schema.get("properties", {}).items():
        name = f"{prefix}{key}"
        fields.append(name)
        fields.extend(schema_fields(sub, f"{name}."))
        if "items" in sub:
            fields.extend(schema_fields(sub["items"], f"{name}[]."))
    return fields


# ---------------------------------------------------------------------------
# Progress


class Progress:
    """A plain-text progress bar with counts, on one line of a terminal (or a line now and then otherwise)."""

    WIDTH = 30

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = max(total, 1)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = self.checks = self.failed = 0
        self.start = time.perf_counter()
        self._last_line = -1.0

    def advance(self, result: UnitResult) -> None:
        self.done += 1
        self.checks += result.checks
        self.failed += result.failed
        if not self.enabled:
            return
        unit = result.unit
        line = self.line(f"{unit.kind} {unit.subject} {unit.dtype}")
        if self.tty:
            self.stream.write("\r" + line.ljust(110)[:110])
            if self.done == self.total:
                self.stream.write("\n")
        else:  # a log: one line every 10 s, and the last
            now = time.perf_counter()
            if now - self._last_line >= 10 or self.done == self.total:
                self.stream.write(line + "\n")
                self._last_line = now
        self.stream.flush()

    def line(self, current: str = "") -> str:
        filled = self.WIDTH * self.done // self.total
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        elapsed = time.perf_counter() - self.start
        return (f"[{bar}] {self.done}/{self.total} rows, {self.checks} checks, {self.failed} failed, "
                f"{elapsed:.0f}s, {self.rate(elapsed)}, ETA {self.eta(elapsed)}  {current}")  # fmt: skip

    def rate(self, elapsed: float) -> str:
        """Checks (and rows) a second so far."""
        if elapsed <= 0:
            return "- checks/s"
        return f"{self.checks / elapsed:.1f} checks/s ({self.done / elapsed:.2f} rows/s)"

    def eta(self, elapsed: float) -> str:
        """The time left at the rate of the rows so far (rows differ in cost, so it firms up as they pass)."""
        if not self.done:
            return "?"
        left = round(elapsed * (self.total - self.done) / self.done)
        return f"{left // 60}m{left % 60:02d}s" if left >= 60 else f"{left}s"


# ---------------------------------------------------------------------------
# The report


# The kinds of check whose errors are distances between two backends' results:
# the derivative laws and nested programs compare with finite differences.
MEASURES_ULPS = frozenset({"primitive", "jit", "program", "vmap"})


def _ulps_text(result: UnitResult) -> str:
    if not result.checks or result.unit.kind not in MEASURES_ULPS:
        return "-"
    u = result.worst_ulps
    return "inf" if not math.isfinite(u) else f"{u:.4g}"


@dataclasses.dataclass
class Report:
    backend: str
    reference: str
    settings: dict[str, Any]
    results: list[UnitResult] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    reproducers: dict[int, str] = dataclasses.field(default_factory=dict)  # index in results -> directory

    @property
    def ok(self) -> bool:
        return not any(r.failed for r in self.results)

    def totals(self) -> dict[str, int]:
        return {
            "checks": sum(r.checks for r in self.results),
            "passed": sum(r.passed for r in self.results),
            "failed": sum(r.failed for r in self.results),
            "unsupported": sum(1 for r in self.results if r.status == "unsupported"),
            "executions": sum(r.executions for r in self.results),
            "rows": len(self.results),
        }

    def failures(self) -> list[tuple[int, UnitResult]]:
        return [(i, r) for i, r in enumerate(self.results) if r.failed]

    def table(self) -> str:
        """The primitive x dtype table (laws folded into their primitive's rows), then the other sections."""
        lines: list[str] = []
        rows: dict[tuple[str, str], list[UnitResult]] = {}
        others: list[UnitResult] = []
        for r in self.results:
            if r.unit.section in ("primitives", "laws"):
                rows.setdefault((r.unit.subject, r.unit.dtype), []).append(r)
            else:
                others.append(r)
        header = f"{'primitive':<26} {'dtype':<9} {'passed':>7} {'failed':>7} {'worst ulps':>11}  notes"
        lines += [header, "-" * len(header)]
        # By primitive name; a primitive's dtypes in the plan's order (bool, ints, uints, floats).
        for (subject, dtype), group in sorted(rows.items(), key=lambda item: item[0][0]):
            lines.append(self._row(subject, dtype, group))
        if others:
            lines += ["", f"{'program':<36} {'passed':>7} {'failed':>7} {'worst ulps':>11}  notes", "-" * 72]
            for r in others:
                lines.append(f"{r.unit.subject:<36} {r.passed:>7} {r.failed:>7} {_ulps_text(r):>11}  {self._notes([r])}")
        t = self.totals()
        lines += [
            "",
            f"{t['checks']} checks on {self.backend!r} against {self.reference!r}: {t['passed']} passed, "
            f"{t['failed']} failed; {t['unsupported']} rows unsupported; {self.seconds:.1f}s",
        ]
        for i, r in self.failures():
            where = self.reproducers.get(i)
            lines.append(f"FAILED {r.unit.kind} {r.unit.subject} {r.unit.dtype}: {r.failure[1].message if r.failure else r.note}")
            if where:
                lines.append(f"  reproducer: {where}  (minijax replay {where})")
        return "\n".join(line.rstrip() for line in lines)

    @staticmethod
    def _notes(group: Sequence[UnitResult]) -> str:
        notes = []
        failing = [r.unit.kind for r in group if r.failed]
        if failing:
            notes.append("FAILED: " + ", ".join(failing))
        unsupported = [r.unit.kind for r in group if r.status == "unsupported"]
        if unsupported:
            notes.append("unsupported" if len(unsupported) == len(group) else "unsupported: " + ", ".join(unsupported))
        notes.extend(r.note for r in group if r.note and r.status != "unsupported")
        return "; ".join(notes)

    def _row(self, subject: str, dtype: str, group: list[UnitResult]) -> str:
        passed = sum(r.passed for r in group)
        failed = sum(r.failed for r in group)
        differential = [r for r in group if r.unit.kind in ("primitive", "jit") and r.checks]
        ulps = _ulps_text(differential[0]) if differential else "-"
        return f"{subject:<26} {dtype:<9} {passed:>7} {failed:>7} {ulps:>11}  {self._notes(group)}"

    def to_json(self, minijax_version: str) -> dict[str, Any]:
        results = []
        for i, r in enumerate(self.results):
            u = r.unit
            measured = r.checks and u.kind in MEASURES_ULPS and math.isfinite(r.worst_ulps)
            worst = r.worst_ulps if measured else None
            results.append({
                "section": u.section,
                "kind": u.kind,
                "subject": u.subject,
                "dtype": u.dtype,
                "status": r.status,
                "passed": r.passed,
                "failed": r.failed,
                "unsupported": r.unsupported if r.status != "unsupported" else max(r.unsupported, 1),
                "worst_ulps": worst,
                "failure": r.failure[1].message if r.failure and r.failed else None,
                "reproducer": self.reproducers.get(i),
                "note": r.note,
                "seconds": round(r.seconds, 4),
            })  # fmt: skip
        return {
            "schema": SCHEMA_ID,
            "minijax_version": minijax_version,
            "backend": self.backend,
            "reference": self.reference,
            "settings": self.settings,
            "seconds": round(self.seconds, 3),
            "ok": self.ok,
            "totals": self.totals(),
            "results": results,
        }


__all__ = ["MEASURES_ULPS", "REPORT_SCHEMA", "SCHEMA_ID", "Progress", "Report", "schema_fields", "validate"]
