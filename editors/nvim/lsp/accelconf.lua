-- accelconf language server for Neovim >= 0.11 (vim.lsp.config / vim.lsp.enable), in the
-- nvim-lspconfig `lsp/<name>.lua` layout. With this folder on 'runtimepath':
--
--   vim.lsp.config("accelconf", { settings = { accelconf = { accelerateVersion = "1.15.0" } } })
--   vim.lsp.enable("accelconf")
--
-- Every yaml and json file buffer is attached; the server decides by content which are accelerate
-- configs or DeepSpeed JSON and says nothing about the others. Self-contained on purpose (no
-- require of lua/accelconf), so it can be copied into nvim-lspconfig as is.

local root_markers = { ".git", "pyproject.toml" }

---@type vim.lsp.Config
return {
  cmd = { "accelconf", "lsp" },
  filetypes = { "yaml", "json" },
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
    if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
      return -- not a file
    end
    on_dir(vim.fs.root(bufnr, root_markers) or vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)))
  end,
}
