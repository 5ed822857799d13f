"""Turn an MCP ``CallToolResult`` into the text the model reads.

Text blocks are passed through; embedded text resources keep their text under a header line;
images, audio, binary resources and resource links become one descriptive placeholder line each
(the model cannot see them). A result with only ``structured_content`` is written as JSON.
"""

from __future__ import annotations

import json

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

NO_OUTPUT = "(the tool returned no output)"


def _decoded_size(data: str) -> int:
    """The byte size of base64 ``data`` without decoding it."""
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def block_text(block: object) -> str:
    """One content block as text for the model."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image: {block.mime_type}, {_decoded_size(block.data):,} bytes, not shown]"
    if isinstance(block, AudioContent):
        return f"[audio: {block.mime_type}, {_decoded_size(block.data):,} bytes, not shown]"
    if isinstance(block, ResourceLink):
        kind = f", {block.mime_type}" if block.mime_type else ""
        return f"[resource link: {block.name} <{block.uri}>{kind}]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        kind = f", {resource.mime_type}" if resource.mime_type else ""
        if isinstance(resource, TextResourceContents):
            return f"[resource <{resource.uri}>{kind}]\n{resource.text}"
        if isinstance(resource, BlobResourceContents):
            size = _decoded_size(resource.blob)
            return f"[resource <{resource.uri}>{kind}: {size:,} bytes of binary data, not shown]"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content, not shown]"


def result_text(result: CallToolResult) -> str:
    """All of a result's content as one text (not yet capped)."""
    parts = [block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts) if parts else NO_OUTPUT
