/**
 * server/domain/plugin-catalog.ts: the built-in catalog loaded from its data files
 * (server/domain/plugin-catalog/), and the load's refusal of a file of the wrong shape, which names
 * the file and the field.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPluginCatalog, PLUGIN_CATALOG, PluginCatalogError } from '../../server/domain/plugin-catalog.js';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../server/domain/plugin-catalog');

/** A scratch copy of the catalog's folder, with `edit` applied (file name → new text, or null to delete). */
function catalogCopy(edit: Record<string, string | null>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plugin-catalog-'));
  for (const f of fs.readdirSync(DATA)) fs.copyFileSync(path.join(DATA, f), path.join(dir, f));
  for (const [f, text] of Object.entries(edit)) {
    if (text === null) fs.rmSync(path.join(dir, f));
    else fs.writeFileSync(path.join(dir, f), text);
  }
  copies.push(dir);
  return dir;
}
const copies: string[] = [];
afterEach(() => {
  for (const d of copies.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The JSON of `<key>.json` changed by `change`. */
function edited(key: string, change: (entry: Record<string, unknown>) => void): string {
  const entry = JSON.parse(fs.readFileSync(path.join(DATA, `${key}.json`), 'utf8')) as Record<string, unknown>;
  change(entry);
  return JSON.stringify(entry);
}

/** The message of the error `loadPluginCatalog(dir)` throws. */
function loadError(dir: string): string {
  try {
    loadPluginCatalog(dir);
  } catch (err) {
    expect(err).toBeInstanceOf(PluginCatalogError);
    return (err as Error).message;
  }
  throw new Error('the catalog loaded');
}

describe('the plugin catalog', () => {
  it('holds the eight built-in plugins in install order, deeply frozen', () => {
    expect(PLUGIN_CATALOG.map((p) => p.key)).toEqual([
      'customerio',
      'hubspot',
      'webhook',
      'geoip',
      'property-filter',
      'notification-bar',
      'pineapple-mode',
      'github-star-sync',
    ]);
    expect(Object.isFrozen(PLUGIN_CATALOG)).toBe(true);
    expect(Object.isFrozen(PLUGIN_CATALOG[0]!.config_schema[0])).toBe(true);
  });

  it('reads a frontend source from its file, without the file’s final newline', () => {
    const bar = PLUGIN_CATALOG.find((p) => p.key === 'notification-bar')!;
    expect(bar.frontend_source).toMatch(/^"use strict";\nexport function getFrontendApp \(require\) \{/);
    expect(bar.frontend_source).toMatch(/return exports; \}$/);
    expect(PLUGIN_CATALOG.find((p) => p.key === 'pineapple-mode')!.frontend_source).toContain("'\\u{1F34D}'");
    expect(PLUGIN_CATALOG.find((p) => p.key === 'hubspot')!.frontend_source).toBeNull();
  });

  it('keeps each field’s keys in the order of its file', () => {
    const first = PLUGIN_CATALOG[0]!.config_schema[0]!;
    expect(Object.keys(first)).toEqual(['key', 'name', 'type', 'hint', 'default', 'required', 'secret']);
  });

  it('loads a copy of its folder to the same entries', () => {
    expect(loadPluginCatalog(catalogCopy({}))).toEqual(PLUGIN_CATALOG);
  });
});

describe('loadPluginCatalog: a file of the wrong shape', () => {
  it('names the file and the field of a wrong type', () => {
    const dir = catalogCopy({
      'hubspot.json': edited('hubspot', (e) => ((e.config_schema as Record<string, unknown>[])[1]!.type = 'text')),
    });
    expect(loadError(dir)).toBe(
      `${path.join(dir, 'hubspot.json')}: config_schema[1].type must be one of "string", "choice", "attachment", "json", "dictionary", "boolean", not "text"`,
    );
  });

  it('names a missing field and an unknown one', () => {
    expect(loadError(catalogCopy({ 'geoip.json': edited('geoip', (e) => delete e.migrator) }))).toMatch(
      /geoip\.json: the entry lacks "migrator"$/,
    );
    expect(loadError(catalogCopy({ 'geoip.json': edited('geoip', (e) => (e.enabled = true)) }))).toMatch(
      /geoip\.json: the entry has an unknown field "enabled"/,
    );
  });

  it('refuses a key that is not the file’s name, and text that is not JSON', () => {
    expect(loadError(catalogCopy({ 'webhook.json': edited('webhook', (e) => (e.key = 'hook')) }))).toMatch(
      /webhook\.json: key must be "webhook", the file's name, not "hook"$/,
    );
    expect(loadError(catalogCopy({ 'webhook.json': '{"key": ' }))).toMatch(/webhook\.json: is not JSON: /);
  });

  it('refuses a listed plugin without its file, and a file catalog.json does not list', () => {
    expect(loadError(catalogCopy({ 'geoip.json': null }))).toMatch(/geoip\.json: cannot be read \(ENOENT\)$/);
    expect(loadError(catalogCopy({ 'extra.json': '{}' }))).toMatch(/extra\.json: is not listed in catalog\.json/);
  });

  it('refuses a frontend file that is missing', () => {
    expect(loadError(catalogCopy({ 'pineapple-mode.frontend.js': null }))).toMatch(
      /pineapple-mode\.json: frontend_source\.file: pineapple-mode\.frontend\.js cannot be read \(ENOENT\)$/,
    );
  });
});
