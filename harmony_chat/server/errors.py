"""OpenAI-shaped errors: ``{"error": {"message", "type", "param", "code"}}`` with the right status."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError
from starlette.responses import JSONResponse

_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "server_error",
}


class ApiError(Exception):
    """A request the server answers with an error (never a traceback).

    Args:
        status: the HTTP status.
        message: one line saying what is wrong.
        param: the request field at fault, if one is.
        code: a machine-readable code (``model_not_found``, ``invalid_api_key``...).
        headers: extra response headers (``Retry-After``).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.headers = dict(headers or {})

    def body(self) -> dict[str, object]:
        """The error object as OpenAI's API sends it."""
        return {
            "error": {
                "message": self.message,
                "type": _TYPES.get(self.status, "invalid_request_error"),
                "param": self.param,
                "code": self.code,
            }
        }

    def response(self) -> JSONResponse:
        """The error as an HTTP response."""
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def invalid_request(error: ValidationError) -> ApiError:
    """A 400 naming the first field pydantic refused, in one line."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()) if not str(part).startswith("function-"))
    message = first.get("msg", "invalid value")
    return ApiError(400, f"{where}: {message}" if where else message, param=where or None)
