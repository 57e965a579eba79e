"""What a fault sees at the seams where it acts, as the fault modules name it.

The faults sit below the serving code that calls them, so they never import it: at each seam
the serving code hands them its own objects, and these protocols say which members the faults
read or set. `Answer` is the finished answer at the reply seam (http/headers.py: `Reply`),
`Request` what that seam knows of the request (http/headers.py: `Exchange`), `Server` the
sandbox at the admin-action and endpoint seams (state/context.py: `Sandbox`), `Caller` the
caller at the scope step (state/accounts.py: `Caller`), `Check` one request's run through the
order of checks at the authentication step seam (auth.py: `Check`). The store and its records
(films, playlists, episodes, licences: state/store.py) pass through as `Store` and `Record`: a
fault reads a field or two and hands them back to the store, so they are not spelled out here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["Answer", "Caller", "Check", "Record", "Request", "Server", "Store"]

Store = Any  # state/store.py: Store
Record = Any  # state/store.py: Film, Playlist, Episode, Licence


class Answer(Protocol):
    """A finished answer: the faults of the reply seam bend it in place."""

    status: int
    body: bytes
    headers: list[tuple[bytes, bytes]]


class Request(Protocol):
    """The request an answer is for: its id, base URL, endpoint, caller, and notes that a
    request-side fault leaves for the reply seam (`extra`)."""

    request_id: str
    base_url: str
    endpoint: str | None
    extra: dict[str, Any]
    version: str  # the version the answer announces
    omit_version: bool  # the answer carries no Service-Version

    @property
    def caller(self) -> Any: ...


class Caller(Protocol):
    """Who is calling, as the scope step weighs it."""

    @property
    def scopes(self) -> frozenset[str]: ...

    @property
    def app_id(self) -> str | None: ...


class Server(Protocol):
    """The sandbox: its switch, store, accounts, limits, versions and outages (areas out), its
    clock, and `later` (an action run after a delay; a reset cancels it)."""

    @property
    def faults(self) -> FaultSwitch: ...

    @property
    def store(self) -> Store: ...

    @property
    def accounts(self) -> Any: ...

    @property
    def limits(self) -> Any: ...

    @property
    def versions(self) -> Any: ...

    @property
    def outages(self) -> set[str]: ...

    def now(self) -> float: ...

    def later(
        self, seconds: float, action: Callable[..., object], *args: object, org: str | None = None
    ) -> None: ...


class Check(Protocol):
    """One request's run through the order of checks (auth.py), as the step seam sees it: what
    the steps have learnt so far (the key, its record, the caller, the scopes and the counter the
    next steps weigh, all of which a fault may change before a step runs), a step of the table
    run by name (`step`), a refusal made (`refusal`) or answered in the endpoint's format, or in
    the other one with another code (`answer`), a Service-Simulate scenario answered (`simulate`),
    and the version an answer announces set (`use_version`)."""

    endpoint: Any  # auth.py: Endpoint (name, scope, counter)
    version_header: str | None
    authorization: str | None
    key: str | None
    record: Any  # state/accounts.py: KeyRecord, None until the key is looked up
    caller: Any  # state/accounts.py: Caller, None until the key's version is known
    scopes: frozenset[str]
    counter: tuple[str, str] | None  # (whose counter, which counter) the rate limit draws from

    @property
    def faults(self) -> FaultSwitch: ...

    @property
    def format(self) -> str: ...  # "flat" or "envelope": the endpoint's error format

    @property
    def versions(self) -> Any: ...  # http/versions.py: VersionSet

    def step(self, name: str) -> Any: ...

    def refusal(self, problem: str, *, upgrade: bool = False) -> Any: ...

    def answer(
        self, refusal: Any, *, error_code: str | None = None, code: int | None = None
    ) -> Any: ...

    def simulate(self, test_organisation: bool, *, beyond_table: bool = False) -> Any: ...

    def use_version(self, version: Any) -> None: ...
