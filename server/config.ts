/**
 * Configuration from the environment, with defaults for a development machine.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | PORT | 8000 | TCP port |
 * | HOST | 127.0.0.1 | interface to listen on |
 * | DATA_DIR | ./data | directory of the SQLite file |
 * | DATABASE_URL | (unset) | `postgres://…` selects PostgreSQL instead of SQLite |
 * | VALIDATE_RESPONSES | on unless NODE_ENV=production | validate every response against the spec |
 * | SHUTDOWN_TIMEOUT_MS | 10000 | how long requests in flight may take to finish on SIGTERM/SIGINT |
 */

/** The server's settings. */
export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  validateResponses: boolean;
  shutdownTimeoutMs: number;
}

function int(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

/** Reads the settings from `env`. Throws with the variable's name when a value is malformed. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const validate = env.VALIDATE_RESPONSES;
  return {
    port: int('PORT', env.PORT, 8000),
    host: env.HOST || '127.0.0.1',
    dataDir: env.DATA_DIR || 'data',
    databaseUrl: env.DATABASE_URL || undefined,
    validateResponses: validate === undefined || validate === '' ? env.NODE_ENV !== 'production' : !['0', 'false', 'off', 'no'].includes(validate.toLowerCase()),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', env.SHUTDOWN_TIMEOUT_MS, 10_000),
  };
}
