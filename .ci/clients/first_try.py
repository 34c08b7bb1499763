"""A stock MCP client's first session with the bridge, through the official Python MCP SDK:
search -> get_product -> create_cart with NO meta anywhere, as any generic client sends.

    first_try.py http URL            streamable HTTP, straight to the bridge
    first_try.py stdio CMD [ARGS...] stdio, e.g. through `mcp-remote URL`

Exits non-zero (with the reason) if any step fails, if an answer lacks what it should carry,
or if the bridge did not say it served the call as its default agent profile.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def structured(result, tool):
    if result.is_error:
        raise SystemExit(f"{tool} failed: {result.content}")
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def said_default_profile(answer, tool):
    codes = [message.get("code") for message in answer.get("messages", [])]
    if "default_profile" not in codes:
        raise SystemExit(f"{tool}: no default_profile notice in {codes}")


async def shop(session):
    await session.initialize()
    tools = {tool.name for tool in (await session.list_tools()).tools}
    for tool in ("search_catalog", "get_product", "create_cart"):
        if tool not in tools:
            raise SystemExit(f"tool {tool} not listed: {sorted(tools)}")

    found = structured(
        await session.call_tool("search_catalog", {"catalog": {"query": "running shoes"}}),
        "search_catalog",
    )
    said_default_profile(found, "search_catalog")
    if not found.get("products"):
        raise SystemExit(f"search_catalog found nothing: {found}")
    product_id = found["products"][0]["id"]

    detail = structured(
        await session.call_tool("get_product", {"catalog": {"id": product_id}}),
        "get_product",
    )
    variants = [
        variant for variant in detail["product"]["variants"]
        if variant["availability"]["available"]
    ]
    if not variants:
        raise SystemExit(f"get_product {product_id}: no available variant")

    cart = structured(
        await session.call_tool(
            "create_cart",
            {"cart": {"line_items": [{"item": {"id": variants[0]["id"]}, "quantity": 1}]}},
        ),
        "create_cart",
    )
    said_default_profile(cart, "create_cart")
    if not cart.get("continue_url") or cart["line_items"][0]["quantity"] != 1:
        raise SystemExit(f"create_cart: unexpected cart {cart}")
    print(f"search -> {product_id} -> {variants[0]['id']} -> cart {cart['id']} "
          f"(continue_url {cart['continue_url']})")


async def main(argv):
    if len(argv) >= 2 and argv[0] == "http":
        async with streamable_http_client(argv[1]) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await shop(session)
    elif len(argv) >= 2 and argv[0] == "stdio":
        server = StdioServerParameters(command=argv[1], args=argv[2:])
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                await shop(session)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1:]), timeout=60))
