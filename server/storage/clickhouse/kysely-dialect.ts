/**
 * ClickHouse as a Kysely dialect: the SQL that the events store and the HogQL compiler compose
 * with Kysely's `sql` templates runs on ClickHouse through `@clickhouse/client`, unchanged in
 * shape from the other stores (`sql\`…\`.execute(db)` answers `{rows}`).
 *
 * Built on Kysely's documented extension points for a dialect (`Dialect`: a driver, a query
 * compiler subclassing `DefaultQueryCompiler`, an adapter, an introspector):
 * - Parameters: ClickHouse binds `{name:Type}` placeholders server-side (HTTP `param_<name>`,
 *   chDB's `queryBindAsync`), so each bound value becomes `{pN:Type}` with a type read from the
 *   value: a string `String`, an integral number `Int64`, another number `Float64`, a bigint
 *   `Int64`, a boolean `Bool`, null `Nullable(String)`, an array `Array(…)` of its first
 *   element's type; `chParam(value, type)` names the type itself (`DateTime64(6, 'UTC')`, `UUID`).
 * - String literals (`sql.lit`) escape `\` as well as `'`: ClickHouse reads backslash escapes.
 * - Every SELECT runs with a `SETTINGS` tail: the time left of its budget as `max_execution_time`
 *   (seconds), `readonly=2` for reads, and `READ_SETTINGS` (which HogQL's answers rely on). In the SQL, not as `clickhouse_settings`: on chDB those
 *   are `SET` on the shared session and stay (./connection.ts).
 * - At most `maxQueries` statements are in flight; the others wait in order. The wait counts
 *   against the budget (`budgetMs`, `QUERY_TIMEOUT_MS`): past it the statement is not run and
 *   `QueryTimeoutError` (../errors.ts, 504) is thrown; ClickHouse's own TIMEOUT_EXCEEDED (159)
 *   becomes the same error. A statement that is not a SELECT (DDL, INSERT … SELECT, ALTER) runs
 *   as a command, without a budget.
 * - Cancellation: ClickHouse stops a read at its `max_execution_time`. Against a ClickHouse server
 *   (`cancelOnBudget`) the client also gives up on the request `CANCEL_GRACE_MS` after the budget
 *   (a server that is slow to check the limit, or a stalled connection), and the read runs with
 *   `cancel_http_readonly_queries_on_client_close=1`, so the server cancels it when that
 *   connection closes. Not on embedded chDB: a chDB query cannot be interrupted from outside
 *   (chdb's `withAbortTimeout`: an abort only rejects the promise while the engine runs on), so
 *   there the engine's own limit is the cancellation.
 * - No transactions (ClickHouse has none): `transaction()` throws.
 *
 * Rows come back as objects by column name (JSONEachRow), 64-bit integers as strings.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import {
  DefaultQueryCompiler,
  Kysely,
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type QueryResult,
  DialectAdapterBase,
} from 'kysely';
import pLimit, { type LimitFunction } from 'p-limit';
import { QueryTimeoutError } from '../errors.js';

/** A value bound with the ClickHouse type given (instead of the type read from the value). */
export class ChParam {
  constructor(
    readonly value: unknown,
    readonly type: string,
  ) {}
}

/** `value` bound as ClickHouse type `type`, e.g. `chParam('2024-01-01 00:00:00', "DateTime64(6, 'UTC')")`. */
export function chParam(value: unknown, type: string): ChParam {
  return new ChParam(value, type);
}

/**
 * A stored-form timestamp (`2024-11-20T14:03:10.871123Z`, UTC) bound as `DateTime64(6, 'UTC')`:
 * ClickHouse parses a parameter of that type only without the `T` and `Z`.
 */
export function chTime(iso: string): ChParam {
  return new ChParam(clickhouseDateTime(iso), "DateTime64(6, 'UTC')");
}

/** A stored-form timestamp (`…T…Z`, UTC) as ClickHouse reads a DateTime64 value: `2024-11-20 14:03:10.871123` (parameters, the events' TabSeparated inserts). */
export function clickhouseDateTime(iso: string): string {
  return iso.replace('T', ' ').replace(/Z$/, '');
}

/** The ClickHouse type of a bound value (see the module doc). */
export function paramType(value: unknown): string {
  if (value instanceof ChParam) return value.type;
  if (value === null || value === undefined) return 'Nullable(String)';
  switch (typeof value) {
    case 'string':
      return 'String';
    case 'bigint':
      return 'Int64';
    case 'boolean':
      return 'Bool';
    case 'number':
      return Number.isSafeInteger(value) ? 'Int64' : 'Float64';
    default:
      if (Array.isArray(value)) return `Array(${value.length ? paramType(value[0]) : 'String'})`;
      return 'String';
  }
}

/** Kysely's compiler with ClickHouse's placeholders and string literals. */
class ClickHouseQueryCompiler extends DefaultQueryCompiler {
  protected override appendValue(parameter: unknown): void {
    this.addParameter(parameter);
    this.append(`{p${this.numParameters - 1}:${paramType(parameter)}}`);
  }

  protected override sanitizeStringLiteral(value: string): string {
    return value.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  }
}

/**
 * Settings every read runs with, which HogQL's answers on ClickHouse rely on
 * (server/hogql/dialect-clickhouse.ts): the exact Float sums parse their decimal total correctly
 * rounded (`precise_float_parsing`); a mix of types without a common one is an error (a 400),
 * not a Variant column; GROUP BY / ORDER BY by position.
 */
export const READ_SETTINGS: Readonly<Record<string, number>> = {
  precise_float_parsing: 1,
  use_variant_as_common_type: 0,
  enable_positional_arguments: 1,
};

/** How the dialect runs statements. */
export interface ClickHouseDialectOptions {
  client: ClickHouseClient;
  /** statements in flight at most (the rest wait in order) */
  maxQueries: number;
  /** a read's time budget, ms, its wait included */
  budgetMs: number;
  /** settings added to every SELECT's `SETTINGS` tail (name → number or string); default `READ_SETTINGS` */
  settings?: Readonly<Record<string, number | string>>;
  /** a ClickHouse server: abort a read's request past its budget, and have the server cancel it then (module doc) */
  cancelOnBudget?: boolean;
}

/** How long past its budget a read's request to a ClickHouse server is aborted, ms (the server's own limit comes first). */
export const CANCEL_GRACE_MS = 2_000;

/** Whether `sql` is a read (answered with rows) rather than a command. */
function isRead(text: string): boolean {
  return /^\s*\(?\s*(select|with)\b/i.test(text);
}

/** The `SETTINGS` tail of a read with `seconds` left. */
function settingsTail(seconds: number, settings: Readonly<Record<string, number | string>>): string {
  const all: Record<string, number | string> = { readonly: 2, ...settings, max_execution_time: seconds };
  const parts = Object.entries(all).map(([k, v]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(k)) throw new Error(`not a ClickHouse setting name: ${k}`);
    return `${k}=${typeof v === 'number' ? String(v) : `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`}`;
  });
  return ` SETTINGS ${parts.join(', ')}`;
}

/** Whether `err` is ClickHouse's TIMEOUT_EXCEEDED (code 159). */
export function isClickHouseTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; type?: unknown } | null;
  return String(e?.code) === '159' || e?.type === 'TIMEOUT_EXCEEDED';
}

class ClickHouseKyselyConnection implements DatabaseConnection {
  constructor(
    private readonly options: ClickHouseDialectOptions,
    private readonly limit: LimitFunction,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const { client, budgetMs } = this.options;
    const query_params: Record<string, unknown> = {};
    compiled.parameters.forEach((p, i) => {
      query_params[`p${i}`] = p instanceof ChParam ? p.value : p;
    });
    const enqueued = performance.now();
    return this.limit(async () => {
      if (!isRead(compiled.sql)) {
        await client.command({ query: compiled.sql, query_params });
        return { rows: [] };
      }
      const left = budgetMs - (performance.now() - enqueued);
      if (left <= 0) throw new QueryTimeoutError(budgetMs);
      const cancel = this.options.cancelOnBudget === true;
      const settings = this.options.settings ?? READ_SETTINGS;
      const query =
        compiled.sql +
        settingsTail(
          Math.max(1, Math.ceil(left / 1000)),
          cancel ? { ...settings, cancel_http_readonly_queries_on_client_close: 1 } : settings,
        );
      const abort_signal = cancel ? AbortSignal.timeout(Math.ceil(left) + CANCEL_GRACE_MS) : undefined;
      try {
        const result = await client.query({ query, query_params, format: 'JSONEachRow', abort_signal });
        return { rows: (await result.json()) as R[] };
      } catch (err) {
        if (abort_signal?.aborted) throw new QueryTimeoutError(budgetMs, { cause: err });
        // chDB 3.4 hands what a failed query had written to the next query of the session (seen
        // after an Int64 overflow: `select 7 % 3` answered three rows); a throwaway read takes it,
        // before the next statement in the queue runs
        await client
          .query({ query: 'SELECT 1', format: 'JSONEachRow' })
          .then((r) => r.text())
          .catch(() => undefined);
        if (isClickHouseTimeout(err)) throw new QueryTimeoutError(budgetMs, { cause: err });
        throw err;
      }
    });
  }

  // eslint-disable-next-line require-yield -- Kysely's interface; ClickHouse reads are answered whole
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('streaming reads are not supported on ClickHouse');
  }
}

/** No transactional DDL, no RETURNING, no migration lock (the schema is created idempotently: ./schema.ts). */
class ClickHouseAdapter extends DialectAdapterBase {
  override get supportsTransactionalDdl(): boolean {
    return false;
  }

  override get supportsReturning(): boolean {
    return false;
  }

  async acquireMigrationLock(): Promise<void> {}

  async releaseMigrationLock(): Promise<void> {}
}

class ClickHouseDriver implements Driver {
  private readonly connection: ClickHouseKyselyConnection;

  constructor(options: ClickHouseDialectOptions) {
    this.connection = new ClickHouseKyselyConnection(options, pLimit(Math.max(1, options.maxQueries)));
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }

  async beginTransaction(): Promise<void> {
    throw new Error('ClickHouse has no transactions');
  }

  async commitTransaction(): Promise<void> {
    throw new Error('ClickHouse has no transactions');
  }

  async rollbackTransaction(): Promise<void> {
    throw new Error('ClickHouse has no transactions');
  }

  async releaseConnection(): Promise<void> {}

  /** The client is the caller's (./connection.ts): it closes it. */
  async destroy(): Promise<void> {}
}

/** The dialect (see the module doc). */
export class ClickHouseDialect implements Dialect {
  constructor(private readonly options: ClickHouseDialectOptions) {}

  createDriver(): Driver {
    return new ClickHouseDriver(this.options);
  }

  createQueryCompiler(): ClickHouseQueryCompiler {
    return new ClickHouseQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new ClickHouseAdapter();
  }

  createIntrospector(): DatabaseIntrospector {
    const refuse = async (): Promise<never> => {
      throw new Error('introspection is not supported on ClickHouse');
    };
    return { getSchemas: refuse, getTables: refuse, getMetadata: refuse };
  }
}

/** A Kysely instance over ClickHouse (see the module doc); `DB` is the tables' row types, if any. */
export function clickhouseKysely<DB = unknown>(options: ClickHouseDialectOptions): Kysely<DB> {
  return new Kysely<DB>({ dialect: new ClickHouseDialect(options) });
}
