// VS Code client for the accelconf language server.
//
// This file only starts `accelconf lsp` (or the command in `accelconf.server.command`) on stdio,
// hands it every YAML and JSON file (the server decides which are configs), and keeps the
// `accelconf` settings in sync. Every diagnostic, completion, hover, quick fix and formatting edit comes from the server.
// Plain CommonJS, no build step: the .vsix ships this file and node_modules/vscode-languageclient.
"use strict";

const fs = require("fs");
const path = require("path");
const vscode = require("vscode");
const { LanguageClient, TransportKind, State, ErrorAction, CloseAction } = require("vscode-languageclient/node");

const SECTION = "accelconf";

// Every YAML and JSON file goes to the server, which decides by content whether it is an
// accelerate config or a DeepSpeed JSON and says nothing about any other file. JSONC (settings.json,
// tsconfig.json...) is left out: neither accelerate nor DeepSpeed reads JSON with comments.
const LANGUAGES = ["yaml", "json"];

// Settings the server reads. The others in the section (server.command, trace.server) are the
// client's own, and the server would warn about them as unknown.
// The memory keys ("will it fit?") are read by the server's accelconf/assist/memhint.py.
const MEMORY_KEYS = ["params", "model", "seqLen", "microBatch", "hostRamGib", "loraRank", "loraTargets", "quant"];
// The target releases: accelerate's, and transformers'/TRL's for Trainer arguments files.
const RELEASE_KEYS = ["accelerateVersion", "transformersVersion", "trlVersion"];
const SERVER_KEYS = [...RELEASE_KEYS, "target", "disabledRules", ...MEMORY_KEYS];
// Settings that need a new server process when they change.
const RESTART_KEYS = ["server.command"];

/** @type {LanguageClient | undefined} */
let client;
/** @type {vscode.OutputChannel} */
let output;

function documentSelector() {
  return LANGUAGES.map((language) => ({ scheme: "file", language }));
}

/**
 * The settings the server reads: sent as initializationOptions and as the answer to the server's
 * workspace/configuration request for the `accelconf` section. Empty strings are left out.
 */
function serverSettings(scope) {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  const settings = { disabledRules: config.get("disabledRules", []) };
  for (const key of RELEASE_KEYS) {
    const version = config.get(key, "");
    if (version) settings[key] = version;
  }
  const target = config.get("target", "");
  if (target) settings.target = target;
  for (const key of MEMORY_KEYS) {
    const value = config.get(key, null);
    if (value !== null && value !== "") settings[key] = value;
  }
  return settings;
}

/** Middleware for workspace/configuration: only the server's keys of the `accelconf` section. */
async function configurationMiddleware(params, token, next) {
  const result = await next(params, token);
  if (!Array.isArray(result)) return result;
  return result.map((value, i) => {
    const item = params.items[i] || {};
    if (item.section !== SECTION) return value;
    const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
    return serverSettings(scope);
  });
}

function serverCommand() {
  const command = vscode.workspace.getConfiguration(SECTION).get("server.command");
  if (Array.isArray(command) && command.length > 0 && command.every((p) => typeof p === "string" && p)) {
    return command;
  }
  output.appendLine(`accelconf.server.command is not a non-empty list of strings (${JSON.stringify(command)}); using ["accelconf", "lsp"]`);
  return ["accelconf", "lsp"];
}

/**
 * The program of the server command as it will be run: an absolute or relative path that is an
 * executable file, or a name found on PATH. `undefined` when there is none.
 */
function resolveProgram(program, cwd) {
  const executable = (p) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes("/") || program.includes("\\")) {
    const full = path.resolve(cwd || process.cwd(), program);
    return executable(full) ? full : undefined;
  }
  for (const dir of (process.env.PATH || "").split(path.delimiter)) {
    if (dir && executable(path.join(dir, program))) return path.join(dir, program);
  }
  return undefined;
}

/** The one message shown when the server cannot start: what to install, which setting to set. */
async function cannotStart(reason) {
  output.appendLine(`could not start the language server: ${reason}`);
  const choice = await vscode.window.showErrorMessage(
    `accelconf: the language server cannot start (${reason}). Install accelconf where VS Code can run it ` +
      "(pip install accelconf), or set accelconf.server.command to your environment's Python, for example " +
      '["/path/to/.venv/bin/python", "-m", "accelconf", "lsp"].',
    "Open Settings",
    "Show Output",
  );
  if (choice === "Open Settings") {
    await vscode.commands.executeCommand("workbench.action.openSettings", "accelconf.server.command");
  } else if (choice === "Show Output") {
    output.show(true);
  }
}

/** A client whose own error notifications stay in the output channel while it starts: a failed
 * start gets the one message of cannotStart(), not a second "couldn't create connection". */
class AccelconfClient extends LanguageClient {
  error(message, data, showNotification) {
    super.error(message, data, this.starting ? false : showNotification);
  }
}

function createClient() {
  const [program, ...args] = serverCommand();
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];

  /** @type {import("vscode-languageclient/node").ServerOptions} */
  const serverOptions = {
    command: program,
    args,
    transport: TransportKind.stdio,
    options: folder ? { cwd: folder.uri.fsPath } : {},
  };

  let crashes = 0;
  /** @type {import("vscode-languageclient/node").LanguageClientOptions} */
  const clientOptions = {
    documentSelector: documentSelector(),
    // workspace/didChangeConfiguration with {accelconf: {...}} when one of these changes.
    synchronize: { configurationSection: SERVER_KEYS.map((key) => `${SECTION}.${key}`) },
    middleware: { workspace: { configuration: configurationMiddleware } },
    initializationOptions: serverSettings(),
    outputChannel: output,
    traceOutputChannel: output,
    diagnosticCollectionName: SECTION,
    errorHandler: {
      error: () => ({ action: ErrorAction.Shutdown, handled: true }),
      // A server that exits while starting is not restarted (startClient() says why, once);
      // a running one is restarted up to 4 times.
      closed: () => (created.starting || ++crashes > 4
        ? { action: CloseAction.DoNotRestart, handled: created.starting }
        : { action: CloseAction.Restart, handled: true }),
    },
  };

  output.appendLine(`starting: ${[program, ...args].join(" ")}`);
  const created = new AccelconfClient(SECTION, "accelconf", serverOptions, clientOptions);
  created.starting = false;
  created.onDidChangeState((event) => {
    if (event.newState === State.Stopped) output.appendLine("language server stopped");
  });
  return created;
}

async function startClient() {
  const started = Date.now();
  const [program] = serverCommand();
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  if (!resolveProgram(program, folder ? folder.uri.fsPath : undefined)) {
    await cannotStart(`${program} not found`);
    return;
  }
  client = createClient();
  client.starting = true;
  try {
    await client.start();
    output.appendLine(`language server ready in ${Date.now() - started} ms`);
  } catch (error) {
    client = undefined;
    await cannotStart(error instanceof Error ? error.message : String(error));
  } finally {
    if (client) client.starting = false;
  }
}

async function stopClient() {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop();
    } catch (error) {
      output.appendLine(`error while stopping the language server: ${error}`);
    }
  }
}

async function restartClient() {
  output.appendLine("restarting the language server");
  await stopClient();
  await startClient();
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  output = vscode.window.createOutputChannel("accelconf");
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("accelconf.restartServer", restartClient),
    vscode.commands.registerCommand("accelconf.showOutput", () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (RESTART_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`))) {
        await restartClient();
      }
      // The other accelconf settings reach the running server through
      // workspace/didChangeConfiguration (synchronize.configurationSection).
    }),
  );
  output.appendLine(`accelconf extension ${context.extension.packageJSON.version} in ${path.basename(context.extensionPath)}`);
  await startClient();
}

async function deactivate() {
  await stopClient();
}

module.exports = { activate, deactivate, documentSelector, serverSettings, configurationMiddleware, resolveProgram };
