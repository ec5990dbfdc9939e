;;; accelconf-eglot.el --- accelconf language server in Eglot  -*- lexical-binding: t -*-

;; Every YAML and JSON file buffer is handed to `accelconf lsp'; the server decides by content
;; which are accelerate configs or DeepSpeed JSON and says nothing about the others (a
;; `# accelconf: enable' / `disable' comment in the first 5 lines overrides, read by the server).
;; Diagnostics show through Flymake, quick fixes through `eglot-code-actions'.
;;
;; Load it from your init file (Emacs >= 28 with Eglot >= 1.9; YAML needs `yaml-mode' or Emacs
;; 29's `yaml-ts-mode'):
;;
;;   (setq accelconf-eglot-command '("/path/to/.venv/bin/python" "-m" "accelconf" "lsp")) ; optional
;;   (load "/path/to/accelconf/editors/emacs/accelconf-eglot.el")
;;
;; Settings reach the server as initializationOptions, from `accelconf-eglot-settings', e.g.
;;   (setq accelconf-eglot-settings '(:accelerateVersion "1.15.0" :disabledRules ["yaml-bool-value"]))

;;; Code:

(require 'eglot)

(defvar accelconf-eglot-command '("accelconf" "lsp")
  "Program and arguments that start the accelconf language server on stdio.")

(defvar accelconf-eglot-settings '(:disabledRules [])
  "The `accelconf' settings: :accelerateVersion, :target, :disabledRules.")

(defvar accelconf-eglot-modes '(yaml-mode yaml-ts-mode js-json-mode json-mode json-ts-mode)
  "Major modes whose buffers go to the accelconf server.")

;; Emacs 28 opens .json files in js-mode, which JavaScript shares: give JSON its own mode, as
;; Emacs 29 does, so that only JSON files reach accelconf.
(unless (fboundp 'js-json-mode)
  (define-derived-mode js-json-mode js-mode "JSON"
    "JavaScript mode for JSON files (Emacs 29 has this built in).")
  (add-to-list 'auto-mode-alist '("\\.json\\'" . js-json-mode)))

(defclass accelconf-eglot-server (eglot-lsp-server) ()
  :documentation "The accelconf language server.")

(cl-defmethod eglot-initialization-options ((_server accelconf-eglot-server))
  accelconf-eglot-settings)

(add-to-list 'eglot-server-programs
             `(,accelconf-eglot-modes . ,(lambda (&rest _) (cons 'accelconf-eglot-server accelconf-eglot-command))))

(defun accelconf-eglot-ensure ()
  "Start (or join) the accelconf server for a buffer visiting a file."
  (when buffer-file-name
    (eglot-ensure)))

(dolist (mode accelconf-eglot-modes)
  (add-hook (intern (format "%s-hook" mode)) #'accelconf-eglot-ensure))

(provide 'accelconf-eglot)
;;; accelconf-eglot.el ends here
