-- accelconf for Neovim: starts the accelconf language server for every yaml and json buffer.
--
--   require("accelconf").setup({
--     cmd = { "accelconf", "lsp" },
--     settings = { accelconf = { accelerateVersion = "1.15.0", target = nil, disabledRules = {} } },
--   })
--
-- On FileType yaml/json, every buffer of a file is handed to the server, which decides by content
-- whether it is an accelerate config or a DeepSpeed JSON and says nothing about any other file (a
-- `# accelconf: enable` / `disable` comment in the first 5 lines overrides, read by the server).
-- Everything else (rules, completion, fixes) lives in the server; this module only starts it.
-- lsp/accelconf.lua beside this folder is the same configuration for vim.lsp.config (Neovim 0.11).

local M = {}

M.defaults = {
  -- Program and arguments that start the server on stdio.
  cmd = { "accelconf", "lsp" },
  filetypes = { "yaml", "json" },
  -- Sent as initializationOptions (the `accelconf` table) and answered to workspace/configuration.
  settings = { accelconf = { disabledRules = {} } },
  -- Files or folders whose nearest ancestor is the workspace root; else the file's folder.
  root_markers = { ".git", "pyproject.toml" },
  -- Passed through to vim.lsp.start.
  on_attach = nil,
  capabilities = nil,
  name = "accelconf",
}

M.options = nil

local function buf_path(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then
    return ""
  end
  return (name:gsub("\\", "/"))
end

--- True when the buffer is a file accelconf's server should see: a yaml or json file buffer.
--- Which of those are configs is the server's decision, by content.
function M.is_config(bufnr, opts)
  opts = opts or M.options or M.defaults
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return vim.bo[bufnr].buftype == ""
    and buf_path(bufnr) ~= ""
    and vim.tbl_contains(opts.filetypes, vim.bo[bufnr].filetype)
end

--- The workspace root for a buffer: the nearest folder holding a root marker, else its folder.
function M.root_dir(bufnr, opts)
  opts = opts or M.options or M.defaults
  local path = buf_path(bufnr)
  local start = path ~= "" and vim.fs.dirname(path) or (vim.uv or vim.loop).cwd()
  local found = vim.fs.find(opts.root_markers, { path = start, upward = true })[1]
  return found and vim.fs.dirname(found) or start
end

--- Start (or reuse) the accelconf client for a buffer, whatever its name.
function M.start(bufnr, opts)
  opts = opts or M.options or M.defaults
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local settings = opts.settings or {}
  local config = {
    name = opts.name,
    cmd = opts.cmd,
    root_dir = M.root_dir(bufnr, opts),
    settings = settings,
    init_options = settings.accelconf or {},
    on_attach = opts.on_attach,
    capabilities = opts.capabilities,
  }
  -- vim.lsp.start attaches the current buffer on 0.8 and 0.9 (opts.bufnr came later).
  local client_id
  vim.api.nvim_buf_call(bufnr, function()
    client_id = vim.lsp.start(config, { bufnr = bufnr })
  end)
  return client_id
end

function M.setup(opts)
  if vim.fn.has("nvim-0.11") == 0 then
    vim.notify("accelconf: Neovim 0.11 or newer is needed (the oldest release tested)", vim.log.levels.ERROR)
    return
  end
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  -- Lists are replaced, not merged index by index.
  for _, key in ipairs({ "cmd", "filetypes", "root_markers" }) do
    if opts and opts[key] ~= nil then
      M.options[key] = opts[key]
    end
  end
  local group = vim.api.nvim_create_augroup("accelconf", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.options.filetypes,
    callback = function(args)
      if M.is_config(args.buf) then
        M.start(args.buf)
      end
    end,
    desc = "accelconf: offer yaml/json buffers to the accelconf language server",
  })
  -- Buffers already open when setup runs (for example when lazy-loaded).
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and M.is_config(bufnr) then
      M.start(bufnr)
    end
  end
  vim.api.nvim_create_user_command("AccelconfRestart", function()
    for _, client in ipairs(M.clients()) do
      vim.lsp.stop_client(client.id)
    end
    vim.defer_fn(function()
      for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(bufnr) and M.is_config(bufnr) then
          M.start(bufnr)
        end
      end
    end, 500)
  end, { desc = "accelconf: restart the language server" })
end

--- The running accelconf clients.
function M.clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return get({ name = (M.options or M.defaults).name })
end

return M
