"""The manuscript check tab."""
