// ESLint for the JavaScript we write: the page and its worker (browser modules), the service worker,
// the node and browser tests and the benchmark drivers. `npm run lint` (scripts/test.sh runs it) names
// those folders; the ignores below also keep a bare `eslint .` out of fetched and built files.
import js from '@eslint/js';
import globals from 'globals';

export default [
  {
    ignores: [
      '.cache/**',
      'data/**',
      'web/vendor/**',
      'node_modules/**',
      'pkg/**',
      'pkg-threads/**',
      'target/**',
      'fuzz/**',
      'tests/browser/out/**',
    ],
  },
  js.configs.recommended,
  {
    rules: {
      'no-unused-vars': ['error', { args: 'after-used', caughtErrors: 'none', ignoreRestSiblings: true }],
      eqeqeq: ['error', 'smart'],
      'prefer-const': 'error',
      'no-var': 'error',
      // Prettier wraps code at 120 columns but never breaks a string: long sentences for the user stay whole.
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
    },
  },
  {
    files: ['web/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
    // A screen is a file a newcomer reads at once, and a function fits on a screen or two (issue #61).
    rules: {
      'max-lines': ['error', { max: 500, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }],
    },
  },
  { files: ['web/worker/**/*.js'], languageOptions: { globals: { ...globals.worker } } },
  { files: ['sw.js'], languageOptions: { sourceType: 'script', globals: { ...globals.serviceworker } } },
  { files: ['web/csp.js'], languageOptions: { sourceType: 'script' } },
  {
    files: ['tests/**/*.mjs', 'scripts/**/*.mjs', 'eslint.config.js'],
    languageOptions: { globals: { ...globals.node } },
  },
  // Browser tests pass functions to page.evaluate, which run in the page.
  {
    files: ['tests/browser/**/*.mjs', 'scripts/**/*.mjs'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
];
