// Lint: typescript-eslint with type information. The rules that matter here: no promise left
// floating (an unhandled rejection or an unawaited write is a lost error), and no unused code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'packages/*/dist/**', 'dist-typecheck/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
        AbortController: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        fetch: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Tests and the wire code read untyped JSON on purpose; strict mode already forbids implicit any.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-control-regex': 'off',
    },
  },
  // The packages' sources are typed by the root tsconfig.json, which maps each package to its
  // sources: their own tsconfig.json (for \`tsc -b\`) reads each other's dist/, absent before a build.
  {
    files: ['packages/*/src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false, project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
  },
  // The plain-JavaScript harnesses (bench, soak, child processes of tests) have no types to lint with.
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
  // Except bench and soak: tsconfig.js.json types them from their JSDoc (the same file list), so a
  // promise left floating there is caught too.
  {
    files: ['bench/*.mjs', 'test/soak/*.mjs'],
    languageOptions: { parserOptions: { project: './tsconfig.js.json', tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
);
