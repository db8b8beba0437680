"""vLLM ``vllm.general_plugins`` entry point: enables the runtime checker in worker processes."""


def register() -> None:
    """Called by vLLM in every process; does nothing unless PADLINT_RUNTIME is set."""
