"""One error shape for every refusal: OpenAI's `{"error": {message, type, param, code}}`.

Clients (the `openai` package, the AI SDK) read `message` and branch on the status, so each
refusal names the problem and what to do in one line, with the status OpenAI would use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ApiError"]

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    422: "invalid_request_error",
    503: "server_error",
}


class ApiError(Exception):
    """A request the server refuses or cannot answer, as an HTTP status and OpenAI's body."""

    def __init__(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = " ".join(message.split())
        self.code = code
        self.param = param

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": _TYPES.get(self.status, "server_error"),
                "param": self.param,
                "code": self.code,
            }
        }
