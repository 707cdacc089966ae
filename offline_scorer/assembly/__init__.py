"""assembly: puts registry, backends, cassettes and scorers together; only cli/ sits above it."""
