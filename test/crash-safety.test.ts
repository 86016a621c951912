/**
 * Crash safety (issue 6): an import of 200,000 demo events in a child process (`envapi demo`) is
 * killed with SIGKILL midway; the store then opens cleanly (`PRAGMA integrity_check` = ok), holds
 * whole batches only (a multiple of the batch size), and re-running the same command completes
 * with exactly 200,000 events and no duplicate uuid.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BATCH_SIZE } from '../server/events/import.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'envapi.js');
const TOTAL = 200_000;
const KILL_AFTER_ROWS = 20_000;
const KILL_AFTER_MS = 20_000;

let dir: string;
let dbFile: string;

function envapi(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, '--data-dir', dir, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 45_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const DEMO = ['demo', '--project', '1', '--events', String(TOTAL), '--seed', '3', '--now', '2026-01-01T00:00:00Z', '--json'];

/** Rows in `events`, read through a read-only connection (null while the table does not exist). */
function countEvents(): number | null {
  if (!fs.existsSync(dbFile)) return null;
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 1000');
    return (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  } catch {
    return null;
  } finally {
    db.close();
  }
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-crash-'));
  dbFile = path.join(dir, 'envapi.sqlite3');
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('an import killed with SIGKILL midway', () => {
  it('leaves whole batches only, and re-running it completes without duplicates', { timeout: 90_000 }, async () => {
    expect(DEFAULT_BATCH_SIZE).toBe(2_000);
    const boot = envapi(['bootstrap', '--json']);
    expect(boot.status, boot.stderr).toBe(0);
    expect(countEvents()).toBe(0);

    // 1. start the import and SIGKILL it once it has written some batches
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, '--data-dir', dir, ...DEMO], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    let seen = 0;
    let finished = false;
    void exited.then(() => (finished = true));
    while (!finished && Date.now() - started < KILL_AFTER_MS) {
      seen = countEvents() ?? 0;
      if (seen > KILL_AFTER_ROWS) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(finished, `the import finished before it could be killed:\n${output}`).toBe(false);
    child.kill('SIGKILL');
    const { signal } = await exited;
    expect(signal).toBe('SIGKILL');
    expect(seen).toBeGreaterThan(0);

    // 2. the store opens cleanly and holds whole batches only
    let partial = 0;
    const db = new Database(dbFile);
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('quick_check', { simple: true })).toBe('ok');
      partial = (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
      expect(partial).toBeGreaterThanOrEqual(seen);
      expect(partial).toBeLessThan(TOTAL);
      expect(partial % DEFAULT_BATCH_SIZE, `${partial} events is not a whole number of batches`).toBe(0);
    } finally {
      db.close();
    }

    // 3. the same command again completes: exactly TOTAL events, no duplicate uuid
    const again = envapi(DEMO);
    expect(again.status, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout) as { rows_read: number; inserted: number; skipped: number };
    expect(summary.rows_read).toBe(TOTAL);
    const check = new Database(dbFile, { readonly: true });
    try {
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
      const { n, d } = check.prepare('SELECT count(*) AS n, count(DISTINCT uuid) AS d FROM events').get() as { n: number; d: number };
      expect(n).toBe(TOTAL);
      expect(d).toBe(TOTAL);
      expect(summary.inserted + summary.skipped).toBe(TOTAL);
      // the batches written before the kill are skipped as duplicates, the rest inserted
      expect(summary.skipped).toBe(partial);
      expect(summary.inserted).toBe(TOTAL - partial);
      const teams = check.prepare('SELECT DISTINCT team_id FROM events').all() as Array<{ team_id: number }>;
      expect(teams).toEqual([{ team_id: 1 }]);
    } finally {
      check.close();
    }
  });
});
