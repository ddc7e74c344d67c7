"""Pure text analysis shared by ingest and retrieval: no SQL, no I/O beyond loading a model."""
