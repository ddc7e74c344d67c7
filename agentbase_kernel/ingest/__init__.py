"""Message or memory in -> tiers, entities, dates, facts, dedup and supersession -> store."""
