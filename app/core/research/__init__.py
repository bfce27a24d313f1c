"""The research funnel (standard mode), its follow-ups, and deep research."""
