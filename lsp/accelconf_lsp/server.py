"""The accelconf language server: protocol glue over the accelconf library (pygls 2).

Every handler has the same shape: fetch the document, call the library (:mod:`accelconf.accelerate.validate`,
:mod:`accelconf.environment.checks`, :mod:`accelconf.assist`, :mod:`accelconf.accelerate.fmt`,
:mod:`accelconf.accelerate.migrate`),
convert the result with an ``lsp_*`` function from :mod:`accelconf_lsp.protocol`. No rule lives here.

Diagnostics are pushed, debounced per document (the first change after a quiet spell is analysed
at once, a burst of changes once ``DEBOUNCE_S`` after its last change) and computed only for the
latest version. Handlers never raise: an exception is logged and the handler answers what it can.
Settings (section ``accelconf``): ``accelerateVersion``, ``transformersVersion``, ``trlVersion``,
``target`` (a machine profile YAML) and ``disabledRules``, from initializationOptions,
``workspace/didChangeConfiguration`` or ``workspace/configuration``; invalid values fall back to
the defaults with a ``window/showMessage``. The Trainer / TRL releases default as the CLI's
``--transformers-version`` / ``--trl-version`` do: the installed release (read from its metadata),
else the newest the releases data knows.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from accelconf import __version__, assist, catalogue
from accelconf.accelerate import registry
from accelconf.assist import memhint
from accelconf.assist import trainer as trainer_assist
from accelconf.errors import InputError, UsageError
from accelconf.findings import Finding
from accelconf.text.document import Document, load_text
from accelconf_lsp import protocol

logger = logging.getLogger("accelconf_lsp")

DEBOUNCE_S = 0.03
CONFIG_TIMEOUT_S = 2.0
SECTION = "accelconf"

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


# -- settings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    accelerate_version: str | None = None
    target: str | None = None
    disabled_rules: tuple[str, ...] = ()
    transformers_version: str | None = None
    trl_version: str | None = None


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Settings from a client's JSON value, and a message for every value that was refused.

    Accepts ``{"accelerateVersion": ..., "target": ..., "disabledRules": [...]}`` or the same
    under an ``accelconf`` key. An invalid value falls back to its default.
    """
    problems: list[str] = []
    if raw is None:
        return Settings(), problems
    if isinstance(raw, dict) and isinstance(raw.get(SECTION), dict):
        raw = raw[SECTION]
    if not isinstance(raw, dict):
        return Settings(), [f"accelconf settings must be an object, not {type(raw).__name__}; using the defaults"]
    version = raw.get("accelerateVersion")
    if version is not None and (not isinstance(version, str) or registry.normalize_version(version) is None):
        problems.append(
            f'accelconf.accelerateVersion {version!r} is not a version such as "1.15"; using the installed accelerate'
        )
        version = None
    if isinstance(version, str) and not version.strip():
        version = None
    target = raw.get("target")
    if target is not None and not (isinstance(target, str) and target.strip()):
        if target not in ("", None):
            problems.append(f"accelconf.target {target!r} is not a file path; checking without a target machine")
        target = None
    rules = raw.get("disabledRules", ())
    if rules is None:
        rules = ()
    if not isinstance(rules, (list, tuple)) or not all(isinstance(r, str) for r in rules):
        problems.append(f"accelconf.disabledRules {rules!r} is not a list of rule names; no rule is disabled")
        rules = ()
    unknown_ids = catalogue.unknown_message(rules, "accelconf.disabledRules")
    if unknown_ids:  # a typo would turn nothing off without a word: said, and the known ids still apply
        problems.append(unknown_ids + "; it is not disabled")
        rules = tuple(r for r in rules if catalogue.get(r) is not None)
    releases = {}
    for name in trainer_assist.SETTINGS:  # transformersVersion, trlVersion: the Trainer files' target releases
        releases[name], problem = trainer_assist.release_setting(name, raw.get(name))
        problems += [problem] if problem else []
    known = {k for k in raw if k in ("accelerateVersion", "target", "disabledRules", *memhint.SETTINGS)}
    unknown = sorted(str(k) for k in raw if k not in known and k not in trainer_assist.SETTINGS)
    if unknown:
        problems.append("unknown accelconf settings ignored: " + ", ".join(unknown))
    settings = Settings(version, os.path.expanduser(target) if target else None, tuple(rules))
    return replace(
        settings, transformers_version=releases["transformersVersion"], trl_version=releases["trlVersion"]
    ), problems


# -- per-document state ---------------------------------------------------------------------------


@dataclass
class Analysis:
    """The latest analysis of one document version."""

    version: int | None
    text: str
    kind: assist.Kind | None
    doc: Document | None
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    # Trainer / TRL arguments (an arguments file, a framework YAML, a fsdp_config JSON): the recogniser's kind
    trainer: bool = False
    trainer_kind: str | None = None


class AccelconfLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("accelconf", __version__)
        self.settings = Settings()
        self.target_env: Any = None
        self.memory: memhint.Memory | None = None
        self.analyses: dict[str, Analysis] = {}
        self.kinds: dict[str, assist.Kind] = {}  # the last kind, kept while the text does not parse
        self.trainer_kinds: dict[str, str] = {}  # the same for Trainer / TRL arguments files
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._last_change: dict[str, float] = {}
        self._published: set[str] = set()  # open documents the client has had diagnostics for

    # -- helpers --------------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        try:
            return str(self.workspace.position_encoding or "utf-16")
        except Exception:  # noqa: BLE001 - before initialize
            return "utf-16"

    def _cap(self, getter: Callable[[Any], Any], default: Any = None) -> Any:
        """A client capability by ``getter``; ``default`` where the client left out a level (None)."""
        try:
            value = getter(self.client_capabilities)
        except (AttributeError, TypeError):
            return default
        return default if value is None else value

    def notify_user(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        logger.warning("%s", message)
        try:
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))
        except Exception:  # noqa: BLE001
            logger.exception("cannot show a message")

    def apply_settings(self, raw: Any, origin: str) -> None:
        settings, problems = parse_settings(raw)
        env = None
        if settings.target:
            try:
                from accelconf.environment.targets import load_target

                env = load_target(settings.target)
            except (InputError, UsageError) as exc:
                problems.append(f"accelconf.target: {exc}; checking without a target machine")
                settings = replace(settings, target=None)
        self.memory, more = memhint.from_settings(raw)  # accelconf.params / accelconf.model: "will it fit?"
        for p in problems + more:
            self.notify_user(f"{p} (from {origin})")
        self.settings = settings
        self.target_env = env

    def path_of(self, uri: str) -> str:
        try:
            return to_fs_path(uri) or uri
        except Exception:  # noqa: BLE001
            return uri

    def text_of(self, uri: str) -> tuple[str, int | None] | None:
        if uri not in self.workspace.text_documents:
            return None
        doc = self.workspace.get_text_document(uri)
        return doc.source, doc.version

    # -- analysis -------------------------------------------------------------------------------
    def analyze(self, uri: str) -> Analysis | None:
        """Analyse the current version of a document (cached per version). Never raises."""
        got = self.text_of(uri)
        if got is None:
            return None
        text, version = got
        cached = self.analyses.get(uri)
        if cached is not None and cached.version == version and cached.text == text:
            return cached
        result = Analysis(version, text, None, None)
        path = self.path_of(uri)
        encoding = self.encoding
        try:
            try:
                result.doc = load_text(text, path)
            except InputError as exc:
                result.diagnostics.append(protocol.lsp_input_error(exc, text, encoding))
            kind = assist.document_kind(path, text, result.doc)
            if kind is None and result.doc is None and assist.modeline(text) != "disable":
                kind = self.kinds.get(uri)  # half-typed text that no longer parses keeps its kind
            if kind is None and result.doc is not None and self._trainer(result, path, text, encoding):
                self.trainer_kinds[uri] = result.trainer_kind or ""
            elif kind is None and result.doc is None and self.trainer_kinds.get(uri):
                result.trainer, result.trainer_kind = True, self.trainer_kinds[uri]  # half-typed: its parse error
            elif kind is None:
                result.diagnostics = []
                self.kinds.pop(uri, None)
                self.trainer_kinds.pop(uri, None)
            else:
                self.kinds[uri] = kind
                result.kind = kind
                if result.doc is not None:
                    ref = result.doc.node(("deepspeed_config", "deepspeed_config_file"))
                    anchor = (ref.line + 1, ref.col + 1, ref.end_line + 1, ref.end_col + 1) if ref is not None else None
                    result.findings = protocol.anchor_foreign(self._findings(result.doc), path, anchor)
                    result.diagnostics = protocol.lsp_diagnostics(result.findings, text, encoding)
        except Exception:  # noqa: BLE001 - publish what we have
            logger.exception("analysing %s failed", uri)
        self.analyses[uri] = result
        return result

    def _trainer(self, result: Analysis, path: str, text: str, encoding: str) -> bool:
        """Diagnostics of Trainer / TRL arguments through validate's one dispatch; False for a file of another kind."""
        from accelconf.api import validate_source
        from accelconf.kinds import recognise
        from accelconf.trainer.validate import KINDS

        kind = recognise(text, path, result.doc).kind
        if kind not in KINDS:
            return False
        s = self.settings
        result.trainer, result.trainer_kind = True, kind
        found = validate_source(
            text,
            path,
            accelerate_version=s.accelerate_version,
            disabled=s.disabled_rules,
            transformers_version=s.transformers_version,
            trl_version=s.trl_version,
        )
        result.findings = [f for f in found if not f.path]
        result.diagnostics = protocol.lsp_diagnostics(result.findings, text, encoding)
        return True

    def _findings(self, doc: Document) -> list[Finding]:
        from accelconf.api import check_document

        s = self.settings
        opts: dict[str, Any] = dict(accelerate_version=s.accelerate_version, disabled=s.disabled_rules)
        if self.memory is None or not _has_settings(doc):
            return check_document(doc, self.target_env, **opts)
        try:
            return check_document(doc, self.target_env, memory=self.memory, **opts)
        except Exception:  # noqa: BLE001 - diagnostics must not fail because of the estimate
            logger.exception("memory estimate failed")
            return check_document(doc, self.target_env, **opts)

    def publish(self, uri: str) -> None:
        self._timers.pop(uri, None)
        try:
            result = self.analyze(uri)
            if result is None:
                return
            if result.kind is None and not result.trainer and uri not in self._published:
                return  # not a config accelconf knows, and never was: say nothing about it
            # Once published, every later version is published too (an empty list clears what
            # the client shows when the document becomes clean or stops being a config).
            self._published.add(uri)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=result.diagnostics, version=result.version)
            )
        except Exception:  # noqa: BLE001
            logger.exception("publishing diagnostics for %s failed", uri)

    def schedule(self, uri: str) -> None:
        """Publish diagnostics soon: at once after a quiet spell, else when a burst of edits ends."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.publish(uri)
            return
        handle = self._timers.pop(uri, None)
        if handle is not None:
            handle.cancel()
        now = loop.time()
        busy = now - self._last_change.get(uri, -1e9) < DEBOUNCE_S
        self._last_change[uri] = now
        self._timers[uri] = loop.call_later(DEBOUNCE_S if busy else 0.0, self.publish, uri)

    def forget(self, uri: str) -> None:
        handle = self._timers.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self.analyses.pop(uri, None)
        self._last_change.pop(uri, None)
        self.kinds.pop(uri, None)
        self.trainer_kinds.pop(uri, None)

    def refresh_all(self) -> None:
        for uri in list(self.workspace.text_documents):
            self.analyses.pop(uri, None)
            self.schedule(uri)

    async def pull_configuration(self) -> None:
        if not self._cap(lambda c: c.workspace.configuration, False):
            return
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                ),
                CONFIG_TIMEOUT_S,
            )
        except Exception:  # noqa: BLE001 - a client that cannot answer keeps the current settings
            logger.exception("workspace/configuration failed")
            return
        if result and isinstance(result[0], dict) and result[0]:
            self.apply_settings(result[0], "workspace configuration")
            self.refresh_all()


server = AccelconfLanguageServer()


def _guard(default: Callable[[], Any]) -> Callable[[F], F]:
    """Handlers never raise: log the exception and answer ``default()``."""

    def wrap(fn: F) -> F:
        def handler(ls: AccelconfLanguageServer, params: Any) -> Any:
            try:
                return fn(ls, params)
            except Exception:  # noqa: BLE001
                logger.exception("%s failed", fn.__name__)
                return default()

        handler.__name__ = fn.__name__
        handler.__doc__ = fn.__doc__
        return cast(F, handler)

    return wrap


# -- lifecycle and documents ----------------------------------------------------------------------


@server.feature(types.INITIALIZE)
@_guard(lambda: None)
def initialize(ls: AccelconfLanguageServer, params: types.InitializeParams) -> None:
    ls.apply_settings(params.initialization_options, "initializationOptions")


@server.feature(types.INITIALIZED)
async def initialized(ls: AccelconfLanguageServer, params: types.InitializedParams) -> None:
    try:
        await ls.pull_configuration()
    except Exception:  # noqa: BLE001
        logger.exception("initialized failed")


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: AccelconfLanguageServer, params: types.DidChangeConfigurationParams) -> None:
    try:
        raw = params.settings
        if isinstance(raw, dict) and isinstance(raw.get(SECTION), dict):
            ls.apply_settings(raw[SECTION], "didChangeConfiguration")
            ls.refresh_all()
        else:
            await ls.pull_configuration()
    except Exception:  # noqa: BLE001
        logger.exception("didChangeConfiguration failed")


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
@_guard(lambda: None)
def did_open(ls: AccelconfLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@_guard(lambda: None)
def did_change(ls: AccelconfLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
@_guard(lambda: None)
def did_save(ls: AccelconfLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
@_guard(lambda: None)
def did_close(ls: AccelconfLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.forget(uri)
    if uri in ls._published:
        ls._published.discard(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


# -- features -------------------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[":", " ", "\n"]))
@_guard(lambda: None)
def completion(ls: AccelconfLanguageServer, params: types.CompletionParams) -> types.CompletionList | None:
    result = ls.analyze(params.text_document.uri)
    if result is None or (result.kind is None and result.trainer_kind is None):
        return None
    lines = protocol.lines_of(result.text)
    line, col = protocol.from_client(lines, params.position, ls.encoding)
    path, s = ls.path_of(params.text_document.uri), ls.settings
    if result.trainer_kind is not None:
        cands = trainer_assist.complete_trainer(
            result.text, line, col, result.trainer_kind, s.transformers_version, s.trl_version, path
        )
    else:
        cands = assist.complete(result.text, line, col, s.accelerate_version, path, result.kind)

    def item(c: Any) -> Any:  # the client's completionItem capabilities (AttributeError where absent: _cap's default)
        return c.text_document.completion.completion_item

    snippets = bool(ls._cap(lambda c: item(c).snippet_support, False))
    markdown = "markdown" in (ls._cap(lambda c: item(c).documentation_format, []) or [])
    tags = ls._cap(lambda c: item(c).tag_support.value_set, []) or []
    return protocol.lsp_completion_list(
        cands,
        result.text,
        line,
        ls.encoding,
        snippets=snippets,
        markdown=markdown,
        deprecated_tag=types.CompletionItemTag.Deprecated in tags,
    )


@server.feature(types.TEXT_DOCUMENT_HOVER)
@_guard(lambda: None)
def hover(ls: AccelconfLanguageServer, params: types.HoverParams) -> types.Hover | None:
    result = ls.analyze(params.text_document.uri)
    if result is None or (result.kind is None and result.trainer_kind is None):
        return None
    lines = protocol.lines_of(result.text)
    line, col = protocol.from_client(lines, params.position, ls.encoding)
    path, s = ls.path_of(params.text_document.uri), ls.settings
    if result.trainer_kind is not None:
        md = trainer_assist.hover_trainer(
            result.text, line, col, result.trainer_kind, s.transformers_version, s.trl_version, path
        )
    else:
        md = assist.hover(result.text, line, col, s.accelerate_version, path, result.kind, result.doc)
        md = memhint.add_to_hover(md, result.text, line, col, result.doc, ls.memory, ls.target_env, path)
    if md is None:
        return None
    where = assist.context_at(result.text, line, col, path=ls.path_of(params.text_document.uri))
    rng = (
        protocol.lsp_range(lines, line, where.start, line, where.end, ls.encoding) if where.end > where.start else None
    )
    formats = ls._cap(lambda c: c.text_document.hover.content_format, ["markdown"]) or []
    return protocol.lsp_hover(md, "markdown" in formats, rng)


def _overlaps(d: types.Range, r: types.Range) -> bool:
    return (d.start.line, d.start.character) <= (r.end.line, r.end.character) and (r.start.line, r.start.character) <= (
        d.end.line,
        d.end.character,
    )


def _wanted(only: Sequence[str] | None, kind: str) -> bool:
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite]),
)
@_guard(lambda: None)
def code_action(ls: AccelconfLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    result = ls.analyze(uri)
    if result is None or result.kind is None or result.doc is None:
        return None
    only = params.context.only
    actions: list[types.CodeAction] = []
    if _wanted(only, types.CodeActionKind.QuickFix):
        for finding, diag in zip(result.findings, result.diagnostics):
            if finding.fix and _overlaps(diag.range, params.range):
                action = protocol.lsp_quick_fix(finding, diag, uri, result.text, ls.encoding)
                if action is not None:
                    actions.append(action)
    if _wanted(only, types.CodeActionKind.RefactorRewrite):
        action = _migrate_action(ls, uri, result)
        if action is not None:
            actions.append(action)
    return actions


def _migrate_action(ls: AccelconfLanguageServer, uri: str, result: Analysis) -> types.CodeAction | None:
    data = result.doc.data if result.doc is not None else None
    if result.kind != "accelerate" or not isinstance(data, dict) or not isinstance(data.get("fsdp_config"), dict):
        return None
    if not registry.section_active("fsdp_config", data):  # e.g. MULTI_GPU: the section is inert
        return None
    if str(data["fsdp_config"].get("fsdp_version", 1)) == "2":
        return None
    from accelconf.accelerate.migrate import migrate_text

    try:
        new = _keep_bom(result.text, lambda body: migrate_text(body, ls.path_of(uri))[0])
    except InputError:
        return None
    return protocol.lsp_rewrite(
        "Migrate to FSDP2", types.CodeActionKind.RefactorRewrite, uri, result.text, new, ls.encoding
    )


def _keep_bom(text: str, rewrite: Callable[[str], str]) -> str:
    """Rewrite a document's text; a leading byte-order mark stays out of the library's way and in the result.

    The library reads a BOM from bytes (``Document.bom``); text from a client is already decoded,
    and a BOM left in it would shift the first line's columns."""
    if text.startswith("\ufeff"):
        return "\ufeff" + rewrite(text[1:])
    return rewrite(text)


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
@_guard(lambda: None)
def formatting(ls: AccelconfLanguageServer, params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
    result = ls.analyze(params.text_document.uri)
    if result is None or result.kind is None or result.doc is None:
        return None
    from accelconf.accelerate.fmt import format_text

    try:
        new = _keep_bom(
            result.text,
            lambda body: format_text(body, ls.path_of(params.text_document.uri), ls.settings.accelerate_version),
        )
    except InputError:
        return None
    return protocol.lsp_whole_document_edit(result.text, new, ls.encoding)


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@_guard(lambda: None)
def document_symbol(
    ls: AccelconfLanguageServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol] | None:
    result = ls.analyze(params.text_document.uri)
    if result is None or result.kind is None or result.doc is None:
        return None
    return protocol.lsp_document_symbols(assist.symbols(result.doc), result.text, ls.encoding)


# -- running --------------------------------------------------------------------------------------


def _not_cancel_chatter(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Cancel notification for unknown message id")


def main(tcp: bool = False, host: str = "127.0.0.1", port: int = 2087) -> int:
    level = os.environ.get("ACCELCONF_LSP_LOG", "WARNING").upper()
    logging.basicConfig(
        level=getattr(logging, level, logging.WARNING), format="accelconf-lsp %(levelname)s %(message)s"
    )
    # A client cancels requests that were already answered (VS Code does on every cursor move);
    # pygls warns about each one on stderr, which editors show in their output panel.
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_not_cancel_chatter)
    if tcp:
        server.start_tcp(host, port)
    else:
        server.start_io()
    return 0


def _has_settings(doc: Document) -> bool:
    """An accelerate config the memory estimate can read (a document with ``distributed_type``)."""
    return isinstance(doc.data, dict) and "distributed_type" in doc.data
