"""One module per rule, named `gl<code>_<rule_name>.py`; found by walking this package."""
