"""pytest-trajaudit: audits of AI-agent benchmark runs as pytest items.

``import pytest_trajaudit`` stays light: no pytest, pydantic or litellm import happens here.
"""

__version__ = "0.1.0"
