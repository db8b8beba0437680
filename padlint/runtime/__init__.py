"""Runtime checker (needs torch: pip install padlint[runtime])."""
