"""The report's JSON Schema (draft 2020-12), as shipped in this package
(``report.schema.json``, the file ``scidex-jail schema`` prints), and the
check of a report against it with the ``jsonschema`` library, imported
when first used (Debian: python3-jsonschema)."""

from __future__ import annotations

import importlib.resources
import json
from typing import Any, Dict, List, Mapping, Optional

from ._errors import JailError
from ._report import Report


#: What a report with a field the schema does not name may be, said once
#: after the failures: the schema names every field of its binary's reports.
UNKNOWN_FIELD_HINT = (
    "a field this schema does not name: if the report is from another scidex-jail than the one this "
    "package ships with, validate it against that binary's `scidex-jail schema`"
)


class ReportSchemaError(JailError):
    """A report does not match the report's JSON Schema; ``errors`` lists
    each failure as ``"at /path: message"``."""

    def __init__(self, errors: List[str], report: Optional[Mapping[str, Any]] = None, hint: str = "") -> None:
        message = "the jail's report does not match its schema: " + "; ".join(errors)
        super().__init__(message + (f" ({hint})" if hint else ""), report=report)
        self.errors = errors


def schema_text() -> str:
    """The report's JSON Schema as shipped in this package (``report.schema.json``)."""
    return importlib.resources.files(__package__).joinpath("report.schema.json").read_text(encoding="utf-8")


def report_schema() -> Dict[str, Any]:
    """The report's JSON Schema, parsed."""
    s: Dict[str, Any] = json.loads(schema_text())
    return s


#: The compiled validator, made on first use.
_validator: Any = None


def validate_report(report: Mapping[str, Any]) -> None:
    """Check a report (the parsed JSON, or a :class:`Report`) against the
    report's JSON Schema with the ``jsonschema`` library (Debian:
    python3-jsonschema), formats included. Raises
    :class:`ReportSchemaError` naming every failure, and
    :class:`ModuleNotFoundError` when jsonschema is not installed."""
    global _validator
    data = report.raw if isinstance(report, Report) else report
    if _validator is None:
        try:
            import jsonschema
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError(
                "validate_report needs the jsonschema library: apt-get install python3-jsonschema "
                "(or pip install jsonschema)",
                name="jsonschema",
            ) from e
        schema = report_schema()
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        _validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    errors = sorted(_validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        unknown = any(e.validator == "additionalProperties" for e in errors)
        raise ReportSchemaError(
            [f"at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors],
            report=data,
            hint=UNKNOWN_FIELD_HINT if unknown else "",
        )
