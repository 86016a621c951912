/**
 * `envapi clickhouse schema`: the DDL of the ClickHouse events store (server/storage/clickhouse/
 * schema.ts), PostHog's `events`, `person` and `person_distinct_id2` tables, for one server or for
 * a cluster (`--cluster NAME`), printed for `clickhouse-client --multiquery`. It needs no store and
 * opens none: the global `--data-dir` and `--database-url` are ignored.
 *
 * A name that is not a plain ClickHouse identifier (`--cluster`, `--database`) is bad usage: the
 * option's parser refuses it (commander's one-line error and the usage hint, exit 2).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { checkIdentifier, clickhouseSchema } from '../storage/clickhouse/schema.js';
import { out } from './shared.js';

/** An option parser for a name that goes into the DDL text: `checkIdentifier`'s refusal as bad usage. */
function identifierParser(what: string): (value: string) => string {
  return (value) => {
    try {
      return checkIdentifier(what, value);
    } catch (err) {
      throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
    }
  };
}

/** The statements as one script: separated by `;` and a blank line, the last one ended by `;`. */
export function schemaScript(statements: readonly string[]): string {
  return `${statements.join(';\n\n')};`;
}

const SCHEMA_DESCRIPTION =
  "print the DDL of envapi's ClickHouse events store on stdout, in PostHog's layout: the events, person and " +
  'person_distinct_id2 tables (ReplacingMergeTree, monthly partitions of events, PostHog’s sort key), one ' +
  'statement after another, each ended by `;`, every one idempotent (IF NOT EXISTS), for ' +
  '`clickhouse-client --multiquery`. Without --cluster: the tables of one ClickHouse server (or embedded chDB). ' +
  'With --cluster NAME: the tables of a cluster, every statement ON CLUSTER NAME (NAME as the servers’ ' +
  'remote_servers call it; every node needs ClickHouse Keeper or ZooKeeper and its {shard} and {replica} macros).';

const SCHEMA_HELP_AFTER = `
The cluster layout (PostHog's: posthog/models/event/sql.py, posthog/clickhouse/table_engines.py):
  sharded_events  the events, one replicated table per shard:
                  ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/<database>.events',
                  '{replica}', _timestamp)
  events          Distributed(NAME, <database>, sharded_events, sipHash64(distinct_id)) over
                  them: the table envapi uses; the events of one distinct_id are on one shard
  person, person_distinct_id2
                  replicated whole on every node (each shard joins its events with every
                  person): ReplicatedReplacingMergeTree(
                  '/clickhouse/tables/noshard/<database>.<table>', '{replica}-{shard}', version)

Example:
  envapi clickhouse schema --cluster posthog --database envapi | clickhouse-client --multiquery
`;

/** Adds `clickhouse schema` to `program`. */
export function registerClickhouseCommands(program: Command): void {
  const clickhouse = program.command('clickhouse').description('the ClickHouse events store: its schema, for a server or a cluster');
  clickhouse
    .command('schema')
    .summary('print the DDL of the ClickHouse events store (PostHog’s tables), for one server or a cluster')
    .description(SCHEMA_DESCRIPTION)
    .option(
      '--cluster <name>',
      'the DDL of a cluster: sharded_events, a Distributed events, replicated person tables',
      identifierParser('The cluster'),
    )
    .option('--database <name>', 'the database of the tables (default: default)', identifierParser('The database'))
    .option('--json', 'print the statements as a JSON array of strings (without their `;`)')
    .addHelpText('after', SCHEMA_HELP_AFTER)
    .action((o: { cluster?: string; database?: string; json?: boolean }) => {
      const statements = clickhouseSchema({ cluster: o.cluster, database: o.database });
      out(!!o.json, statements, () => [schemaScript(statements)]);
    });
}
