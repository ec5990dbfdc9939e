-- accelconf for Neovim >= 0.8: starts the accelconf language server for accelerate configs and
-- DeepSpeed JSON.
--
--   require("accelconf").setup({
--     cmd = { "accelconf", "lsp" },
--     settings = { accelconf = { accelerateVersion = "1.15.0", target = nil, disabledRules = {} } },
--   })
--
-- On FileType yaml/json/jsonc, a buffer is handed to the server when its file name looks like an
-- accelerate or DeepSpeed config (see M.default_patterns) or when one of its first 5 lines holds
-- the modeline `# accelconf: enable` (`// accelconf: enable` in JSONC). Everything else (rules,
-- completion, fixes) lives in the server; this module only decides which buffers and how to start.
-- lsp/accelconf.lua beside this folder is the same configuration for vim.lsp.config (Neovim 0.11).

local M = {}

-- Lua patterns matched against the buffer's full path, with `/` separators. Keep in step with
-- editors/vscode/package.json and editors/nvim/lsp/accelconf.lua.
M.default_patterns = {
  "/default_config%.ya?ml$",
  "/default_config%.json$",
  "/[^/]*accelerate[^/]*%.ya?ml$",
  "/[^/]*accelerate[^/]*%.json$",
  "/accelerate_configs/[^/]+%.ya?ml$",
  "/ds_config[^/]*%.json$",
  "/[^/]*deepspeed[^/]*%.json$",
  "/zero[^/]*%.json$",
}

M.defaults = {
  -- Program and arguments that start the server on stdio.
  cmd = { "accelconf", "lsp" },
  filetypes = { "yaml", "json", "jsonc" },
  -- Sent as initializationOptions (the `accelconf` table) and answered to workspace/configuration.
  settings = { accelconf = { disabledRules = {} } },
  -- Files or folders whose nearest ancestor is the workspace root; else the file's folder.
  root_markers = { ".git", "pyproject.toml" },
  -- Extra Lua patterns (full path) of files to check, besides M.default_patterns.
  patterns = {},
  -- Set to false to ignore the `# accelconf: enable` modeline.
  modeline = true,
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

--- True when the buffer's first lines hold an `accelconf: enable` modeline in a comment.
function M.has_modeline(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, 5, false)
  for _, line in ipairs(lines) do
    if line:match("^%s*#%s*accelconf:%s*enable%f[%W]") or line:match("^%s*//%s*accelconf:%s*enable%f[%W]") then
      return true
    end
  end
  return false
end

--- True when the buffer should be checked by accelconf.
function M.is_config(bufnr, opts)
  opts = opts or M.options or M.defaults
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local path = buf_path(bufnr)
  if path ~= "" then
    for _, list in ipairs({ M.default_patterns, opts.patterns or {} }) do
      for _, pattern in ipairs(list) do
        if path:match(pattern) then
          return true
        end
      end
    end
  end
  return opts.modeline ~= false and M.has_modeline(bufnr)
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
  if vim.fn.has("nvim-0.8") == 0 then
    vim.notify("accelconf: Neovim 0.8 or newer is needed (vim.lsp.start)", vim.log.levels.ERROR)
    return
  end
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  -- Lists are replaced, not merged index by index.
  for _, key in ipairs({ "cmd", "filetypes", "root_markers", "patterns" }) do
    if opts and opts[key] ~= nil then
      M.options[key] = opts[key]
    end
  end
  local group = vim.api.nvim_create_augroup("accelconf", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.options.filetypes,
    callback = function(args)
      if vim.bo[args.buf].buftype == "" and M.is_config(args.buf) then
        M.start(args.buf)
      end
    end,
    desc = "accelconf: start the language server for accelerate and DeepSpeed configs",
  })
  -- Buffers already open when setup runs (for example when lazy-loaded).
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr)
      and vim.tbl_contains(M.options.filetypes, vim.bo[bufnr].filetype)
      and vim.bo[bufnr].buftype == ""
      and M.is_config(bufnr) then
      M.start(bufnr)
    end
  end
  vim.api.nvim_create_user_command("AccelconfRestart", function()
    for _, client in ipairs(M.clients()) do
      vim.lsp.stop_client(client.id)
    end
    vim.defer_fn(function()
      for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buftype == "" and M.is_config(bufnr) then
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
