#!/usr/bin/env node
/**
 * `generated/openapi.json`: the contract, `generated/openapi.bundle.yaml` (openapi.yaml with its
 * `/api/projects/{project_id}/` copies, scripts/gen-projects-paths.mjs), parsed once, at generation
 * time, so that the server loads its contract with JSON.parse (~2 ms) instead of parsing YAML at
 * every start (~250–550 ms on this machine, the largest part of the cold start; docs/performance.md).
 *
 *   node scripts/gen-spec-json.mjs           # write generated/openapi.json (part of `npm run gen`)
 *   node scripts/gen-spec-json.mjs --check   # exit 1 when it is missing or stale (`npm run check:gen`)
 *
 * Shape: `{"source_sha256": "<sha256 of the bundle's bytes, hex>", "document": {…}}`. The server
 * (server/http/spec.ts) uses `document` only when `source_sha256` matches the bundle beside it,
 * and parses the YAML otherwise, so a stale file can slow a start but never change the contract.
 * Run after scripts/gen-projects-paths.mjs (as `npm run gen` does), which writes the bundle.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'generated', 'openapi.bundle.yaml');
const target = path.join(root, 'generated', 'openapi.json');

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(
    'usage: node scripts/gen-spec-json.mjs [--check]\nWrites generated/openapi.json from generated/openapi.bundle.yaml; --check fails when it is stale.',
  );
  process.exit(0);
}
const bytes = fs.readFileSync(source);
const text = `${JSON.stringify({ source_sha256: createHash('sha256').update(bytes).digest('hex'), document: parse(bytes.toString('utf8')) })}\n`;
if (process.argv.includes('--check')) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== text) {
    console.error('generated/openapi.json is stale: run `npm run gen` and commit it.');
    process.exit(1);
  }
  console.log('generated/openapi.json is up to date.');
} else {
  fs.writeFileSync(target, text);
  console.log(`wrote ${path.relative(root, target)}`);
}
