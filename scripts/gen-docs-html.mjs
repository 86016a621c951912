#!/usr/bin/env node
/**
 * `generated/api-docs.html`: the HTML API reference served at `GET /docs` (server/http/docs.ts),
 * built from the contract, `generated/openapi.bundle.yaml` (openapi.yaml with its
 * `/api/projects/{project_id}/` copies), by Redocly's `build-docs` (@redocly/cli, a devDependency) with
 * `--inlineBundle`, so the page carries Redoc's scripts and the document itself and loads nothing
 * from a CDN at run time.
 *
 *   node scripts/gen-docs-html.mjs           # write generated/api-docs.html (part of `npm run gen`)
 *   node scripts/gen-docs-html.mjs --check   # exit 1 when it is missing or stale (`npm run check:gen`)
 *
 * The page documents `docsDocument(bundle)`, not the file as it is: each operation under
 * `/api/environments/{project_id}/…` has a generated twin under `/api/projects/{project_id}/…`
 * (scripts/gen-projects-paths.mjs, docs/contract-plan.md), the same operation with the same
 * summary, so listing both would show every sidebar entry twice. The page lists the projects form
 * only (PostHog's canonical prefix, the one its own clients use), in the place of the environments
 * path it mirrors (so each tag keeps the hand-written order), and each such operation's
 * description ends with a note naming its alias under `/api/environments/{project_id}/` and the
 * alias's operationId. Operations without a twin are kept as they are. Only this page changes:
 * the bundle, generated/openapi.json (what the server loads) and `GET /api/schema/` keep both
 * prefixes. test/server/schema-docs.test.ts reads the document embedded in the page back and
 * checks it (each operation once, summaries unique within a tag, every alias named).
 *
 * One change is made to Redocly's output: the sidebar's "API docs by Redocly" logo, the only
 * thing the page would still load from Redocly's CDN (cdn.redoc.ly), is an inline SVG (`data:`
 * URL) naming Redocly instead. Redoc's telemetry is off (`REDOCLY_TELEMETRY=off` at build time).
 *
 * The output is byte-for-byte reproducible for one @redocly/cli version (checked: two builds are
 * identical), which is what makes the `--check` comparison meaningful. Takes ~1 s; ~2.9 MB.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, 'generated', 'api-docs.html');

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(
    'usage: node scripts/gen-docs-html.mjs [--check]\nWrites generated/api-docs.html from generated/openapi.bundle.yaml (redocly build-docs); --check fails when it is stale.',
  );
  process.exit(0);
}

/** The CDN logo URLs of Redoc 3's sidebar, and the inline SVG that replaces them. */
const CDN_LOGOS = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];
const INLINE_LOGO =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='56' height='16'%3E%3Ctext x='0' y='12' font-family='sans-serif' font-size='12' fill='%23888'%3ERedocly%3C/text%3E%3C/svg%3E";

/** Redocly's page without a request to its CDN; throws when the logo URLs are not where expected (a new @redocly/cli). */
function withoutCdn(html) {
  let out = html;
  for (const url of CDN_LOGOS) {
    if (!out.includes(url))
      throw new Error(`${url} not found in build-docs' output: revisit scripts/gen-docs-html.mjs for this @redocly/cli version`);
    out = out.split(url).join(INLINE_LOGO);
  }
  return out;
}

const ENV_PREFIX = '/api/environments/{project_id}/';
const PROJECTS_PREFIX = '/api/projects/{project_id}/';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The note ending a projects operation's description: its alias under the environments prefix. */
function aliasNote(method, envPath, envOperationId) {
  return (
    `**Also served at** \`${method.toUpperCase()} ${envPath}\` (operationId \`${envOperationId}\`): the same ` +
    "operation under PostHog's environments prefix, with the same parameters, body, answers, scopes and " +
    'rate limit. This reference lists it once, under `/api/projects/{project_id}/`.'
  );
}

/**
 * The document the page shows (module doc): `doc` with each environments path that has a projects
 * twin replaced, at its place, by that twin, whose operations' descriptions name the alias. A
 * paragraph at the end of `info.description` says so. `doc` is not modified.
 */
function docsDocument(doc) {
  const paths = {};
  const twins = new Set();
  for (const p of Object.keys(doc.paths)) {
    if (!p.startsWith(ENV_PREFIX)) continue;
    const twin = PROJECTS_PREFIX + p.slice(ENV_PREFIX.length);
    if (doc.paths[twin]) twins.add(twin);
  }
  for (const [p, item] of Object.entries(doc.paths)) {
    if (twins.has(p)) continue;
    const twinPath = p.startsWith(ENV_PREFIX) ? PROJECTS_PREFIX + p.slice(ENV_PREFIX.length) : undefined;
    if (!twinPath || !twins.has(twinPath)) {
      paths[p] = item;
      continue;
    }
    const twin = structuredClone(doc.paths[twinPath]);
    for (const method of METHODS) {
      if (!twin[method]) continue;
      const envOp = item[method];
      if (!envOp) throw new Error(`${method.toUpperCase()} ${twinPath} has no twin under ${p}: revisit scripts/gen-projects-paths.mjs`);
      twin[method].description = `${(twin[method].description ?? '').trimEnd()}\n\n${aliasNote(method, p, envOp.operationId)}\n`;
    }
    paths[twinPath] = twin;
  }
  const info = {
    ...doc.info,
    description:
      `${(doc.info.description ?? '').trimEnd()}\n\n## This reference\n\n` +
      'Each operation served under both `/api/projects/{project_id}/…` and `/api/environments/{project_id}/…` ' +
      'is listed once, under `/api/projects/{project_id}/…`; its description names the alias. ' +
      '`GET /api/schema/` answers the complete document, with both prefixes.\n',
  };
  return { ...doc, info, paths };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-docs-'));
const out = path.join(dir, 'api-docs.html');
try {
  // the transformed document, under the hand-written source's file name (Redoc's download name)
  const input = path.join(dir, 'openapi.yaml');
  fs.writeFileSync(
    input,
    stringify(docsDocument(parse(fs.readFileSync(path.join(root, 'generated', 'openapi.bundle.yaml'), 'utf8'))), { lineWidth: 0 }),
  );
  execFileSync(
    process.execPath,
    [
      path.join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js'),
      'build-docs',
      input,
      '--inlineBundle',
      '--title',
      'envapi API reference',
      '-o',
      out,
    ],
    {
      cwd: root,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const built = Buffer.from(withoutCdn(fs.readFileSync(out, 'utf8')), 'utf8');
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(target) ? fs.readFileSync(target) : Buffer.alloc(0);
    if (!current.equals(built)) {
      console.error('generated/api-docs.html is stale: run `npm run gen` and commit it.');
      process.exit(1);
    }
    console.log('generated/api-docs.html is up to date.');
  } else {
    fs.writeFileSync(target, built);
    console.log(`wrote ${path.relative(root, target)} (${built.length} bytes)`);
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
