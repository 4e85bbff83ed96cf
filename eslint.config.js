// The project's own lint: typescript-eslint's recommended rules for every TypeScript source, and
// this package's own plugin (built into dist/ by `npm run build`, which `npm run lint` needs first)
// on the code written the way a user writes it: the samples and the benches.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import nresilience from './dist/eslint-plugin/index.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'dist-sample/', 'dist-docs/', 'coverage/', 'test/compat/*/node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['sample/**/*.ts', 'bench/**/*.ts'],
    ...nresilience.configs.recommended,
  },
);
