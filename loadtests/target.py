"""The target of a campaign: its profile, /config, the admin API and its clock.

Only the target's own base URL and admin URL are ever called. Keys and the admin token are
sent as headers and never written anywhere.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from delivery_conformance.exceptions import ProfileError
from delivery_conformance.load.verdict import ExitCode
from delivery_conformance.target.profile import TargetProfile, load_profile

__all__ = ["CampaignError", "Target"]


TENANT_PREFIX = "tenant:"
CONFIG_WAIT_S = 61.0  # the longest Retry-After of a clock-minute counter, and one second


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class CampaignError(Exception):
    """A campaign cannot run against this target; the message is one line, with no secret."""

    def __init__(self, message: str, exit_code: int = ExitCode.INVALID) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Target:
    def __init__(self, profile: TargetProfile, timeout: float = 10.0) -> None:
        self.profile = profile
        self._http = httpx.Client(timeout=timeout)

    @classmethod
    def from_file(cls, path: str | Path) -> Target:
        try:
            return cls(load_profile(path))
        except ProfileError as error:
            raise CampaignError(str(error), exit_code=2) from None

    @property
    def base_url(self) -> str:
        return self.profile.base_url

    def key(self, role: str) -> str:
        """The key of a role of [keys], or `tenant:N` (the N-th key of [tenants], from 1) and
        `tenant:idle` (its idle key)."""
        if role.startswith(TENANT_PREFIX):
            return self._tenant_key(role[len(TENANT_PREFIX) :])
        if role not in self.profile.keys:
            raise CampaignError(f"the profile has no key for role {role!r}")
        return self.profile.keys[role]

    def _tenant_key(self, which: str) -> str:
        tenants, idle = self.profile.tenants, self.profile.tenant_idle
        if not tenants:
            raise CampaignError(
                "the profile has no [tenants] (keys of the tenants campaign's organisations; "
                "delivery-sandbox --tenants N writes them)",
                exit_code=ExitCode.USAGE,
            )
        if which == "idle" and idle is not None:
            return idle
        if which.isdigit() and 1 <= int(which) <= len(tenants):
            return tenants[int(which) - 1]
        raise CampaignError(f"the profile's [tenants] has no key {which!r}")

    @property
    def tenants(self) -> int:
        """How many organisations [tenants] lists (the idle one aside)."""
        return len(self.profile.tenants)

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key(role)}"}

    def config(self, role: str) -> dict[str, Any]:
        url = f"{self.base_url}/api/delivery/v1/config"
        for attempt in (1, 2):
            try:
                answer = self._http.get(url, headers=self.headers(role))
            except httpx.HTTPError as error:
                raise CampaignError(f"GET /config failed: {type(error).__name__}") from None
            # the config counter spent by an earlier campaign: wait out its minute, once
            wait = _seconds(answer.headers.get("Retry-After"))
            if answer.status_code != 429 or attempt == 2 or wait is None or wait > CONFIG_WAIT_S:
                break
            time.sleep(wait + 0.2)
        if answer.status_code != 200:
            raise CampaignError(f"GET /config answered {answer.status_code} for role {role}")
        try:
            body = answer.json()
        except ValueError:
            raise CampaignError("GET /config did not answer JSON") from None
        if not isinstance(body, dict):
            raise CampaignError("GET /config did not answer a JSON object")
        return body

    def round_trip(self, samples: int = 7) -> dict[str, float]:
        """Round trip to the target, measured with requests no counter sees (spec: Limits, only
        requests with a valid key are counted): GET /catalog without a key answers 401."""
        url = f"{self.base_url}/api/delivery/v1/catalog"
        times = []
        for _ in range(samples):
            before = time.perf_counter()
            try:
                self._http.get(url)
            except httpx.HTTPError as error:
                raise CampaignError(f"round-trip probe failed: {type(error).__name__}") from None
            times.append(time.perf_counter() - before)
        times.sort()
        return {
            "median_s": round(times[len(times) // 2], 6),
            "max_s": round(times[-1], 6),
            "min_s": round(times[0], 6),
            "samples": samples,
        }

    def check_test_organisation(self, config: dict[str, Any], allow_production: bool) -> None:
        """spec: GET /config key.test_organisation. Production needs an explicit opt-in."""
        key = config.get("key")
        is_test = isinstance(key, dict) and key.get("test_organisation") is True
        if not is_test and not allow_production:
            raise CampaignError(
                "refused: /config says this key is not a test organisation "
                "(pass --allow-production to load a production organisation)",
                exit_code=2,
            )

    @property
    def has_admin(self) -> bool:
        return self.profile.admin is not None

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        admin = self.profile.admin
        if admin is None:
            raise CampaignError("this campaign needs the admin API ([admin] in the profile)")
        headers = {"Authorization": f"Bearer {admin.token}"}
        try:
            answer = self._http.request(
                method,
                f"{admin.url}/{path}",
                headers=headers,
                json=body if method == "POST" else None,
            )
        except httpx.HTTPError as error:
            raise CampaignError(f"admin {path} failed: {type(error).__name__}") from None
        if answer.status_code != 200:
            raise CampaignError(f"admin {path} answered {answer.status_code}")
        return answer.json()

    def role_action(self, role: str, action: str, body: dict[str, Any] | None = None) -> Any:
        return self.admin("POST", f"roles/{role}/{action}", body or {})

    def clock_offset(self) -> float:
        """Target clock minus generator clock (0 without an admin API: clocks assumed in sync)."""
        if not self.has_admin:
            return 0.0
        before = time.time()
        state = self.admin("GET", "state")
        after = time.time()
        try:
            now = float(state["clock"]["now"])
        except (KeyError, TypeError, ValueError):
            return 0.0
        return now - (before + after) / 2

    def advance_clock(self, seconds: float) -> None:
        self.admin("POST", "clock", {"advance": seconds})

    def close(self) -> None:
        self._http.close()
