"""What the tests share: factories for PDFs and evidence, fakes (one scripted chat model, one
fake clock, one Paper record), library builders, fixtures and paths. No test module imports
another test module; what two of them need lives here (or in a conftest.py)."""
