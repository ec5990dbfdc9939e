// VS Code client for the accelconf language server.
//
// This file only starts `accelconf lsp` (or the command in `accelconf.server.command`) on stdio,
// hands it the accelerate config and DeepSpeed JSON files, and keeps the `accelconf` settings in
// sync. Every diagnostic, completion, hover, quick fix and formatting edit comes from the server.
// Plain CommonJS, no build step: the .vsix ships this file and node_modules/vscode-languageclient.
"use strict";

const path = require("path");
const vscode = require("vscode");
const { LanguageClient, TransportKind, State } = require("vscode-languageclient/node");

const SECTION = "accelconf";

// Keep in step with contributes.yamlValidation / jsonValidation in package.json and with the
// patterns in editors/nvim.
const YAML_PATTERNS = [
  "**/default_config.yaml",
  "**/*accelerate*.{yaml,yml}",
  "**/accelerate_configs/*.{yaml,yml}",
];
const JSON_PATTERNS = [
  "**/default_config.json",
  "**/*accelerate*.json",
  "**/ds_config*.json",
  "**/*deepspeed*.json",
  "**/zero*.json",
];

// Settings the server reads. The others in the section (server.command, filePatterns,
// trace.server) are the client's own, and the server would warn about them as unknown.
const SERVER_KEYS = ["accelerateVersion", "target", "disabledRules"];
// Settings that need a new server process when they change.
const RESTART_KEYS = ["server.command", "filePatterns"];

/** @type {LanguageClient | undefined} */
let client;
/** @type {vscode.OutputChannel} */
let output;

function documentSelector(extraPatterns) {
  const selector = [];
  for (const language of ["yaml"]) {
    for (const pattern of YAML_PATTERNS) selector.push({ scheme: "file", language, pattern });
  }
  for (const language of ["json", "jsonc"]) {
    for (const pattern of JSON_PATTERNS) selector.push({ scheme: "file", language, pattern });
  }
  for (const pattern of extraPatterns) {
    for (const language of ["yaml", "json", "jsonc"]) {
      selector.push({ scheme: "file", language, pattern });
    }
  }
  return selector;
}

/**
 * The settings the server reads: sent as initializationOptions and as the answer to the server's
 * workspace/configuration request for the `accelconf` section. Empty strings are left out.
 */
function serverSettings(scope) {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  const settings = { disabledRules: config.get("disabledRules", []) };
  const accelerateVersion = config.get("accelerateVersion", "");
  const target = config.get("target", "");
  if (accelerateVersion) settings.accelerateVersion = accelerateVersion;
  if (target) settings.target = target;
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

function createClient() {
  const [program, ...args] = serverCommand();
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  const extraPatterns = vscode.workspace.getConfiguration(SECTION).get("filePatterns", []);

  /** @type {import("vscode-languageclient/node").ServerOptions} */
  const serverOptions = {
    command: program,
    args,
    transport: TransportKind.stdio,
    options: folder ? { cwd: folder.uri.fsPath } : {},
  };

  /** @type {import("vscode-languageclient/node").LanguageClientOptions} */
  const clientOptions = {
    documentSelector: documentSelector(Array.isArray(extraPatterns) ? extraPatterns : []),
    // workspace/didChangeConfiguration with {accelconf: {...}} when one of these changes.
    synchronize: { configurationSection: SERVER_KEYS.map((key) => `${SECTION}.${key}`) },
    middleware: { workspace: { configuration: configurationMiddleware } },
    initializationOptions: serverSettings(),
    outputChannel: output,
    traceOutputChannel: output,
    diagnosticCollectionName: SECTION,
  };

  output.appendLine(`starting: ${[program, ...args].join(" ")}`);
  const created = new LanguageClient(SECTION, "accelconf", serverOptions, clientOptions);
  created.onDidChangeState((event) => {
    if (event.newState === State.Stopped) output.appendLine("language server stopped");
  });
  return created;
}

async function startClient() {
  client = createClient();
  try {
    await client.start();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    output.appendLine(`could not start the language server: ${message}`);
    const choice = await vscode.window.showErrorMessage(
      `accelconf: could not start the language server (${message}). Is accelconf installed? ` +
        "Set accelconf.server.command to the command that runs `accelconf lsp`.",
      "Open Settings",
      "Show Output",
    );
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "accelconf.server.command");
    } else if (choice === "Show Output") {
      output.show(true);
    }
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

module.exports = { activate, deactivate, documentSelector, serverSettings, configurationMiddleware };
