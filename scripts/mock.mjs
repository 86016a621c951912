#!/usr/bin/env node
/**
 * `npm run mock`: the Prism mock of the contract (@stoplight/prism-cli, static examples), for
 * frontend teams. The contract is `generated/openapi.bundle.yaml`: the hand-written `openapi.yaml`
 * with its `/api/projects/{project_id}/` copies (scripts/gen-projects-paths.mjs, `npm run gen`), so
 * the mock answers under both prefixes, as the server does.
 *
 *   npm run mock                         # http://127.0.0.1:4010
 *   npm run mock -- --port 4020          # another port (PORT=4020 works too)
 *   npm run mock -- --host 0.0.0.0       # listen on every interface
 *
 * The examples' absolute links (`next`, `previous` of the paginated answers) name the server's
 * origin, `http://127.0.0.1:8000`, which is what the server answers and what the contract
 * documents. The mock must not send a client following `next` to a server that may not be running:
 * Prism is given a copy of the contract (in a temporary folder, removed on exit) in which that
 * origin, wherever it starts a link to `/api/…`, is the mock's own (`http://<host>:<port>`; with
 * `--host 0.0.0.0`, `127.0.0.1`). The bundle itself is not changed.
 *
 * Prism runs as a child process with this one's stdout and stderr; SIGINT and SIGTERM are passed on
 * to it, and this process exits with its status. Prism's stdin is a pipe from this process, watched
 * by scripts/mock-exit-with-parent.mjs (preloaded into Prism with `--import`): when this process
 * ends in a way it cannot pass on (SIGKILL, a crash), the pipe closes and Prism exits too, freeing
 * the port and removing the temporary folder.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The server's origin as the contract's examples write it. */
export const SERVER_ORIGIN = 'http://127.0.0.1:8000';

const USAGE = `usage: npm run mock -- [--port N] [--host HOST]

Serves the examples of the contract (generated/openapi.bundle.yaml: openapi.yaml
and its /api/projects/ copies, from npm run gen) with Prism (static mode).
  --port N      port to listen on (default: $PORT, else 4010)
  --host HOST   address to listen on (default 127.0.0.1)
  -h, --help    this text
The examples' next/previous links are rewritten to point at the mock.`;

/**
 * The contract's text with every link to the server's `/api/` (`http://127.0.0.1:8000/api/…`)
 * pointing at `origin` instead (no trailing slash).
 */
export function pointLinksAt(specText, origin) {
  return specText.split(`${SERVER_ORIGIN}/api/`).join(`${origin}/api/`);
}

function main() {
  let values;
  try {
    ({ values } = parseArgs({ options: { port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (err) {
    console.error(`${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = values.port ?? process.env.PORT ?? '4010';
  if (!/^\d+$/.test(port) || Number(port) > 65535) {
    console.error(`--port must be a port number, got ${JSON.stringify(port)}\n\n${USAGE}`);
    process.exit(2);
  }
  const host = values.host ?? '127.0.0.1';
  const linkHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-mock-'));
  const spec = path.join(dir, 'openapi.yaml');
  fs.writeFileSync(
    spec,
    pointLinksAt(fs.readFileSync(path.join(ROOT, 'generated', 'openapi.bundle.yaml'), 'utf8'), `http://${linkHost}:${port}`),
  );
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });

  const prism = path.join(ROOT, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');
  // stdin: a pipe this process holds open until it ends (scripts/mock-exit-with-parent.mjs)
  const exitWithParent = pathToFileURL(path.join(ROOT, 'scripts', 'mock-exit-with-parent.mjs')).href;
  const child = spawn(process.execPath, ['--import', exitWithParent, prism, 'mock', spec, '--port', port, '--host', host], {
    cwd: ROOT,
    stdio: ['pipe', 'inherit', 'inherit'],
    env: { ...process.env, ENVAPI_MOCK_TMP_DIR: dir },
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    cleanup();
    console.error(`could not start Prism: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    cleanup();
    process.exit(code ?? (signal ? 1 : 0));
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
