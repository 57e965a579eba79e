"""A client for the sandbox admin API (ARCHITECTURE.md > Sandbox admin API), or a partner's
equivalent at the URL of the profile's `[admin]` table.

    admin.reset(); admin.revoke("films"); admin.clock(advance=60); admin.set_faults(only=[...])

Every call goes through a `DeliveryClient` (so it is recorded and redacted like the rest) and
raises `HarnessFailure` when the admin API does not answer 2xx with JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from delivery_conformance.exceptions import HarnessFailure
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.profile import AdminEndpoint

__all__ = ["AdminClient", "has_organisation_clocks", "restores_own_data"]


class AdminClient:
    def __init__(
        self, endpoint: AdminEndpoint, client: DeliveryClient, *, organisation_clocks: bool = False
    ) -> None:
        self._token = endpoint.token
        self._prefix = urlsplit(endpoint.url).path.rstrip("/")
        self._client = client
        # The admin API keeps a clock per organisation (`POST clock` with a role moves one
        # alone; `has_organisation_clocks`): `clock(..., role=)` and `now(role)` then use it.
        self.organisation_clocks = organisation_clocks
        # role -> the role acted on instead (the twin organisation a limit scenario holds on
        # several workers, as `DeliveryClient.role_aliases`); `changed` names the role asked for.
        self.role_aliases: Mapping[str, str] = {}
        # What the calls since the last reset changed: "role:<name>" for an organisation's keys,
        # limits or suspension, else the area ("clock", "series", "licences", ...). A scenario
        # that declares it changes only the limits organisation is held to it (suite/plugin.py).
        self.changed: set[str] = set()

    def close(self) -> None:
        self._client.close()

    def call(self, method: str, path: str, body: Any = None) -> Any:
        sent_path, sent_body = self._aliased(path, body)
        response = self._client.request(
            method, f"{self._prefix}/{sent_path.lstrip('/')}", key=self._token, json=sent_body
        )
        if not 200 <= response.status_code < 300:
            raise HarnessFailure(f"admin {method} {path} answered {response.status_code}")
        if method != "GET":
            area, _, rest = path.strip("/").partition("/")
            if area == "reset":
                self.changed.clear()
            elif area == "clock" and isinstance(body, dict) and "role" in body:
                self.changed.add(f"role:{body['role']}")  # that organisation's clock alone
            else:
                self.changed.add(f"role:{rest.partition('/')[0]}" if area == "roles" else area)
        return response.json_body() if response.content else None

    def _aliased(self, path: str, body: Any) -> tuple[str, Any]:
        """`roles/<role>/...` and a clock's `role`, with the role stood in for by its alias."""
        if not self.role_aliases:
            return path, body
        parts = path.strip("/").split("/")
        if len(parts) >= 2 and parts[0] == "roles":
            parts[1] = self.role_aliases.get(parts[1], parts[1])
            path = "/".join(parts)
        if isinstance(body, dict) and isinstance(body.get("role"), str):
            body = {**body, "role": self.role_aliases.get(body["role"], body["role"])}
        return path, body

    def state(self) -> Any:
        return self.call("GET", "state")

    def reset(self) -> Any:
        return self.call("POST", "reset", {})

    def clock(
        self, *, advance: float | None = None, set_to: float | None = None, role: str | None = None
    ) -> Any:
        """Move the target's clock; with `role`, only that role's organisation's where the admin
        API keeps a clock per organisation (else the whole target's: the caller holds it)."""
        body: dict[str, Any] = {"advance": advance} if advance is not None else {"set": set_to}
        if role is not None and self.organisation_clocks:
            body["role"] = role
        return self.call("POST", "clock", body)

    def now(self, role: str | None = None) -> float | None:
        """The target's time as `role`'s requests see it (None: the admin API does not say)."""
        state = self.state()
        clock = state.get("clock") if isinstance(state, dict) else None
        if not isinstance(clock, dict):
            return None
        roles = clock.get("roles")
        asked = self.role_aliases.get(role, role) if role else None
        seen = (
            roles.get(asked)
            if asked and self.organisation_clocks and isinstance(roles, dict)
            else None
        )
        seen = clock.get("now") if seen is None else seen
        return float(seen) if _is_time(seen) else None

    def revoke(self, role: str) -> Any:
        return self.call("POST", f"roles/{role}/revoke", {})

    def rotate(self, role: str) -> str:
        answer = self.call("POST", f"roles/{role}/rotate", {})
        if not isinstance(answer, dict) or not isinstance(answer.get("key"), str):
            raise HarnessFailure(f"admin rotate {role} did not answer a key")
        return str(answer["key"])

    def suspend(self, role: str) -> Any:
        return self.call("POST", f"roles/{role}/suspend", {})

    def unsuspend(self, role: str) -> Any:
        return self.call("POST", f"roles/{role}/unsuspend", {})

    def set_limit(self, role: str, counter: str, limit: int) -> Any:
        return self.call("POST", f"roles/{role}/limits", {"counter": counter, "limit": limit})

    def reset_limits(self, role: str) -> Any:
        return self.call("POST", f"roles/{role}/reset-limits", {})

    def restore(self, role: str) -> Any:
        """The role's organisation back to its start: limits, full counters, not suspended."""
        return self.call("POST", f"roles/{role}/restore", {})

    def withdraw_series(self, code: str) -> Any:
        return self.call("POST", f"series/{code}/withdraw", {})

    def withdraw_playlist(self, code: str) -> Any:
        return self.call("POST", f"playlists/{code}/withdraw", {})

    def licence(self, film_id: str, action: str) -> Any:
        """`end`, `suspend` or `restore` the `films` organisation's licence of a film."""
        return self.call("POST", f"licences/{film_id}/{action}", {})

    def episode(self, episode_id: str, action: str) -> Any:
        """`withdraw` or `publish` an episode."""
        return self.call("POST", f"episodes/{episode_id}/{action}", {})

    def subtitle(self, episode_id: str, lang: str, url: str) -> Any:
        """Attach a subtitle (its language and WebVTT file) to an episode, or replace the file of
        the one it has in that language."""
        return self.call("POST", f"episodes/{episode_id}/subtitles", {"lang": lang, "url": url})

    def outage(self, area: str, on: bool) -> Any:
        """Switch a named outage (`catalog`, `config`, `series`, `playlists`, `creatives`,
        `licences`)."""
        return self.call("POST", "outages", {"area": area, "on": on})

    def faults(self) -> Any:
        return self.call("GET", "faults")

    def set_faults(
        self,
        *,
        enable: list[str] | None = None,
        disable: list[str] | None = None,
        only: list[str] | None = None,
    ) -> Any:
        body = (
            {"only": only}
            if only is not None
            else {"enable": enable or [], "disable": disable or []}
        )
        return self.call("POST", "faults", body)


def has_organisation_clocks(state: Any) -> bool:
    """Whether an admin API's `GET state` shows a clock per role (the sandbox's since the clock
    could move for one organisation alone): `clock.roles`, each a number."""
    clock = state.get("clock") if isinstance(state, dict) else None
    roles = clock.get("roles") if isinstance(clock, dict) else None
    return isinstance(roles, dict) and bool(roles) and all(map(_is_time, roles.values()))


def restores_own_data(state: Any) -> bool:
    """Whether an admin API's `GET state` says a role's restore also puts back what the role's
    organisation alone sees (its own films and creatives): `role_restore` lists `own_data`."""
    listed = state.get("role_restore") if isinstance(state, dict) else None
    return isinstance(listed, list) and "own_data" in listed


def _is_time(value: object) -> TypeGuard[int | float]:
    """An epoch in seconds as the admin API's JSON gives it: a number, never a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool)
