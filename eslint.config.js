// The project's own lint: ESLint's and typescript-eslint's recommended rules for every source, and
// this package's own plugin (read from dist/, so `npm run build` comes first, as in `npm test`) on
// the code written the way a user writes it: the samples and the benches. test/fixtures/eslint/ has
// its own config (ESLint looks one up from each file's folder) and its deliberate mistakes: npm run
// lint leaves it out.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import nresilience from './dist/eslint-plugin/index.js';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/',
      'dist/',
      'dist-sample/',
      'dist-docs/',
      'coverage/',
      'bench/results/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      // A method decorator's wrapper and the executor's loop hand a dynamic `this` to an inner function.
      '@typescript-eslint/no-this-alias': 'off',
    },
  },
  // Tests build a fresh policy per case on purpose, so the plugin's per-call rule would only be noise there.
  { files: ['sample/**/*.ts', 'bench/**/*.ts'], ...nresilience.configs.recommended },
);
