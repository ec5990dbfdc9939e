-- accelconf language server for Neovim >= 0.11 (vim.lsp.config / vim.lsp.enable), in the
-- nvim-lspconfig `lsp/<name>.lua` layout. With this folder on 'runtimepath':
--
--   vim.lsp.config("accelconf", { settings = { accelconf = { accelerateVersion = "1.15.0" } } })
--   vim.lsp.enable("accelconf")
--
-- The server starts only for yaml/json buffers whose path looks like an accelerate or DeepSpeed
-- config, or whose first 5 lines hold `# accelconf: enable`: root_dir does not call on_dir for
-- other buffers. Self-contained on purpose (no require of lua/accelconf), so it can be copied
-- into nvim-lspconfig as is; keep the patterns in step with lua/accelconf/init.lua.

local patterns = {
  "/default_config%.ya?ml$",
  "/default_config%.json$",
  "/[^/]*accelerate[^/]*%.ya?ml$",
  "/[^/]*accelerate[^/]*%.json$",
  "/accelerate_configs/[^/]+%.ya?ml$",
  "/ds_config[^/]*%.json$",
  "/[^/]*deepspeed[^/]*%.json$",
  "/zero[^/]*%.json$",
}

local root_markers = { ".git", "pyproject.toml" }

local function is_config(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr):gsub("\\", "/")
  if path ~= "" then
    for _, pattern in ipairs(patterns) do
      if path:match(pattern) then
        return true
      end
    end
  end
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, 5, false)) do
    if line:match("^%s*#%s*accelconf:%s*enable%f[%W]") or line:match("^%s*//%s*accelconf:%s*enable%f[%W]") then
      return true
    end
  end
  return false
end

---@type vim.lsp.Config
return {
  cmd = { "accelconf", "lsp" },
  filetypes = { "yaml", "json", "jsonc" },
  -- Documentation only: root_dir below decides (a function root_dir takes precedence).
  root_markers = root_markers,
  settings = {
    accelconf = {
      -- accelerateVersion = "1.15.0",
      -- target = "/path/to/machine-profile.yaml",
      disabledRules = {},
    },
  },
  before_init = function(params, config)
    -- The server reads its settings from initializationOptions too.
    params.initializationOptions = (config.settings or {}).accelconf or {}
  end,
  root_dir = function(bufnr, on_dir)
    if not is_config(bufnr) then
      return
    end
    on_dir(vim.fs.root(bufnr, root_markers) or vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)))
  end,
}
