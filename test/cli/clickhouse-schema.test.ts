/**
 * `envapi clickhouse schema` as a user runs it (`node bin/envapi.js`, test/helpers/cli.ts), checked
 * by ClickHouse itself: embedded chDB (the optional dependency `chdb`; without it the suite skips and
 * says so, test/helpers/skips.ts). Every printed statement of both layouts, one server and
 * `--cluster`, is parsed by ClickHouse's `formatQuery()` (which refuses a syntax error: checked
 * too). No ClickHouse cluster runs here, so the cluster DDL is parsed, not run; its layout is read
 * from the formatted text (sharded_events on ReplicatedReplacingMergeTree with the `{shard}` and
 * `{replica}` macros, a Distributed `events` by `sipHash64(distinct_id)`, replicated person tables,
 * ON CLUSTER everywhere). The single-server DDL is run on chDB, and the `events` it creates has
 * PostHog's columns and types. A database or cluster name that is not a plain ClickHouse name is
 * bad usage (exit 2, one error line).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseSchema } from '../../server/storage/clickhouse/schema.js';
import { cli, ok, T, useCliProcesses } from '../helpers/cli.js';
import { reportSkip } from '../helpers/skips.js';

const SUITE = 'test/cli/clickhouse-schema.test.ts';

type Chdb = typeof import('chdb');
/** chDB, or undefined when the optional dependency is not installed (or has no build for this platform). */
const chdb: Chdb | undefined = await import('chdb').catch((err: unknown) => {
  reportSkip(
    SUITE,
    `chdb cannot be loaded (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`,
    'npm ci (chdb is an optional dependency: it installs where it has a build for the platform)',
  );
  return undefined;
});

useCliProcesses();

/** The statements of the script `envapi clickhouse schema` printed: split on `;` and a blank line, the last `;` dropped. */
function statementsOf(stdout: string): string[] {
  expect(stdout.endsWith(';\n'), 'the script ends with ;').toBe(true);
  return stdout.slice(0, -2).split(';\n\n');
}

/** The name of the table a CREATE statement creates (`database` for CREATE DATABASE). */
function created(statement: string): string {
  return /^CREATE (?:TABLE IF NOT EXISTS \w+\.(\w+)|(DATABASE))/.exec(statement)?.slice(1).find(Boolean) ?? statement.slice(0, 40);
}

describe.skipIf(!chdb)('envapi clickhouse schema, checked by ClickHouse (chDB)', () => {
  let session: InstanceType<Chdb['Session']>;
  beforeAll(() => {
    session = new chdb!.Session();
  });
  afterAll(() => session?.close());

  /** ClickHouse's `formatQuery()` of `statement`: its canonical text; rejects on a syntax error. */
  async function formatQuery(statement: string): Promise<string> {
    const r = await session.queryBindAsync('SELECT formatQuery({q:String}) AS f', { q: statement }, { format: 'JSONEachRow' });
    return (JSON.parse(r.text().trim()) as { f: string }).f;
  }

  /** Runs `args` (`envapi clickhouse schema …`); the statements it printed, after checking that they are the module's and `--json`'s. */
  async function schema(args: string[], expected: string[]): Promise<string[]> {
    const statements = statementsOf((await ok(['clickhouse', 'schema', ...args])).stdout);
    expect(statements).toEqual(expected);
    expect(JSON.parse((await ok(['clickhouse', 'schema', ...args, '--json'])).stdout)).toEqual(expected);
    return statements;
  }

  it('formatQuery refuses a statement with a syntax error (so that the checks below can fail)', async () => {
    expect(await formatQuery('CREATE TABLE t (a UInt8) ENGINE = MergeTree ORDER BY a')).toMatch(/^CREATE TABLE t/);
    await expect(formatQuery('CREATE TABLE t (a UInt8 ENGINE = MergeTree ORDER BY a')).rejects.toThrow(/syntax error/i);
    await expect(formatQuery('CREAT TABLE t (a UInt8) ENGINE = MergeTree ORDER BY a')).rejects.toThrow(/syntax error/i);
  });

  it(
    'without --cluster: the database, events, person, person_distinct_id2, each parsed by formatQuery, none ON CLUSTER',
    async () => {
      const statements = await schema([], clickhouseSchema());
      expect(statements.map(created)).toEqual(['DATABASE', 'events', 'person', 'person_distinct_id2']);
      for (const statement of statements) {
        const formatted = await formatQuery(statement);
        expect(formatted).not.toMatch(/ON CLUSTER|Replicated|Distributed/);
      }
      const events = await formatQuery(statements[1]!);
      expect(events).toContain('ENGINE = ReplacingMergeTree(_timestamp)');
      expect(events).toContain('PARTITION BY toYYYYMM(timestamp)');
      expect(events).toContain('ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))');
      expect(await formatQuery(statements[2]!)).toMatch(/ENGINE = ReplacingMergeTree\(version\)\nORDER BY \(team_id, id\)/);
      expect(await formatQuery(statements[3]!)).toMatch(/ENGINE = ReplacingMergeTree\(version\)\nORDER BY \(team_id, distinct_id\)/);
    },
    T,
  );

  it(
    '--cluster posthog --database envapi: sharded_events on ReplicatedReplacingMergeTree, a Distributed events by sipHash64(distinct_id), replicated person tables, every statement ON CLUSTER, each parsed by formatQuery',
    async () => {
      const statements = await schema(
        ['--cluster', 'posthog', '--database', 'envapi'],
        clickhouseSchema({ cluster: 'posthog', database: 'envapi' }),
      );
      expect(statements.map(created)).toEqual(['DATABASE', 'sharded_events', 'events', 'person', 'person_distinct_id2']);
      const formatted = await Promise.all(statements.map(formatQuery));
      for (const f of formatted)
        expect(f).toMatch(/^CREATE (DATABASE IF NOT EXISTS envapi|TABLE IF NOT EXISTS envapi\.\w+) ON CLUSTER posthog(\n|$)/);
      const [, sharded, events, person, pdi] = formatted as [string, string, string, string, string];
      expect(sharded).toContain(
        "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/envapi.events', '{replica}', _timestamp)",
      );
      expect(sharded).toContain('ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))');
      expect(sharded).toContain('SAMPLE BY cityHash64(distinct_id)');
      expect(events).toContain("ENGINE = Distributed('posthog', 'envapi', 'sharded_events', sipHash64(distinct_id))");
      // the Distributed table names the columns the data table has, without their expressions
      expect(events).toMatch(/`\$session_id` String COMMENT 'column_materializer::\$session_id'/);
      expect(events).not.toContain('MATERIALIZED');
      expect(person).toContain(
        "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/noshard/envapi.person', '{replica}-{shard}', version)",
      );
      expect(pdi).toContain(
        "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/noshard/envapi.person_distinct_id2', '{replica}-{shard}', version)",
      );
    },
    T,
  );

  it(
    "the single-server DDL runs on chDB, and events has PostHog's columns (timestamp DateTime64(6, 'UTC'), …)",
    async () => {
      for (const statement of statementsOf((await ok(['clickhouse', 'schema', '--database', 'schema_check'])).stdout)) {
        await session.queryAsync(statement);
      }
      const tables = await session.queryAsync("SELECT name FROM system.tables WHERE database = 'schema_check' ORDER BY name", {
        format: 'JSONEachRow',
      });
      expect(rows<{ name: string }>(tables.text()).map((t) => t.name)).toEqual(['events', 'person', 'person_distinct_id2']);
      const columns = await session.queryAsync(
        "SELECT name, type FROM system.columns WHERE database = 'schema_check' AND table = 'events'",
        {
          format: 'JSONEachRow',
        },
      );
      const types = Object.fromEntries(rows<{ name: string; type: string }>(columns.text()).map((c) => [c.name, c.type]));
      expect(types).toMatchObject({
        uuid: 'UUID',
        event: 'String',
        properties: 'String',
        timestamp: "DateTime64(6, 'UTC')",
        team_id: 'Int64',
        distinct_id: 'String',
        elements_chain: 'String',
        created_at: "DateTime64(6, 'UTC')",
        person_id: 'UUID',
      });
      // the materialized $session_id is computed from the properties at insert
      await session.queryAsync(
        'INSERT INTO schema_check.events (uuid, event, properties, timestamp, team_id, distinct_id, elements_chain, created_at, person_id, _timestamp, _offset) ' +
          `VALUES ('0190d3c4-5b6a-7000-8000-000000000001', '$pageview', '{"$session_id":"s1"}', '2024-07-01 12:00:00.123456', 1, 'd1', '', now64(), generateUUIDv4(), now(), 0)`,
      );
      const read = await session.queryAsync('SELECT `$session_id` AS s, toString(timestamp) AS t FROM schema_check.events', {
        format: 'JSONEachRow',
      });
      expect(rows(read.text())).toEqual([{ s: 's1', t: '2024-07-01 12:00:00.123456' }]);
    },
    T,
  );
});

/** The rows of a JSONEachRow text. */
function rows<R = Record<string, unknown>>(text: string): R[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as R);
}

describe('envapi clickhouse schema: bad names', () => {
  it.each([
    ['--cluster', 'my-cluster', 'The cluster "my-cluster"'],
    ['--database', '1db', 'The database "1db"'],
    ['--database', 'db; DROP TABLE x', 'The database "db; DROP TABLE x"'],
  ])(
    '%s %s exits 2 with one error line saying it is not a plain ClickHouse name, and prints no DDL',
    async (option, value, named) => {
      const r = await cli(['clickhouse', 'schema', option, value]);
      const what = `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
      expect(r.code, what).toBe(2);
      expect(r.stdout, what).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines[0], what).toBe(
        `error: option '${option} <name>' argument '${value}' is invalid. ${named} is not a plain ClickHouse name: use letters, digits and _, starting with a letter or _.`,
      );
      expect(lines.slice(1), what).toEqual([
        'Usage: envapi clickhouse schema [options]',
        "Run 'envapi clickhouse schema --help' for the options.",
      ]);
    },
    T,
  );

  it(
    '--help describes the layouts',
    async () => {
      const help = (await ok(['clickhouse', 'schema', '--help'])).stdout;
      for (const words of [
        'PostHog',
        'clickhouse-client --multiquery',
        'sharded_events',
        'ReplicatedReplacingMergeTree',
        '{shard}',
        '{replica}',
        'sipHash64(distinct_id)',
        'person_distinct_id2',
      ])
        expect(help).toContain(words);
    },
    T,
  );
});
