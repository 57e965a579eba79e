"""The resource-field faults (faults/resource_fields.py): each row is in the one fault table,
breaks one rule, acts only on a 200 JSON body of its own endpoint, and leaves the body alone
when switched off."""

from __future__ import annotations

import orjson

from delivery_sandbox.faults.registry import FAULTS, FaultSwitch
from delivery_sandbox.faults.resource_fields import BODY_FAULTS, FAULT_ROWS, bend_body

CONFIG = orjson.dumps(
    {"api": {"latest_version": "2026-10-02"}, "links": {"docs": "https://d", "catalog": "x"}}
)


def test_every_row_is_a_fault_with_one_rule_and_a_change() -> None:
    assert {row[0] for row in FAULT_ROWS} == BODY_FAULTS.keys() <= FAULTS.keys()
    assert all(len(row[1]) == 1 for row in FAULT_ROWS)
    names = [row[0] for row in FAULT_ROWS]
    assert len(names) == len(set(names))


def test_a_body_fault_bends_only_a_200_of_its_endpoint() -> None:
    on = FaultSwitch(["config_docs_link_missing"])
    assert bend_body(200, CONFIG, FaultSwitch(), "/api/delivery/v1/config") is None
    assert bend_body(400, CONFIG, on, "/api/delivery/v1/config") is None
    assert bend_body(200, CONFIG, on, "/api/delivery/v1/catalog") is None
    bent = bend_body(200, CONFIG, on, "/api/delivery/v1/config")
    assert bent is not None
    assert "docs" not in orjson.loads(bent)["links"]
    assert orjson.loads(bent)["api"] == {"latest_version": "2026-10-02"}


def test_a_catalog_field_fault_bends_only_the_catalog() -> None:
    body = orjson.dumps({"films": [{"id": "f1", "code": "SB1"}], "episodes": []})
    on = FaultSwitch(["catalog_code_elsewhere"])
    assert bend_body(200, body, on, "/api/delivery/v1/config") is None
    bent = bend_body(200, body, on, "/api/delivery/v1/catalog")
    assert bent is not None
    assert orjson.loads(bent)["films"] == [{"id": "f1", "code": "ZZSB1"}]
