"""Placeholder until the endpoint lands."""

from __future__ import annotations

from delivery_sandbox import errors
from delivery_sandbox.accounts import Caller
from delivery_sandbox.context import Sandbox
from delivery_sandbox.headers import Call, Exchange, Reply


async def handle_list(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    return errors.flat(exchange, sb.faults, 501, "not built yet")


async def handle_one(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    return errors.flat(exchange, sb.faults, 501, "not built yet")


async def handle_file(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    return errors.flat(exchange, sb.faults, 501, "not built yet")
