"""assembly: puts registry, backends, cassettes and scorers together; only cli/ sits above it.

The layers below each know one thing (storage knows no backend, a backend knows no cassette,
a scorer knows only the judge seam); work that needs several of them at once, such as
re-keying an old cassette or re-running a record on the backend that made it, lives here.
"""
