"""Choosing, setting up and measuring models."""
