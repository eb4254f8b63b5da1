"""Text scanning shared by the loaders, principles and reports: linear-time regular expressions (RE2), literal
prefilters, privileged-line overlap search, and secret redaction. Pure: no pytest."""
