"""The OpenAPI 3.1 description served at ``/openapi.json`` (written by hand, kept beside the routes).

``tests/firmware/server/test_server_api.py`` checks that every route of the app is described
here and that nothing described is missing from the app. The ``system`` enum is read from the
rules' systems registry (:data:`~dicetower.rules.systems.SYSTEM_MODULES`), so a system added
there is described with no second list to keep in step.
"""

from __future__ import annotations

from typing import Any

from ...rules.systems import system_names

__all__ = ["openapi_schema"]

_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "status": {"type": "integer"},
                "field": {"type": ["string", "null"], "description": "the request field at fault"},
                "message": {"type": "string"},
                "position": {
                    "type": "integer",
                    "description": "0-based character offset of a notation error",
                },
                "column": {
                    "type": "integer",
                    "description": "1-based column of a notation error, as the message counts (position + 1)",
                },
            },
            "required": ["status", "message"],
        }
    },
}


def _roll_request() -> dict[str, Any]:
    """Built on each call, so the ``system`` enum is the registry as it is then."""
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "notation": {"type": "string", "maxLength": 200, "examples": ["4d6kh3+2"]},
            "system": {"type": "string", "enum": system_names()},
            "check": {"type": "string", "examples": ["skill"]},
            "params": {"type": "object", "additionalProperties": {"type": ["number", "string", "boolean"]}},
            "roller": {"type": "string", "maxLength": 40, "description": "who rolled (shown on the overlay)"},
        },
        "description": "either notation, or system + check (+ params)",
    }


_DIE = {
    "type": "object",
    "properties": {
        "slot": {"type": "integer"},
        "kind": {"type": "string"},
        "role": {"type": "string"},
        "purpose": {"type": "string"},
        "of_slot": {"type": ["integer", "null"]},
        "label": {"type": "string", "description": "the rules' name for the die, e.g. 'pool die 1'"},
        "face": {"type": "integer"},
        "value": {"type": "number"},
        "flags": {"type": "array", "items": {"type": "string"}},
        "die": {"type": "string", "description": "the physical die that gave this slot, e.g. 'red d6'"},
        "throw": {"type": ["integer", "null"]},
        "confidence": {"type": "number"},
        "colour": {"type": "string"},
        "box": {"type": "array", "items": {"type": "number"}},
        "crop_url": {"type": ["string", "null"]},
    },
}

_ROLL = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "status": {"type": "string", "enum": ["queued", "rolling", "done", "failed"]},
        "place": {"type": ["integer", "null"], "description": "0 rolling now, 1 next, ... (pending only)"},
        "roller": {"type": "string"},
        "via": {
            "type": ["string", "null"],
            "enum": ["http", "mqtt", "button", None],
            "description": "how the roll was asked for: the API, a broker, the button (null: logged before)",
        },
        "label": {"type": "string"},
        "title": {
            "type": "string",
            "description": "the label with the system's display name ('Runic Flux skill')",
        },
        "text": {"type": ["string", "null"]},
        "modifier": {
            "type": ["number", "null"],
            "description": "what a check adds to its dice (Runic Flux's stat); null where none or unknown",
        },
        "sum": {"type": ["string", "null"], "description": "the rules' line of how a check's total was made"},
        "total": {},
        "outcome": {"type": ["string", "null"]},
        "odds": {"type": ["object", "null"], "description": "exact outcome probabilities of a check"},
        "dice": {"type": "array", "items": _DIE},
        "throws": {"type": "array", "items": {"type": "object"}},
        "timings": {"type": "object"},
        "error": {"type": ["string", "null"]},
        "hash": {"type": "string", "description": "this row's hash in the log's chain"},
        "corrected": {
            "type": "boolean",
            "description": "the table corrected a die: dice, total, outcome as the rules give them now",
        },
        "as_read": {
            "type": "object",
            "description": "a corrected roll's total, outcome and text as the tower read it",
        },
        "corrections": {
            "type": "array",
            "description": "the table's corrections, each a record in the chain",
            "items": {
                "type": "object",
                "properties": {
                    "die": {"type": "integer"},
                    "kind": {"type": "string"},
                    "old": {"type": "integer"},
                    "new": {"type": "integer"},
                    "by": {"type": "string"},
                    "at": {"type": "number"},
                    "record": {"type": "integer"},
                },
            },
        },
    },
}


_QUEUED = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "status": {"const": "queued"},
        "place": {"type": "integer"},
        "url": {"type": "string"},
        "throws": {
            "type": "integer",
            "description": "throws the roll's initial dice take (follow-ups not counted)",
        },
        "max_throws": {
            "type": ["integer", "null"],
            "description": "the most throws of a roll's initial dice, and of its follow-ups (null: the RNG)",
        },
    },
}


#: ``GET /api/tower``'s ``mqtt``: the broker link's state (docs/towers.md); null without ``--mqtt``
_MQTT_STATUS = {
    "type": ["object", "null"],
    "properties": {
        "broker": {"type": "string", "description": "the broker's URL without its password"},
        "tower": {"type": "string"},
        "connected": {"type": "boolean"},
        "error": {
            "type": "string",
            "description": "why the tower is not connected (the broker's refusal, a TLS or socket error); ''",
        },
        "published": {"type": "integer"},
        "acknowledged": {"type": "integer", "description": "the last roll the broker holds with all before"},
        "unacknowledged": {"type": "integer"},
        "key": {"type": "string", "description": "the tower's public key (ed25519:...), '' unsigned"},
        "key_fingerprint": {"type": "string", "description": "its fingerprint, as the hub shows it"},
    },
}


def _json(schema: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"description": description or "OK", "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(c): _json({"$ref": "#/components/schemas/Error"}, "refused") for c in codes}


def openapi_schema() -> dict[str, Any]:
    roll_id = {
        "name": "roll_id",
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "dicetower",
            "version": "1",
            "description": "Roll real dice; watch and audit them.",
        },
        "components": {
            "schemas": {"Error": _ERROR, "RollRequest": _roll_request(), "Roll": _ROLL},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "paths": {
            "/api/rolls": {
                "post": {
                    "summary": "queue a roll; returns its id at once",
                    "security": [{"bearer": []}],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/RollRequest"}}
                        },
                    },
                    "responses": {
                        "202": _json(
                            _QUEUED,
                            "queued: id, place, url; throws: the throws its initial dice take, of max_throws",
                        ),
                        **_errors(400, 401, 413, 415, 422, 429, 503),
                    },
                },
                "get": {
                    "summary": "finished rolls, newest first",
                    "parameters": [
                        {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 200}},
                        {"name": "before", "in": "query", "schema": {"type": "integer"}},
                        {"name": "roller", "in": "query", "schema": {"type": "string"}},
                        {"name": "system", "in": "query", "schema": {"type": "string"}},
                    ],
                    "responses": {"200": _json({"type": "object"}), **_errors(400)},
                },
            },
            "/api/rolls/{roll_id}": {
                "get": {
                    "summary": "one roll: faces, dice, outcome, odds, photos, timings, retries",
                    "parameters": [roll_id],
                    "responses": {"200": _json({"$ref": "#/components/schemas/Roll"}), **_errors(404)},
                }
            },
            "/api/rolls/{roll_id}/photos/{index}.jpg": {
                "get": {
                    "summary": "the photo of one throw",
                    "parameters": [
                        roll_id,
                        {"name": "index", "in": "path", "required": True, "schema": {"type": "integer"}},
                    ],
                    "responses": {
                        "200": {"description": "JPEG", "content": {"image/jpeg": {}}},
                        **_errors(404),
                    },
                }
            },
            "/api/rolls/{roll_id}/dice/{slot}.jpg": {
                "get": {
                    "summary": "the crop of one die from its throw's photo",
                    "parameters": [
                        roll_id,
                        {"name": "slot", "in": "path", "required": True, "schema": {"type": "integer"}},
                    ],
                    "responses": {
                        "200": {"description": "JPEG", "content": {"image/jpeg": {}}},
                        **_errors(404),
                    },
                }
            },
            "/api/fairness": {
                "get": {"summary": "fairness per physical die", "responses": {"200": _json({})}}
            },
            "/api/tower": {
                "get": {
                    "summary": (
                        "the dice supply's status (roller; roller.taught: the taught reader and its drift),"
                        " the queue and each request's place, the button's presses (button), the MQTT link's"
                        " state (mqtt), and each output's state (outputs: ok, behind or failing, with counts)"
                    ),
                    "responses": {"200": _json({"type": "object", "properties": {"mqtt": _MQTT_STATUS}})},
                }
            },
            "/ws": {
                "get": {
                    "summary": (
                        "WebSocket: queued/rolling/settled/result/error events with seq; ?since=SEQ&epoch=E"
                    ),
                    "responses": {"101": {"description": "switching protocols"}},
                }
            },
            "/overlay": {
                "get": {"summary": "the OBS overlay page", "responses": {"200": {"description": "HTML"}}}
            },
            "/fairness": {
                "get": {"summary": "the fairness page", "responses": {"200": {"description": "HTML"}}}
            },
            **_teach_paths(),
            **_table_paths(roll_id),
        },
    }


def _table_paths(roll_id: dict[str, Any]) -> dict[str, Any]:
    """The table's page for phones and its corrections (docs/server.md, "The table")."""
    correction = {
        "type": "object",
        "properties": {
            "die": {"type": "integer", "minimum": 0, "description": "the die's slot in the roll"},
            "face": {"type": "integer", "description": "the face the die shows (one printed on it)"},
            "by": {"type": "string", "maxLength": 40, "description": "who says so (default: table)"},
        },
        "required": ["die", "face"],
        "additionalProperties": False,
    }
    return {
        "/table": {
            "get": {
                "summary": "the table's page for phones: the roll in progress, recent rolls, corrections",
                "responses": {"200": {"description": "HTML"}},
            }
        },
        "/api/table": {
            "get": {
                "summary": (
                    "what the table page shows: the roll in progress, the queue, the recent rolls (each die's"
                    " crop, face and faces; the last correctable within its window) and the dice put to the"
                    " table; a poll also tells the tower a table page is there to ask"
                ),
                "security": [{"bearer": []}],
                "responses": {"200": _json({"type": "object"}), **_errors(401)},
            }
        },
        "/api/table/asks/{qid}.jpg": {
            "get": {
                "summary": "the crop of a die put to the table, while its question is open",
                "parameters": [
                    {"name": "qid", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "responses": {"200": {"description": "JPEG", "content": {"image/jpeg": {}}}, **_errors(404)},
            }
        },
        "/api/rolls/{roll_id}/answers": {
            "post": {
                "summary": (
                    'answer for a die the tower could not read ([roll] unreadable = "ask"): the first valid'
                    " answer fills the slot and the roll goes on"
                ),
                "security": [{"bearer": []}],
                "parameters": [roll_id],
                "requestBody": {"required": True, "content": {"application/json": {"schema": correction}}},
                "responses": {
                    "201": _json({"type": "object"}, "taken: roll, die, face, by"),
                    **_errors(400, 401, 409, 413, 415, 422, 429),
                },
            }
        },
        "/api/rolls/{roll_id}/corrections": {
            "post": {
                "summary": (
                    "say a die of the last roll shows another face (within [roll] correct_window_s, until"
                    " the next roll): a chained record; the roll is evaluated again on the final faces"
                ),
                "security": [{"bearer": []}],
                "parameters": [roll_id],
                "requestBody": {"required": True, "content": {"application/json": {"schema": correction}}},
                "responses": {
                    "201": _json({"$ref": "#/components/schemas/Roll"}, "the corrected roll"),
                    **_errors(400, 401, 404, 409, 413, 415, 422, 429),
                },
            }
        },
    }


def _teach_paths() -> dict[str, Any]:
    """The naming page and its API (``dicetower serve --teach DIR``; 404 without a teach folder)."""
    slug = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}
    step = {
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ["name", "unname", "move_out", "name_loose", "split", "undo"]},
            "group": {"type": "integer"},
            "crop": {"type": "integer"},
            "face": {"type": ["integer", "null"]},
            "crops": {"type": "array", "items": {"type": "integer"}, "description": "split: the new group"},
            "version": {"type": "integer", "description": "the die's version the page saw (409 if stale)"},
        },
        "required": ["op"],
        "additionalProperties": False,
    }
    changes = {"security": [{"bearer": []}]}
    return {
        "/teach": {
            "get": {"summary": "the naming page", "responses": {"200": {"description": "HTML"}, "404": {}}}
        },
        "/api/teach": {
            "get": {
                "summary": "every die's groups, names, loose crops, progress and work",
                "responses": {"200": _json({"type": "object"}), **_errors(404)},
            }
        },
        "/api/teach/crops/{slug}/{name}": {
            "get": {
                "summary": "one crop of a die, as teach.json lists it",
                "parameters": [
                    slug,
                    {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "PNG or JPEG"}, **_errors(404)},
            }
        },
        "/api/teach/{slug}": {
            "post": {
                "summary": "one naming step on a die; returns the die's new state",
                **changes,
                "parameters": [slug],
                "requestBody": {"required": True, "content": {"application/json": {"schema": step}}},
                "responses": {"200": _json({"type": "object"}), **_errors(400, 401, 404, 409, 413, 415, 422)},
            }
        },
        "/api/teach/save": {
            "post": {
                "summary": "write the labelled manifest.jsonl from the names",
                **changes,
                "responses": {"200": _json({"type": "object"}), **_errors(401, 404, 409)},
            }
        },
    }
