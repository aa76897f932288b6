"""Hypothesis settings for the value-language property tests.

The profile is registered, not loaded, so other suites keep their own settings; tests here
apply it with ``@settings.get_profile("values")``: at most 200 examples, derandomized, no
deadline (the first example of each test also pays for building the grammar).
"""

from hypothesis import settings

settings.register_profile("values", max_examples=200, derandomize=True, deadline=None)
