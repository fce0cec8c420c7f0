"""Shared fixtures. Tests never touch the internet: sites are served on 127.0.0.1."""
