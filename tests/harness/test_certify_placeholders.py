"""The built-in {placeholders} of certify-client name what they say: each one the embedded
sandbox supplies is resolved against that sandbox and checked for its kind through the API
(Resources > Episode, Creative record; Endpoints > POST /playback), so a flow is never handed a
film where it asked for an episode."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from delivery_conformance.certify.plan import load_plan, parse_plan
from delivery_conformance.certify.runner import Upstream, _fill, _values, embedded_upstream
from delivery_conformance.exceptions import UsageError
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile

API = "/api/delivery/v1"
NODE_PLAN = Path(__file__).parent / "independent_clients" / "node" / "plan.toml"


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with EmbeddedSandbox() as profile_path:
        yield embedded_upstream(load_profile(profile_path, environ={}))


def call(upstream: Upstream, flow: str, method: str, path: str, body: Any = None) -> Any:
    headers = {"Authorization": f"Bearer {upstream.keys[flow]}"}
    response = httpx.request(method, upstream.base_url + API + path, json=body,
                             headers=headers, timeout=30)  # fmt: skip
    assert response.status_code == 200, (path, response.status_code, response.text[:200])
    return response.json()


def ready_episode(upstream: Upstream, value: str) -> dict[str, Any]:
    """`value` is the id of an episode of the catalog (not a film), published, stream-ready,
    with a ready video."""
    catalog = call(upstream, "catalog", "GET", "/catalog")
    assert value not in {f["id"] for f in catalog["films"]}, f"{value} is a film id"
    episode = next((e for e in catalog["episodes"] if e["id"] == value), None)
    assert episode is not None, f"{value} is not an episode of the catalog"
    assert episode["status"] == "published" and episode["stream_ready"] is True
    assert episode["vid_ready"] is True
    return dict(episode)


def check_episode(upstream: Upstream) -> None:
    ready_episode(upstream, upstream.vars["episode"])
    ticket = call(upstream, "playback", "POST", "/playback",
                  {"episode_id": upstream.vars["episode"]})  # fmt: skip
    assert ticket.get("manifest_url") and "play_auth_token" not in ticket  # signed-url-only


def check_episode_2(upstream: Upstream) -> None:
    first = ready_episode(upstream, upstream.vars["episode"])
    second = ready_episode(upstream, upstream.vars["episode_2"])
    assert second["id"] != first["id"]
    batch = [{"episode_id": upstream.vars["episode"]}, {"episode_id": upstream.vars["episode_2"]}]
    answer = call(upstream, "playback", "POST", "/playback", {"episodes": batch})
    assert [item["status"] for item in answer["items"]] == [200, 200], answer


def check_creative(upstream: Upstream) -> None:
    record = call(upstream, "creatives", "GET", f"/creatives/{upstream.vars['creative']}")["data"]
    assert record["creative_id"] == upstream.vars["creative"]
    assert record["final"]["ready"] is True and record["final"]["file_url"]


def check_episode_encrypted(upstream: Upstream) -> None:
    ready_episode(upstream, upstream.vars["episode_encrypted"])
    device = {"union_info": upstream.vars["union_info"], "drm_kek": upstream.vars["drm_kek"]}
    ticket = call(upstream, "playback", "POST", "/playback",
                  {"episode_id": upstream.vars["episode_encrypted"], **device})  # fmt: skip
    assert ticket["protection"] == "private-encrypted" and ticket["play_auth_token"]


def check_device(upstream: Upstream) -> None:
    """Device values of the player SDK's shape: accepted with the encrypted episode (above);
    alone they are strings of 8 or more characters that look like no null word."""
    for name in ("union_info", "drm_kek"):
        value = upstream.vars[name]
        assert len(value.strip()) >= 8 and value.lower() not in ("null", "none", "undefined")


CHECKS: dict[str, Callable[[Upstream], None]] = {
    "episode_encrypted": check_episode_encrypted,
    "union_info": check_device,
    "drm_kek": check_device,
    "episode": check_episode,
    "episode_2": check_episode_2,
    "creative": check_creative,
}


def test_every_placeholder_the_sandbox_supplies_has_a_check(upstream: Upstream) -> None:
    assert set(upstream.vars) == set(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_placeholder_is_what_its_name_says(upstream: Upstream, name: str) -> None:
    CHECKS[name](upstream)


def test_plan_dir_names_the_folder_of_the_plan_file_in_flows_and_vars(tmp_path: Path) -> None:
    """`{plan_dir}`: the absolute folder of the plan file, shell-quoted, filled in flows and
    in [vars] values; shell text of a var (`${HOME}`) is left as written."""
    folder = tmp_path / "my client"
    folder.mkdir()
    (folder / "plan.toml").write_text(
        '[vars]\nclient = "node {plan_dir}/partner.mjs ${HOME:-x}"\n'
        '[flows]\ncatalog = "{client} pull --state {state}/s.json"\n'
        'config = "ls {plan_dir}"\n',
        encoding="utf-8",
    )
    plan = load_plan(folder / "plan.toml")
    assert plan.plan_dir == str(folder.resolve())
    values = _values({"episode": "ep_1"}, plan, tmp_path / "state")
    quoted = shlex.quote(str(folder.resolve()))
    assert _fill(plan.flows["catalog"], values, "catalog") == (
        f"node {quoted}/partner.mjs ${{HOME:-x}} pull --state "
        f"{shlex.quote(str(tmp_path / 'state'))}/s.json"
    )
    assert _fill(plan.flows["config"], values, "config") == f"ls {quoted}"
    shell = subprocess.run(["/bin/sh", "-c", _fill("cd {plan_dir} && ls", values, "x")],
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert shell.stdout.split() == ["plan.toml"]


def test_plan_dir_is_refused_when_the_plan_came_from_no_file() -> None:
    plan = parse_plan({"flows": {"config": "ls {plan_dir}"}})
    assert plan.plan_dir is None
    with pytest.raises(UsageError, match="plan_dir"):
        _fill(plan.flows["config"], _values({}, plan, Path("/tmp")), "flow config")


def test_the_node_plan_names_its_client_through_plan_dir() -> None:
    plan = load_plan(NODE_PLAN)
    assert "{plan_dir}" in plan.vars["client"] and "PARTNER_NODE_DIR" not in plan.text
    command = _fill(plan.flows["config"], _values({}, plan, Path("/tmp")), "config")
    assert command.split()[:3] == ["node", f"{NODE_PLAN.parent.resolve()}/partner.mjs",
                                   "show-config"]  # fmt: skip
