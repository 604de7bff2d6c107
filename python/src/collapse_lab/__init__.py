"""collapse-lab from Python: RunReports as pandas DataFrames, and the served simulators.

>>> import collapse_lab
>>> r = collapse_lab.read_report("public/recorded/persuasion-quick.json")
>>> r.comparisons.query("metric == 'heldoutSuccess'")

See docs/python.md in the collapse-lab repository.
"""

from .report import (
    REPORT_SCHEMA,
    Report,
    ReportError,
    json_schema,
    read_report,
    restated_report,
    validate_report,
)
from .serve import Candidate, ServedSimulator, serve

__all__ = [
    "REPORT_SCHEMA",
    "Candidate",
    "Report",
    "ReportError",
    "ServedSimulator",
    "json_schema",
    "read_report",
    "restated_report",
    "serve",
    "validate_report",
]
__version__ = "0.1.0"
