"""The portable export format: a versioned JSON Lines file any agentbase (and importer) reads.

``Kernel.export`` / ``Kernel.import_`` are the public entry points; docs/export-format.md is the spec.
"""

from __future__ import annotations

from .export import export_lines, write_export
from .format import FORMAT, FORMAT_VERSION, KINDS, SOURCE_KINDS, encode_record, header
from .importer import import_records, read_records

__all__ = ["FORMAT", "FORMAT_VERSION", "KINDS", "SOURCE_KINDS", "encode_record", "export_lines", "header",
           "import_records", "read_records", "write_export"]
