/**
 * PostHog's MCP tools endpoint through the real HTTP stack (response validation on), on a known
 * dataset: `execute_sql` answers the rows of the same HogQL as `/query/` in PostHog's text format
 * (header, `|`-joined cells, `(null)`, JSON-like cells over 500 characters cut with
 * `...truncated` unless `truncate` is false), a bad query as a 200 failure with PostHog's
 * wording; `read_taxonomy` answers event names, properties by type, and sample values as
 * PostHog words them; a missing field is 400, an unknown tool 404, a missing scope 403; both
 * prefixes serve them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { missingScope } from '../helpers/errors.js';

interface ToolAnswer {
  success: boolean;
  content: string;
  error?: { category: string; retry: string; tool: string; correlation_id: string };
}

const LONG = { blob: 'x'.repeat(600) };

/** PostHog's preamble of the properties texts (toolkit.py `PROPERTIES_EXAMPLE_PROMPT`), written out here, not imported. */
const PREAMBLE =
  'The data format is as follows:\n<Data type>\n- $event – description text here\n- another_event\n</Data type>\n...\n---\nResults:';

/** The text PostHog's formatter makes of plain rows (numbers, texts, nulls). */
function expectedText(columns: string[], rows: unknown[][]): string {
  return [columns.join('|'), ...rows.map((r) => r.map((c) => (c === null ? '(null)' : String(c))).join('|'))].join('\n');
}

let t: TestServer;
let P: number;

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  const at = (n: number) => new Date(Date.UTC(2024, 10, 1, 10, n)).toISOString();
  await importEvents(t.store, P, [
    {
      event: '$pageview',
      distinct_id: 'alice',
      timestamp: at(1),
      properties: { $browser: 'Chrome', price: 10, paid: true, seen_at: '2024-11-01T10:00:00Z' },
      $set: { email: 'alice@example.com', plan: 'pro' },
    },
    { event: '$pageview', distinct_id: 'alice', timestamp: at(2), properties: { $browser: 'Chrome', price: 12.5 } },
    {
      event: '$pageview',
      distinct_id: 'bob',
      timestamp: at(3),
      properties: { $browser: 'Firefox', price: null },
      $set: { email: 'bob@example.com', plan: 'free' },
    },
    {
      event: '$pageview',
      distinct_id: 'carol',
      timestamp: at(4),
      properties: { $browser: 'Safari', nested: LONG, long_text: 'a'.repeat(600) },
    },
    { event: 'signup', distinct_id: 'bob', timestamp: at(5), properties: { plan: 'free' } },
    { event: 'signup', distinct_id: 'carol', timestamp: at(6), properties: { plan: 'pro' } },
    { event: 'rare', distinct_id: 'carol', timestamp: at(7), properties: {} },
  ]);
});

afterAll(async () => {
  await t?.close();
});

async function tool(
  name: string,
  body: unknown,
  opts: { key?: string; prefix?: string } = {},
): Promise<{ status: number; body: ToolAnswer }> {
  const res = await t.fetch(`/api/${opts.prefix ?? 'environments'}/${P}/mcp_tools/${name}/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    ...(opts.key ? { key: opts.key } : {}),
  });
  return { status: res.status, body: (await res.json()) as ToolAnswer };
}

const sql = (query: string, truncate?: boolean) =>
  tool('execute_sql', { args: { query, ...(truncate === undefined ? {} : { truncate }) } });
const taxonomy = async (query: Record<string, unknown>) => {
  const res = await tool('read_taxonomy', { args: { query } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.success).toBe(true);
  return res.body.content;
};

describe('execute_sql', () => {
  it('answers the rows of the same HogQL through /query/, as header and |-joined lines', async () => {
    const query = 'select event, distinct_id, properties.price from events order by timestamp';
    const res = await sql(query);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const viaQuery = (await t.json(`/api/environments/${P}/query/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query } }),
    })) as { columns: string[]; results: unknown[][] };
    expect(res.body.content).toBe(expectedText(viaQuery.columns, viaQuery.results));
    expect(res.body.content.split('\n')).toEqual([
      'event|distinct_id|properties.price',
      '$pageview|alice|10',
      '$pageview|alice|12.5',
      '$pageview|bob|(null)',
      '$pageview|carol|(null)',
      'signup|bob|(null)',
      'signup|carol|(null)',
      'rare|carol|(null)',
    ]);
  });

  it('writes null as (null) and quotes a text that is (null)', async () => {
    const res = await sql("select null as a, '(null)' as b, 'x|y' as d");
    expect(res.body.content).toBe('a|b|d\n(null)|"(null)"|x|y');
  });

  it('cuts JSON-like cells over 500 characters when truncate is on (the default), not otherwise', async () => {
    const query =
      "select properties.nested as n, properties.long_text as plain from events where event = '$pageview' and distinct_id = 'carol'";
    const cut = await sql(query);
    expect(cut.body.success, cut.body.content).toBe(true);
    const [, row] = cut.body.content.split('\n');
    const [n, plain] = row!.split('|');
    expect(n).toBe(JSON.stringify(LONG).slice(0, 500) + '...truncated');
    expect(plain).toBe('a'.repeat(600));
    const whole = await sql(query, false);
    expect(whole.body.content.split('\n')[1]).toBe(`${JSON.stringify(LONG)}|${'a'.repeat(600)}`);
  });

  it('answers a bad query as a 200 failure in PostHog words, with error and correlation id', async () => {
    const res = await sql('select from where');
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    const id = res.body.error!.correlation_id;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(res.body.error).toEqual({ category: 'invalid_input', retry: 'adjusted', tool: 'execute_sql', correlation_id: id });
    expect(res.body.content).toMatch(
      /^Tool `execute_sql` failed \(invalid_input\): Query validation failed: .+\. Retrying is safe once you adjust the input\. Correlation ID: [0-9a-f]{32}\.$/s,
    );
    expect(res.body.content.endsWith(`Correlation ID: ${id}.`)).toBe(true);
  });

  it('answers a connectionId as a failure: there are no warehouse connections', async () => {
    const res = await tool('execute_sql', { args: { query: 'select 1', connectionId: 'abc' } });
    expect(res.body).toMatchObject({ success: false, error: { category: 'invalid_input', retry: 'never' } });
  });

  it('answers 400 naming args or args.query when missing', async () => {
    const none = await tool('execute_sql', {});
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ type: 'validation_error', attr: 'args' });
    const noQuery = await tool('execute_sql', { args: {} });
    expect(noQuery.status).toBe(400);
    expect(noQuery.body).toMatchObject({ type: 'validation_error', attr: 'args__query' });
  });

  it('is served under /api/projects/ too', async () => {
    const res = await tool('execute_sql', { args: { query: 'select 1 as one' } }, { prefix: 'projects' });
    expect(res.body).toEqual({ success: true, content: 'one\n1' });
  });

  it('needs query:read', async () => {
    const res = await tool('execute_sql', { args: { query: 'select 1' } }, { key: await t.key(['event_definition:read']) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(missingScope('query:read'));
  });
});

describe('read_taxonomy', () => {
  it('lists the event names, the most frequent first, paginated', async () => {
    expect(await taxonomy({ kind: 'events' })).toBe('events:\n- `$pageview`\n- `signup`\n- `rare`');
    expect(await taxonomy({ kind: 'events', limit: 1, offset: 1 })).toBe('events:\n- `signup`');
  });

  it("lists an event's properties by type, the most common first", async () => {
    expect(await taxonomy({ kind: 'event_properties', event_name: '$pageview' })).toBe(
      `${PREAMBLE}\n<String>\n- $browser\n- long_text\n</String>\n<Numeric>\n- price\n</Numeric>\n<Boolean>\n- paid\n</Boolean>\n<DateTime>\n- seen_at\n</DateTime>`,
    );
    expect(await taxonomy({ kind: 'event_properties', event_name: 'nope' })).toBe(
      'Properties do not exist in the taxonomy for the event nope.',
    );
  });

  it("samples an event property's values, quoted for texts, with what is missing", async () => {
    expect(await taxonomy({ kind: 'event_property_values', event_name: '$pageview', property_name: '$browser' })).toBe(
      '"Chrome", "Firefox", "Safari"',
    );
    expect(await taxonomy({ kind: 'event_property_values', event_name: '$pageview', property_name: 'price' })).toBe('10, 12.5');
    expect(await taxonomy({ kind: 'event_property_values', event_name: '$pageview', property_name: 'nope' })).toBe(
      'The property nope does not exist in the taxonomy.',
    );
    expect(await taxonomy({ kind: 'event_property_values', event_name: 'signup', property_name: '$browser' })).toBe(
      'The property $browser does not exist in the taxonomy for the event signup.',
    );
  });

  it('reads names with quotes and backslashes as they are (no HogQL injection)', async () => {
    const name = "it's \\ fine' or 1=1 --";
    await importEvents(t.store, P, [{ event: name, distinct_id: 'erin', timestamp: '2024-11-03T00:00:00Z', properties: { "o'k": 'yes' } }]);
    expect(await taxonomy({ kind: 'event_properties', event_name: name })).toBe(`${PREAMBLE}\n<String>\n- o'k\n</String>`);
    expect(await taxonomy({ kind: 'event_property_values', event_name: name, property_name: "o'k" })).toBe('"yes"');
    expect(await taxonomy({ kind: 'event_property_values', event_name: '$pageview', property_name: "o'k" })).toBe(
      "The property o'k does not exist in the taxonomy for the event $pageview.",
    );
  });

  it('says "and N more" past 25 values', async () => {
    await importEvents(
      t.store,
      P,
      Array.from({ length: 30 }, (_, i) => ({
        event: 'many',
        distinct_id: 'dave',
        timestamp: new Date(Date.UTC(2024, 10, 2, 0, i)).toISOString(),
        properties: { n: i },
      })),
    );
    const text = await taxonomy({ kind: 'event_property_values', event_name: 'many', property_name: 'n' });
    expect(text.endsWith(' and 5 more distinct values.')).toBe(true);
    expect(text.split(', ')).toHaveLength(25);
  });

  it('reads person properties and values; session properties are fixed; other entities do not exist', async () => {
    expect(await taxonomy({ kind: 'entity_properties', entity: 'person' })).toBe(`${PREAMBLE}\n<String>\n- email\n- plan\n</String>`);
    expect(await taxonomy({ kind: 'entity_property_values', entity: 'person', property_name: 'plan' })).toMatch(
      /^"(free|pro)", "(free|pro)"$/,
    );
    expect(await taxonomy({ kind: 'entity_property_values', entity: 'person', property_name: 'nope' })).toBe(
      'The property nope does not exist in the taxonomy for the entity person.',
    );
    expect(await taxonomy({ kind: 'entity_properties', entity: 'session' })).toContain('<Numeric>\n- $session_duration');
    expect(await taxonomy({ kind: 'entity_properties', entity: 'company' })).toBe('Entity company does not exist in the taxonomy.');
    expect(await taxonomy({ kind: 'entity_property_values', entity: 'company', property_name: 'x' })).toBe(
      'The entity company does not exist in the taxonomy. You must use one of the following: person, session.',
    );
  });

  it('answers PostHog\'s "No actions exist in the project." for actions', async () => {
    expect(await taxonomy({ kind: 'action_properties', action_id: 3 })).toBe('No actions exist in the project.');
    expect(await taxonomy({ kind: 'action_property_values', action_id: 3, property_name: 'x' })).toBe('No actions exist in the project.');
  });

  it('answers 400 naming the field a kind needs', async () => {
    const res = await tool('read_taxonomy', { args: { query: { kind: 'event_properties' } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code: 'required', attr: 'args__query__event_name' });
  });

  it('needs event_definition:read and property_definition:read', async () => {
    const body = { args: { query: { kind: 'events' } } };
    const a = await tool('read_taxonomy', body, { key: await t.key(['event_definition:read']) });
    expect(a.status).toBe(403);
    expect(a.body).toEqual(missingScope('property_definition:read'));
    const b = await tool('read_taxonomy', body, { key: await t.key(['property_definition:read']) });
    expect(b.body).toEqual(missingScope('event_definition:read'));
    const both = await tool('read_taxonomy', body, { key: await t.key(['event_definition:read', 'property_definition:read']) });
    expect(both.status).toBe(200);
  });
});

describe('other tools', () => {
  it('answer 404', async () => {
    const res = await t.fetch(`/api/environments/${P}/mcp_tools/docs_search_nope/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ args: {} }),
    });
    expect(res.status).toBe(404);
  });
});
