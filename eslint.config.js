import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  globalIgnores(["node_modules/", ".wrangler/", "dist/", "coverage/", "public/docs/scalar/", "public/vendor/", "test-results/", "worker-configuration.d.ts"]),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ["bench/**/*.ts", "chaos/**/*.ts", "scripts/**/*.ts", "bin/**/*.mjs", "*.js", "*.mjs"],
    languageOptions: {
      globals: { process: "readonly", console: "readonly", URL: "readonly" },
    },
  },
  {
    // The dashboard: plain modules the browser loads as they are.
    files: ["public/app/**/*.js"],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
    },
  },
  {
    // The tools are code too: the bench and the soak are how we know anything.
    files: ["bench/**/*.ts", "chaos/**/*.ts", "scripts/**/*.ts"],
    rules: { "max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Tests read untyped JSON responses; typing every nested field would add noise, not safety.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
