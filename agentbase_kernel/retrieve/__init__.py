"""Query -> intent -> recall legs -> fusion -> strategies -> rerank -> level/budget -> trace."""
