"""Organisations, key roles and API keys (spec: Authentication; ARCHITECTURE: Key roles).

The roles table is the contract with the harness: each role names an organisation, scopes,
whether the key is bound to an app, and its version pin. Keys are minted at start from an
injected random source; `reset` brings back the keys written to the profile.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, replace
from enum import StrEnum, auto

__all__ = [
    "CHANGES_ORGANISATION",
    "IDLE_TENANT",
    "LIMITS_TWINS",
    "LIMITS_TWIN_SUFFIXES",
    "MAX_TENANTS",
    "ORGANISATIONS",
    "ROLES",
    "Accounts",
    "Caller",
    "KeyRecord",
    "Organisation",
    "RoleSpec",
    "Tenants",
    "tenant_role",
]

KEY_PREFIX = "svc_live_"
# The pairs of organisations like `org_limits` / `org_limits_videos` (roles `limits_<suffix>`,
# `limits_videos_<suffix>`): with the limits pair itself, a pool of four on several workers.
LIMITS_TWIN_SUFFIXES = ("b", "c", "d")
# The organisation of the role `films_changes` (its film and creatives: state/seed.py).
CHANGES_ORGANISATION = "org_films_changes"
KEY_ALPHABET = string.ascii_letters + string.digits


class OrgKind(StrEnum):
    """What an organisation licenses: films (catalog, series, playback) or open videos."""

    FILMS = auto()
    VIDEOS = auto()


class Pin(StrEnum):
    """The Service-Version a key is pinned to, by its life cycle (spec: Versioning)."""

    LATEST = auto()
    RETIRED = auto()
    DEPRECATED = auto()


@dataclass(frozen=True)
class Organisation:
    """A seeded organisation: what it licenses, whether it is a test organisation (spec:
    Simulated responses) and the media space its signed links point into."""

    id: str
    slug: str
    name: str
    kind: OrgKind
    test: bool
    space: str | None  # own media space; None: the shared space


ORGANISATIONS: dict[str, Organisation] = {
    o.id: o
    for o in (
        Organisation(
            "org_films", "films-test", "Films Test Org", OrgKind.FILMS, True, "space-films-test"
        ),
        Organisation(
            "org_videos",
            "videos-test",
            "Videos Test Org",
            OrgKind.VIDEOS,
            True,
            "space-videos-test",
        ),
        Organisation(
            "org_suspended", "suspended-test", "Suspended Test Org", OrgKind.FILMS, True, None
        ),
        Organisation(
            "org_unlicensed", "unlicensed-test", "Unlicensed Test Org", OrgKind.FILMS, True, None
        ),
        Organisation("org_production", "production", "Production Org", OrgKind.FILMS, False, None),
        Organisation("org_limits", "limits-test", "Limits Test Org", OrgKind.FILMS, True, None),
        Organisation(
            "org_videos_other",
            "videos-other-test",
            "Second Videos Test Org",
            OrgKind.VIDEOS,
            True,
            "space-videos-other",
        ),
        Organisation(
            "org_limits_videos",
            "limits-videos-test",
            "Limits Videos Test Org",
            OrgKind.VIDEOS,
            True,
            "space-limits-videos",
        ),
        # A film organisation with a film licensed to it alone and creatives of its own: the
        # scenarios that change a film, an episode or a creative change these, beside the others.
        Organisation(
            CHANGES_ORGANISATION,
            "films-changes-test",
            "Films Changes Test Org",
            OrgKind.FILMS,
            True,
            None,
        ),
        # More pairs like the limits ones: on several workers, a limit scenario on each at a time.
        *(
            organisation
            for suffix in LIMITS_TWIN_SUFFIXES
            for organisation in (
                Organisation(
                    f"org_limits_{suffix}",
                    f"limits-{suffix}-test",
                    f"Limits {suffix.upper()} Test Org",
                    OrgKind.FILMS,
                    True,
                    None,
                ),
                Organisation(
                    f"org_limits_videos_{suffix}",
                    f"limits-videos-{suffix}-test",
                    f"Limits Videos {suffix.upper()} Test Org",
                    OrgKind.VIDEOS,
                    True,
                    f"space-limits-videos-{suffix}",
                ),
            )
        ),
    )
}
# Organisations that license, and are granted, what `org_limits` / `org_limits_videos` are.
LIMITS_TWINS = {
    f"org_limits{kind}_{suffix}": f"org_limits{kind}"
    for suffix in LIMITS_TWIN_SUFFIXES
    for kind in ("", "_videos")
}
SUSPENDED_AT_START = frozenset({"org_suspended"})

FILM_SCOPES = ("metadata:read", "playback", "creatives:export")
ALL_SCOPES = (*FILM_SCOPES, "videos:read", "webhooks:manage")
VIDEO_SCOPES = ("metadata:read", "videos:read")


@dataclass(frozen=True)
class RoleSpec:
    role: str
    org_id: str
    scopes: tuple[str, ...]
    app_id: str | None = None
    revoked: bool = False
    unverifiable: bool = False
    pin: Pin = Pin.LATEST


# ARCHITECTURE: Key roles.
ROLES: dict[str, RoleSpec] = {
    r.role: r
    for r in (
        RoleSpec("films", "org_films", FILM_SCOPES),
        RoleSpec("films_metadata", "org_films", ("metadata:read",)),
        RoleSpec("films_playback", "org_films", ("playback",)),
        RoleSpec("films_creatives", "org_films", ("creatives:export",)),
        RoleSpec("webhooks", "org_films", ("webhooks:manage",)),
        RoleSpec("revoked", "org_films", FILM_SCOPES, revoked=True),
        RoleSpec("videos", "org_videos", VIDEO_SCOPES, app_id="app_videos_cms"),
        RoleSpec("videos_unbound", "org_videos", VIDEO_SCOPES),
        RoleSpec("videos_other", "org_videos_other", VIDEO_SCOPES, app_id="app_videos_other"),
        RoleSpec("suspended", "org_suspended", ALL_SCOPES, app_id="app_suspended"),
        RoleSpec("unlicensed", "org_unlicensed", FILM_SCOPES),
        RoleSpec("production", "org_production", FILM_SCOPES),
        RoleSpec("unverifiable", "org_films", FILM_SCOPES, unverifiable=True),
        RoleSpec("limits", "org_limits", FILM_SCOPES),
        RoleSpec("limits_videos", "org_limits_videos", ("videos:read",), app_id="app_limits"),
        RoleSpec("retired_pin", "org_films", FILM_SCOPES, pin=Pin.RETIRED),
        RoleSpec("deprecated_pin", "org_films", FILM_SCOPES, pin=Pin.DEPRECATED),
        *(
            spec
            for suffix in LIMITS_TWIN_SUFFIXES
            for spec in (
                RoleSpec(f"limits_{suffix}", f"org_limits_{suffix}", FILM_SCOPES),
                RoleSpec(
                    f"limits_videos_{suffix}",
                    f"org_limits_videos_{suffix}",
                    ("videos:read",),
                    app_id=f"app_limits_{suffix}",
                ),
            )
        ),
        RoleSpec("films_changes", CHANGES_ORGANISATION, FILM_SCOPES),
    )
}
EXTENDED_ONLY = frozenset({"retired_pin", "deprecated_pin"})

# `delivery-sandbox --tenants N`: N more test organisations for the `tenants` load campaign,
# each with its own counters, plus one idle organisation (roles tenant_01.. and tenant_idle).
MAX_TENANTS = 200
IDLE_TENANT = "tenant_idle"
TENANT_LICENCES_OF = "org_limits"  # each tenant licenses what the `limits` organisation does


def tenant_role(number: int) -> str:
    """The role of tenant organisation `number` (1-based): tenant_01, tenant_02..."""
    return f"tenant_{number:02d}"


@dataclass(frozen=True)
class Tenants:
    """The organisations `--tenants N` adds: their organisations and roles, the idle one last."""

    organisations: tuple[Organisation, ...]
    roles: tuple[RoleSpec, ...]

    @classmethod
    def make(cls, count: int) -> Tenants:
        if not 0 <= count <= MAX_TENANTS:
            raise ValueError(f"tenants: 0 to {MAX_TENANTS}, not {count}")
        if count == 0:
            return cls((), ())
        names = [tenant_role(k) for k in range(1, count + 1)] + [IDLE_TENANT]
        orgs = tuple(
            Organisation(
                f"org_{name}", name.replace("_", "-") + "-test", f"Tenant {name[7:]} Test Org",
                OrgKind.FILMS, True, None,
            )
            for name in names
        )  # fmt: skip
        pairs = zip(names, orgs, strict=True)
        roles = tuple(RoleSpec(name, org.id, FILM_SCOPES) for name, org in pairs)
        return cls(orgs, roles)

    @property
    def org_ids(self) -> tuple[str, ...]:
        return tuple(org.id for org in self.organisations)


@dataclass(frozen=True)
class KeyRecord:
    role: str
    org_id: str
    scopes: frozenset[str]
    pin: str
    app_id: str | None
    revoked: bool
    unverifiable: bool


@dataclass(frozen=True)
class Caller:
    """Who is calling, once the key is valid: handed to every handler (and to playback).

    Requirements: GEN-012.
    """

    role: str
    organisation: Organisation
    scopes: frozenset[str]
    pin: str
    app_id: str | None
    suspended: bool

    @property
    def org_id(self) -> str:
        return self.organisation.id

    @property
    def suspended_at_start(self) -> bool:
        """The organisation is one the seed suspends (not one suspended while running)."""
        return self.organisation.id in SUSPENDED_AT_START

    def __hash__(self) -> int:
        """The dataclass hash of the fields, computed once (callers are cache keys)."""
        found: int | None = self.__dict__.get("_hash")
        if found is None:
            found = hash(
                (self.role, self.organisation, self.scopes, self.pin, self.app_id, self.suspended)
            )
            object.__setattr__(self, "_hash", found)
        return found


def mint_key(rng: random.Random) -> str:
    """A key of the spec's form: `svc_live_` and 32 characters from the injected generator.

    Requirements: AUTH-005.
    """
    return KEY_PREFIX + "".join(rng.choice(KEY_ALPHABET) for _ in range(32))


class Accounts:
    """Keys by secret, roles, suspensions. Revoke and rotate take effect at once.

    Keys are managed only here, through the admin API (the portal's stand-in): the Delivery API
    itself has no key endpoint (AUTH-035).
    """

    def __init__(
        self,
        rng: random.Random,
        pins: dict[Pin, str],
        roles: list[str],
        tenants: Tenants | None = None,
    ) -> None:
        self._rng = rng
        self.tenants = tenants or Tenants((), ())
        self.organisations = ORGANISATIONS | {o.id: o for o in self.tenants.organisations}
        self.roles = ROLES | {r.role: r for r in self.tenants.roles}
        self._start: dict[str, KeyRecord] = {}
        for name in [*roles, *(r.role for r in self.tenants.roles)]:
            spec = self.roles[name]
            self._start[mint_key(rng)] = KeyRecord(
                spec.role,
                spec.org_id,
                frozenset(spec.scopes),
                pins[spec.pin],
                spec.app_id,
                spec.revoked,
                spec.unverifiable,
            )
        self.keys: dict[str, KeyRecord] = {}
        self.suspended: set[str] = set()
        self._callers: dict[int, tuple[KeyRecord, Caller]] = {}
        self.reset()

    def reset(self) -> None:
        self.keys = dict(self._start)
        self.suspended = set(SUSPENDED_AT_START)
        self._callers = {}

    def start_keys(self) -> dict[str, str]:
        """role -> key as minted at start (the profile's `[keys]`)."""
        return {record.role: key for key, record in self._start.items()}

    def key_of(self, role: str) -> str:
        for key, record in self.keys.items():
            if record.role == role:
                return key
        raise KeyError(role)

    def caller(self, record: KeyRecord) -> Caller:
        """The caller of a key record, as of now (the suspension is read on every call).

        Requirements: FRESH-006, PLAY-067.
        """
        suspended = record.org_id in self.suspended
        found = self._callers.get(id(record))
        if found is not None and found[0] is record and found[1].suspended is suspended:
            return found[1]
        made = Caller(
            record.role,
            self.organisations[record.org_id],
            record.scopes,
            record.pin,
            record.app_id,
            suspended,
        )
        if len(self._callers) > 1024:
            self._callers.clear()
        self._callers[id(record)] = (record, made)  # holding the record keeps its id unique
        return made

    def revoke(self, role: str) -> None:
        """Revoke a key: it is refused from the next request on. (AUTH-007)

        Requirements: FRESH-008, FRESH-009, FRESH-011.
        """
        key = self.key_of(role)
        self.keys[key] = replace(self.keys[key], revoked=True)

    def rotate(self, role: str) -> str:
        """A new secret with the same label, scopes and pin; the old one stops at once.

        Requirements: AUTH-033, AUTH-034, VER-011.

        Requirements: FRESH-010, FRESH-011, FRESH-012.
        """
        key = self.key_of(role)
        record = self.keys.pop(key)
        if record.revoked:
            self.keys[key] = record
            raise PermissionError("a revoked key cannot be rotated")
        new = mint_key(self._rng)
        self.keys[new] = record
        return new

    def org_of(self, role: str) -> str:
        return self.roles[role].org_id
