"""Discover: find the jobs under the audited roots without reading a trajectory (stat only), shard them, and tell
where the agent-writable part of a path begins. Pure: no pytest."""
