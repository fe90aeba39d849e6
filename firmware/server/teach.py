"""The ``/teach`` page's API: a teach folder open for naming, its undo history, its routes.

``dicetower serve --teach DIR`` opens ``DIR/teach.json`` in the lifespan as a
:class:`TeachSession`. Each step the page sends (``POST /api/teach/{slug}``) is one of
:mod:`dicetower.vision.taught.naming`'s pure steps; the session applies it under a lock, writes
teach.json at once (a closed tab or a crash loses no name), and keeps the die's earlier states
for undo: in memory, ``history`` steps a die, gone when the server stops. ``POST
/api/teach/save`` writes the labelled ``manifest.jsonl``.

teach.json may change on disk under the server (``teach group --force``, ``teach name``, a
``teach collect`` carrying on). Before each read, step and save the session compares the file
with what it last read or wrote (a SHA-256 of its bytes): when another command changed it, the
session reads it again, forgets the undo history, and takes a new *generation*, the ETag of
``GET /api/teach``. A step or save that names an older generation (``"etag"``) is refused with
409, so a page open since before the change never writes its stale names over the file's; the
page offers a reload. ``GET /api/teach`` with ``If-None-Match`` answers 304 while nothing
changed, which the page asks every few seconds. After a save the answer says what to run next:
``teach fit``, or, when a fit would refuse the folder (:mod:`~dicetower.vision.taught.ready`),
how many more rolls each die needs.

Reading (the page, the state, the crops) is open like the rest of the server; changing needs
the token wherever rolling does. Crops are served by lookup: the URL's die and file name must
be a crop teach.json lists, and the file must resolve inside the folder's ``crops/``.
"""

from __future__ import annotations

import collections
import hashlib
import shlex
import threading
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ...vision.errors import VisionError
from ...vision.taught.naming import (
    TEACH_FILE,
    DieTeach,
    Teach,
    TeachError,
    crop_faces,
    load_teach,
    move_out,
    name,
    name_loose,
    progress,
    save_teach,
    split,
    undone,
    unname,
    write_labelled,
)
from ..web.guards import ApiError, json_body, require_token

__all__ = ["OPS", "TeachSession", "die_view", "next_step", "teach_routes"]

#: each step the page may send, and the fields it takes (``version`` and ``etag`` go with every one)
OPS: dict[str, frozenset[str]] = {
    "name": frozenset({"group", "face"}),
    "unname": frozenset({"group", "crop"}),
    "move_out": frozenset({"crop"}),
    "name_loose": frozenset({"crop", "face"}),
    "split": frozenset({"group", "crops"}),
    "undo": frozenset(),
}
#: steps a die may undo (the oldest are forgotten first)
HISTORY = 500
_MEDIA = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
NO_TEACH = "no teach folder is open: start the server with dicetower serve --teach DIR (docs/teach.md)"


def die_view(die: DieTeach, *, version: int, can_undo: bool) -> dict[str, Any]:
    """One die as the page draws it: groups and loose crops with their URLs, progress, work."""

    def url(i: int) -> str:
        return f"/api/teach/crops/{die.slug}/{quote(die.crops[i].crop.rsplit('/', 1)[1])}"

    named = set(crop_faces(die).values())
    return {
        "id": die.id,
        "slug": die.slug,
        "kind": die.kind,
        "colour": die.colour,
        "faces": list(die.faces),
        "faces_left": [f for f in die.faces if f not in named],
        "groups": [
            {"face": f, "crops": [{"index": i, "url": url(i)} for i in members]}
            for members, f in zip(die.groups, die.names, strict=True)
        ],
        "loose": [
            {"index": i, "url": url(i), "face": f} for i, f in zip(die.loose, die.loose_faces, strict=True)
        ],
        "progress": progress(die),
        "work": die.work.to_json(),
        "version": version,
        "can_undo": can_undo,
    }


def _digest(path: Path) -> str:
    """SHA-256 of the file's bytes; "" when it cannot be read (gone, or a folder)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def next_step(folder: Path) -> dict[str, Any]:
    """``{"ready", "next"}`` after a save: the fit to run, or what a fit would still want.

    The readiness is the fit's own pre-check (:mod:`~dicetower.vision.taught.ready`, the fit's
    defaults), read from the manifest the save just wrote; the model's folder is a suggestion
    beside the teach folder, as hardware/BUILD.md puts it.
    """
    from ...vision.taught.fit import HOLD_BACK, MAX_WRONG, MIN_PER_FACE
    from ...vision.taught.ready import fit_readiness

    ready = fit_readiness(folder, hold_back=HOLD_BACK, min_per_face=MIN_PER_FACE, max_wrong=MAX_WRONG)
    if ready.ready:
        model = shlex.quote(str(folder.parent / "my-dice"))
        return {"ready": True, "next": f"dicetower teach fit {shlex.quote(str(folder))} --out {model}"}
    if not ready.dice:
        return {"ready": False, "next": "name the groups: no die has a named face yet"}
    return {"ready": False, "next": ready.summary()}


def _field(body: dict[str, Any], key: str) -> Any:
    if key not in body:
        raise ApiError(422, f"{key} is missing", field_name=key)
    return body[key]


class TeachSession:
    """A teach folder open for naming: its state, each die's undo history, one lock.

    Steps run in worker threads (they write teach.json), so the lock keeps one step at a time.
    A step's new state replaces the old only once teach.json is written.
    """

    def __init__(self, folder: Path, *, history: int = HISTORY) -> None:
        self.folder = Path(folder)
        self._history_size = history
        self._lock = threading.Lock()
        self._versions: dict[str, int] = {}
        self._read()

    def _read(self) -> None:
        """(Re)read teach.json: a new generation, every die's undo history forgotten."""
        disk = _digest(self.folder / TEACH_FILE)
        teach = load_teach(self.folder)  # a file that cannot be read changes nothing here
        self._disk, self.teach, self.etag = disk, teach, disk[:16]
        self._history: dict[str, collections.deque[DieTeach]] = {
            d.slug: collections.deque(maxlen=self._history_size) for d in self.teach.dice
        }
        # a die's version only grows, so a page's step from before the change is refused
        self._versions = {d.slug: self._versions.get(d.slug, -1) + 1 for d in self.teach.dice}

    def _sync(self) -> None:
        """Read teach.json again when another command changed it since the session read or wrote it."""
        if _digest(self.folder / TEACH_FILE) == self._disk:
            return
        try:
            self._read()
        except TeachError as exc:
            raise ApiError(
                409, f"teach.json changed on disk and cannot be read: {exc}", field_name="etag"
            ) from None

    def _check_etag(self, body: dict[str, Any]) -> None:
        etag = body.get("etag")
        if etag is None:
            return
        if not isinstance(etag, str):
            raise ApiError(422, f"must be a string, got {etag!r:.20}", field_name="etag")
        if etag != self.etag:
            raise ApiError(
                409,
                "teach.json changed on disk since this page read it (another command wrote it, such as "
                "dicetower teach group --force): reload to see it; nothing was changed",
                field_name="etag",
            )

    def _write(self, teach: Teach) -> None:
        save_teach(self.folder, teach)
        self.teach = teach
        self._disk = _digest(self.folder / TEACH_FILE)

    def current_etag(self) -> str:
        """The generation of teach.json now (read again first if another command changed it)."""
        with self._lock:
            self._sync()
            return self.etag

    def die(self, slug: str) -> DieTeach:
        for d in self.teach.dice:
            if d.slug == slug:
                return d
        raise ApiError(404, f"no die {slug!r} in this teach folder", field_name="slug")

    def view(self, slug: str | None = None) -> dict[str, Any]:
        """Every die (or the one ``slug``), as :func:`die_view` draws it."""
        with self._lock:
            self._sync()
            dice = [d for d in self.teach.dice if slug in (None, d.slug)]
            return {
                "folder": self.folder.name,
                "etag": self.etag,
                "dice": [
                    die_view(d, version=self._versions[d.slug], can_undo=bool(self._history[d.slug]))
                    for d in dice
                ],
            }

    def step(self, slug: str, body: object) -> dict[str, Any]:
        """Apply one step (``{"op": "name", "group": 3, "face": 17}``) and return the die's view."""
        if not isinstance(body, dict):
            raise ApiError(422, "a step is a JSON object with an op", field_name="body")
        op = body.get("op")
        if op not in OPS:
            raise ApiError(422, f"{op!r} is not a step (one of {', '.join(OPS)})", field_name="op")
        unknown = sorted(set(body) - OPS[op] - {"op", "version", "etag"})
        if unknown:
            raise ApiError(422, f"{op} takes no {unknown[0]}", field_name=unknown[0])
        with self._lock:
            self._sync()
            self._check_etag(body)
            die = self.die(slug)
            version = body.get("version")
            if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
                raise ApiError(422, f"must be a whole number, got {version!r:.20}", field_name="version")
            if version is not None and version != self._versions[slug]:
                raise ApiError(
                    409,
                    f"{die.id} changed since the page read it (version {version}, now "
                    f"{self._versions[slug]}): reload",
                    field_name="version",
                )
            history = self._history[slug]
            if op == "undo":
                if not history:
                    raise ApiError(409, f"nothing to undo for {die.id}", field_name="op")
                new = undone(die, history[-1])
            else:
                try:
                    new = self._apply(die, op, body)
                except TeachError as exc:
                    raise ApiError(422, exc.problem, field_name=exc.field) from None
            self._write(self.teach.with_die(new))
            if op == "undo":
                history.pop()
            else:
                history.append(die)
            self._versions[slug] += 1
            return die_view(new, version=self._versions[slug], can_undo=bool(history))

    @staticmethod
    def _apply(die: DieTeach, op: str, body: dict[str, Any]) -> DieTeach:
        if op == "name":
            return name(die, _field(body, "group"), _field(body, "face"))
        if op == "unname":
            if "crop" in body:
                return name_loose(die, body["crop"], None)
            return unname(die, _field(body, "group"))
        if op == "move_out":
            return move_out(die, _field(body, "crop"))
        if op == "name_loose":
            return name_loose(die, _field(body, "crop"), _field(body, "face"))
        group, crops = _field(body, "group"), _field(body, "crops")
        if not isinstance(crops, list) or not all(type(c) is int for c in crops):
            raise TeachError("must be a list of crop indices", "crops")
        members = die.groups[group] if isinstance(group, int) and 0 <= group < len(die.groups) else ()
        try:
            return split(die, group, [[c for c in members if c not in set(crops)], crops])
        except TeachError as exc:  # the page sends the picked-out part only: name its field
            raise TeachError(exc.problem, "crops" if exc.field == "parts" else exc.field) from None

    def save(self, body: object = None) -> dict[str, Any]:
        """Write the labelled manifest from the current names, and say what to run next."""
        if body is not None and not isinstance(body, dict):
            raise ApiError(422, "a save is a JSON object (with the page's etag)", field_name="body")
        with self._lock:
            self._sync()
            self._check_etag(body or {})
            try:
                summary = write_labelled(self.folder, self.teach)
            except VisionError as exc:  # teach.json and the manifest disagree: nothing was written
                raise ApiError(409, str(exc), field_name=getattr(exc, "field", None)) from None
            texts = [progress(d)["text"] for d in self.teach.dice]
        return {
            "saved": "manifest.jsonl",
            "named": summary.named,
            "unnamed": summary.unnamed,
            "lines": summary.lines,
            "progress": texts,
            **next_step(self.folder),
        }

    def crop_path(self, slug: str, file_name: str) -> Path | None:
        """The crop file ``crops/<slug>/<file_name>`` when teach.json lists it and it lies in ``crops/``."""
        rel = f"crops/{slug}/{file_name}"
        if not any(d.slug == slug and any(c.crop == rel for c in d.crops) for d in self.teach.dice):
            return None
        root = (self.folder / "crops").resolve()
        path = (self.folder / rel).resolve()
        return path if path.is_relative_to(root) and path.is_file() else None


def _session(request: Request) -> TeachSession:
    session = request.state.server.teach
    if session is None:
        raise ApiError(404, NO_TEACH)
    return session


async def teach_page(request: Request) -> Response:
    if request.state.server.teach is None:
        return HTMLResponse(
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>dicetower teach</title>'
            '<link rel="stylesheet" href="/static/teach.css"></head><body><main class="off">'
            f"<h1>No teach folder is open</h1><p>{escape(NO_TEACH)}</p></main></body></html>",
            status_code=404,
        )
    page = Path(str(resources.files(__package__) / "static" / "teach.html"))
    return FileResponse(page, media_type="text/html")


async def get_teach(request: Request) -> Response:
    session = _session(request)
    asked = request.headers.get("if-none-match")
    if asked is not None:
        etag = await run_in_threadpool(session.current_etag)
        if asked.strip() == f'"{etag}"':
            return Response(status_code=304, headers={"ETag": f'"{etag}"'})
    view = await run_in_threadpool(session.view)
    body = {**view, "token_required": request.state.server.token is not None}
    return JSONResponse(body, headers={"ETag": f'"{view["etag"]}"', "Cache-Control": "no-store"})


async def get_teach_crop(request: Request) -> Response:
    session = _session(request)
    slug, file_name = request.path_params["slug"], request.path_params["name"]
    path = await run_in_threadpool(session.crop_path, slug, file_name)
    media = _MEDIA.get(Path(file_name).suffix.lower())
    if path is None or media is None:
        raise ApiError(404, f"no crop {file_name!r} of {slug!r} in this teach folder")
    return FileResponse(path, media_type=media, headers={"Cache-Control": "private, max-age=3600"})


async def post_teach_step(request: Request) -> Response:
    require_token(request, request.state.server.token)
    session = _session(request)
    body = await json_body(request, "the step")
    return JSONResponse(await run_in_threadpool(session.step, request.path_params["slug"], body))


async def post_teach_save(request: Request) -> Response:
    require_token(request, request.state.server.token)
    session = _session(request)
    body = await json_body(request, "the save") if await request.body() else None
    return JSONResponse(await run_in_threadpool(session.save, body))


def teach_routes() -> list[Route]:
    """The page and its API (``save`` before ``{slug}``, so no die's slug shadows it)."""
    return [
        Route("/teach", teach_page),
        Route("/api/teach", get_teach),
        Route("/api/teach/crops/{slug}/{name}", get_teach_crop),
        Route("/api/teach/save", post_teach_save, methods=["POST"]),
        Route("/api/teach/{slug}", post_teach_step, methods=["POST"]),
    ]
