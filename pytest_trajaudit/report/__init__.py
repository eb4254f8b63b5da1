"""Report writers: per-job audit JSON (the seed's schema), summary.json, and the terminal lines."""
