"""Pure rules over entries, shared by ingest, the store and the lifecycle services: no I/O.

``importance`` (how much an entry matters), ``trust`` (provenance, and the writer stamped on rows),
``conflicts`` (when a newer fact may not supersede an older one), ``rank`` (recency, access, what a
scope keeps), ``permissions`` (which agent may read or write which scope).
"""
