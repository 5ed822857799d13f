"""OpenAI's Conversations API: conversations and their items, kept in the server's store.

``POST /v1/conversations``, ``GET``/``POST``/``DELETE /v1/conversations/{id}``,
``GET``/``POST /v1/conversations/{id}/items``, ``GET``/``DELETE /v1/conversations/{id}/items/{item_id}``,
in the shapes the openai client's ``client.conversations`` reads. Items are Responses items
(messages, reasoning, function calls and their outputs, text only) with an ``id``; a response
created with ``conversation`` reads them as its history and appends its input and output.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harmony_chat.server.errors import ApiError
from harmony_chat.server.response_store import Conversation, ServerStore, StoreFull
from harmony_chat.server.responses_request import Item, normalise_input
from harmony_chat.server.turn_output import new_id

MAX_ITEMS_PER_CALL = 20
"""Items one request may add (OpenAI's bound)."""
MAX_METADATA_PAIRS = 16
"""Metadata pairs a conversation may have (OpenAI's bound)."""
DEFAULT_PAGE = 20
"""Items a list returns unless ``limit`` says otherwise."""
MAX_PAGE = 100


def input_items(canonical: list[Item]) -> list[Item]:
    """Canonical input items (:func:`normalise_input`) as conversation items, each with a fresh id."""
    items: list[Item] = []
    for item in canonical:
        kind = item["type"]
        if kind == "message":
            assistant = item["role"] == "assistant"
            part: Item = (
                {"type": "output_text", "text": item["content"], "annotations": [], "logprobs": []}
                if assistant
                else {"type": "input_text", "text": item["content"]}
            )
            message: Item = {
                "id": new_id("msg"),
                "type": "message",
                "role": item["role"],
                "status": "completed",
                "content": [part],
            }
            if assistant:
                message["phase"] = item.get("phase", "final_answer")
            items.append(message)
        elif kind == "reasoning":
            reasoning: Item = {"id": new_id("rs"), "type": "reasoning", "summary": []}
            if "encrypted_content" in item:  # sealed reasoning stays sealed
                reasoning["encrypted_content"] = item["encrypted_content"]
            else:
                reasoning["content"] = [{"type": "reasoning_text", "text": item["text"]}]
            items.append(reasoning)
        elif kind == "function_call":
            items.append({"id": new_id("fc"), **item, "status": "completed"})
        else:
            items.append({"id": new_id("fco"), **item, "status": "completed"})
    return items


def parse_metadata(value: object, param: str = "metadata") -> dict[str, str]:
    """OpenAI's metadata: at most 16 string pairs, keys up to 64 characters, values up to 512.

    Raises:
        ApiError: 400 for anything else.
    """
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_METADATA_PAIRS:
        raise ApiError(400, f"{param} must be an object of at most {MAX_METADATA_PAIRS} string pairs", param=param)
    for key, text in value.items():
        if not isinstance(text, str) or len(key) > 64 or len(text) > 512:
            raise ApiError(400, f"{param}: keys are strings up to 64 characters, values up to 512", param=param)
    return dict(value)


def _new_items(body: dict[str, Any], *, required: bool) -> list[Item]:
    raw = body.get("items")
    if raw is None and not required:
        return []
    if not isinstance(raw, list) or (required and not raw):
        raise ApiError(400, "items must be a list of items", param="items")
    if len(raw) > MAX_ITEMS_PER_CALL:
        raise ApiError(400, f"at most {MAX_ITEMS_PER_CALL} items may be added at a time", param="items")
    if not all(isinstance(item, dict) for item in raw):
        raise ApiError(400, "items must be a list of item objects", param="items")
    return input_items(normalise_input(raw))


def _check_include(request: Request) -> None:
    """The items endpoints produce no ``include`` extras: naming one is refused."""
    for value in [*request.query_params.getlist("include"), *request.query_params.getlist("include[]")]:
        raise ApiError(400, f"include: this server does not produce {value[:60]!r}", param="include")


def _missing(conversation_id: str) -> ApiError:
    return ApiError(404, f"no conversation {conversation_id[:80]!r}", param="conversation_id", code="not_found")


def _full(full: StoreFull) -> ApiError:
    """A bound of the store reached: 413 for one item too large, 400 for a full conversation or store."""
    return ApiError(413 if full.code == "item_too_large" else 400, str(full), param="items", code=full.code)


def _list(items: list[Item], has_more: bool) -> dict[str, Any]:
    return {
        "object": "list",
        "data": items,
        "first_id": items[0]["id"] if items else "",
        "last_id": items[-1]["id"] if items else "",
        "has_more": has_more,
    }


class ConversationRoutes:
    """The Conversations API over a store, under the app's rules for keys and bodies.

    Args:
        store: where conversations live.
        authorize: raises the app's 401 for a request without the key.
        read_json: checks the key, then returns the body as a checked JSON object (the app's size
            and shape rules).
    """

    def __init__(
        self,
        store: ServerStore,
        authorize: Callable[[Request], None],
        read_json: Callable[[Request], Awaitable[dict[str, Any]]],
    ) -> None:
        self.store = store
        self.authorize = authorize
        self.read_json = read_json

    def routes(self) -> list[Route]:
        """The routes, to mount at the app's root."""
        return [
            Route("/v1/conversations", self.create, methods=["POST"]),
            Route("/v1/conversations/{conversation_id}", self.retrieve, methods=["GET"]),
            Route("/v1/conversations/{conversation_id}", self.update, methods=["POST"]),
            Route("/v1/conversations/{conversation_id}", self.delete, methods=["DELETE"]),
            Route("/v1/conversations/{conversation_id}/items", self.list_items, methods=["GET"]),
            Route("/v1/conversations/{conversation_id}/items", self.add_items, methods=["POST"]),
            Route("/v1/conversations/{conversation_id}/items/{item_id}", self.item, methods=["GET"]),
            Route("/v1/conversations/{conversation_id}/items/{item_id}", self.delete_item, methods=["DELETE"]),
        ]

    async def _conversation(self, request: Request) -> Conversation:
        conversation_id = request.path_params["conversation_id"]
        conversation = await run_in_threadpool(self.store.conversation, conversation_id)
        if conversation is None:
            raise _missing(conversation_id)
        return conversation

    async def create(self, request: Request) -> Response:
        """``POST /v1/conversations``: a new conversation, with its first items and metadata."""
        self.authorize(request)
        body = await self.read_json(request)
        metadata = parse_metadata(body.get("metadata"))
        items = _new_items(body, required=False)
        try:
            conversation = await run_in_threadpool(self.store.create_conversation, new_id("conv"), metadata, items)
        except StoreFull as full:
            raise _full(full) from None
        return JSONResponse(conversation.as_object())

    async def retrieve(self, request: Request) -> Response:
        """``GET /v1/conversations/{id}``."""
        self.authorize(request)
        return JSONResponse((await self._conversation(request)).as_object())

    async def update(self, request: Request) -> Response:
        """``POST /v1/conversations/{id}``: replace its metadata."""
        self.authorize(request)
        body = await self.read_json(request)
        if "metadata" not in body:
            raise ApiError(400, "metadata is required", param="metadata")
        conversation_id = request.path_params["conversation_id"]
        updated = await run_in_threadpool(
            self.store.update_conversation, conversation_id, parse_metadata(body["metadata"])
        )
        if updated is None:
            raise _missing(conversation_id)
        return JSONResponse(updated.as_object())

    async def delete(self, request: Request) -> Response:
        """``DELETE /v1/conversations/{id}``: forget it and its items."""
        self.authorize(request)
        conversation_id = request.path_params["conversation_id"]
        if not await run_in_threadpool(self.store.delete_conversation, conversation_id):
            raise _missing(conversation_id)
        return JSONResponse({"id": conversation_id, "object": "conversation.deleted", "deleted": True})

    async def list_items(self, request: Request) -> Response:
        """``GET /v1/conversations/{id}/items``: a page of items (``after``, ``limit``, ``order``: desc by default)."""
        self.authorize(request)
        _check_include(request)
        conversation_id = request.path_params["conversation_id"]
        query = request.query_params
        order = query.get("order", "desc")
        if order not in ("asc", "desc"):
            raise ApiError(400, "order must be asc or desc", param="order")
        limit_text = query.get("limit", str(DEFAULT_PAGE))
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_PAGE:
            raise ApiError(400, f"limit must be between 1 and {MAX_PAGE}", param="limit")
        after = query.get("after")
        try:
            page = await run_in_threadpool(
                lambda: self.store.items_page(
                    conversation_id, limit=int(limit_text), after=after, newest_first=order == "desc"
                )
            )
        except KeyError:
            raise ApiError(400, f"after: no item {str(after)[:80]!r} in the conversation", param="after") from None
        if page is None:
            raise _missing(conversation_id)
        return JSONResponse(_list(*page))

    async def add_items(self, request: Request) -> Response:
        """``POST /v1/conversations/{id}/items``: append up to 20 items; answers the items as stored."""
        self.authorize(request)
        _check_include(request)
        body = await self.read_json(request)
        conversation_id = request.path_params["conversation_id"]
        items = _new_items(body, required=True)
        try:
            added = await run_in_threadpool(self.store.add_items, conversation_id, items)
        except StoreFull as full:
            raise _full(full) from None
        if not added:
            raise _missing(conversation_id)
        return JSONResponse(_list(items, False))

    async def item(self, request: Request) -> Response:
        """``GET /v1/conversations/{id}/items/{item_id}``."""
        self.authorize(request)
        _check_include(request)
        conversation = await self._conversation(request)
        item_id = request.path_params["item_id"]
        item = await run_in_threadpool(self.store.item, conversation.id, item_id)
        if item is None:
            raise ApiError(404, f"no item {item_id[:80]!r} in the conversation", param="item_id", code="not_found")
        return JSONResponse(item)

    async def delete_item(self, request: Request) -> Response:
        """``DELETE /v1/conversations/{id}/items/{item_id}``: answers the conversation."""
        self.authorize(request)
        conversation = await self._conversation(request)
        item_id = request.path_params["item_id"]
        if not await run_in_threadpool(self.store.delete_item, conversation.id, item_id):
            raise ApiError(404, f"no item {item_id[:80]!r} in the conversation", param="item_id", code="not_found")
        return JSONResponse(conversation.as_object())
