// ESLint: typescript-eslint's recommended rules on every TypeScript file, and the layers of the
// server held by eslint-plugin-boundaries (README.md, "Layout"). `npm test` runs it.
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The server's layers, from the outside in. A file belongs to the first element whose pattern
 * matches. Requests go http → handlers → domain → storage; nothing points back out.
 */
const elements = [
  { type: 'client', pattern: 'client' },
  { type: 'generated', pattern: 'generated' },
  { type: 'storage', pattern: 'server/storage' },
  { type: 'domain', pattern: 'server/domain' },
  { type: 'read-pool', pattern: 'server/read-pool' },
  { type: 'ingest', pattern: 'server/ingest' },
  { type: 'capture', pattern: 'server/capture' },
  { type: 'hogql', pattern: 'server/hogql' },
  { type: 'insights', pattern: 'server/insights' },
  { type: 'handlers', pattern: 'server/handlers' },
  { type: 'http', pattern: 'server/http' },
  { type: 'cli', pattern: 'server/cli' },
  // the composition root: the files directly in server/ (app, main, bootstrap, config)
  { type: 'root', pattern: 'server' },
].map((e) => ({ ...e, partialMatch: false }));
/** Each layer's error module (`errors.ts`): what http/ maps to PostHog's error shape. */
const files = [{ category: 'errors', pattern: 'server/*/errors.ts' }];

/** What each layer may import besides itself (and npm packages). */
const allowed = {
  client: ['generated'],
  generated: [],
  storage: ['generated'],
  // the query service and the events list's select/where run HogQL (server/hogql/) and the query kinds (server/insights/)
  domain: ['storage', 'generated', 'hogql', 'insights'],
  // the read pool runs the domain's events reads in worker threads
  'read-pool': ['domain', 'storage'],
  // import and demo data: application services over the domain and the store
  ingest: ['domain', 'storage'],
  // the capture endpoints: decoding, PostHog's event processing, group commit through ingest/'s write path
  capture: ['ingest', 'domain', 'storage'],
  // HogQL: PostHog's parser and the compiler to each store's SQL. The domain calls it, so it never
  // imports the domain: it throws its own HogQLError, which the domain turns into an ApiError
  hogql: ['storage', 'generated'],
  // the query kinds (TrendsQuery, …): HogQL text over the events, run through the context the
  // domain gives them; they throw their own InsightQueryError, which the domain maps
  insights: ['hogql', 'generated'],
  handlers: ['domain', 'http', 'generated'],
  http: ['domain', 'generated'],
  // the CLI starts the server (server/main.ts) and reads its configuration
  cli: ['root', 'domain', 'storage', 'ingest', 'generated'],
  root: ['storage', 'domain', 'read-pool', 'ingest', 'capture', 'hogql', 'handlers', 'http', 'generated'],
};

const policies = [
  ...Object.entries(allowed).map(([type, to]) => ({
    from: { element: { type } },
    allow: { to: { element: { types: { anyOf: [type, ...to] } } } },
  })),
  // http/ maps the errors of every layer to PostHog's shape: it may import their error modules
  {
    from: { element: { type: 'http' } },
    allow: { to: { element: { types: { anyOf: ['storage', 'read-pool'] } }, file: { categories: 'errors' } } },
  },
];

/**
 * The events store has one entry point (server/storage/events/index.ts, ARCHITECTURE.md "Stores"):
 * outside server/storage/, no module imports another module of server/storage/events/, where the
 * events rows' layout lives (their type-only imports too). test/lint/events-store.test.ts proves
 * the rules below refuse what they must.
 */
const eventsLayoutImports = {
  regex: '/storage/events/(?!index\\.js$)',
  message: 'The events row layout stays behind the events-store interface: import server/storage/events/index.js.',
};

/**
 * The domain builds no SQL: its SQL is the repositories' and the events store's (they take plain
 * values). A Kysely type (`Kysely`, `Transaction`) may still pass a transaction through.
 */
const domainSql = {
  kysely: {
    name: 'kysely',
    importNames: ['sql'],
    message: 'The domain builds no SQL: put it in a repository of server/storage/ (or the events store).',
  },
  builderCalls: {
    selector: 'CallExpression[callee.property.name=/^(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto)$/]',
    message: 'The domain builds no queries: put this one in a repository of server/storage/ (or the events store).',
  },
};

export default tseslint.config(
  // server/domain/plugin-catalog/: the built-in plugins as data, their frontends transpiled browser
  // code served as it is (server/domain/plugin-catalog.ts), not modules of this project
  { ignores: ['dist/**', 'client/dist/**', 'node_modules/**', 'generated/**', 'server/domain/plugin-catalog/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['server/**/*.ts', 'client/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': elements,
      'boundaries/files': files,
      'boundaries/include': ['server/**/*.ts', 'client/**/*.ts', 'generated/**/*.ts'],
      'import/resolver': { typescript: { project: './tsconfig.json' } },
    },
    rules: {
      'boundaries/no-unknown-dependencies': 'error',
      'boundaries/no-unknown-files': 'error',
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          policies,
        },
      ],
    },
  },
  {
    files: ['server/**/*.ts'],
    ignores: ['server/storage/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [eventsLayoutImports] }],
    },
  },
  {
    files: ['server/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [domainSql.kysely], patterns: [eventsLayoutImports] }],
      'no-restricted-syntax': ['error', domainSql.builderCalls],
    },
  },
);
