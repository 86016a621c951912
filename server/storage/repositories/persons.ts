/**
 * The read side of persons (the `persons` and `person_distinct_ids` tables the events store keeps,
 * written by ../events/write.ts): a page of a team's persons with PostHog's list filters, one
 * person by id or uuid, and the distinct ids of persons. Property filters compile through the
 * events reads' compiler (../events/filters.ts `compilePropertyGroup`) over the person's own
 * properties; dialect differences come from `../dialect.ts`.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { PropertyGroup } from '../events/filter-tree.js';
import { dialectOf, icontains, type DialectName } from '../dialect.js';
import { chunks } from '../chunks.js';
import type { Database } from '../schema.js';
import { fromJson, toBool, toIso, toInt } from '../values.js';
import { compilePropertyGroup, jsonFilterSource, propertyText, type FilterSource } from '../events/filters.js';
import { loadMaterializedColumns, NO_MATERIALIZED_COLUMNS, type MaterializedColumns } from '../events/materialized.js';

/** The persons list's one source: the person's own properties, and its materialized columns. */
const PERSON_SOURCE: FilterSource = jsonFilterSource(
  sql`persons.properties`,
  'person',
  (name) => sql<string | null>`persons.${sql.ref(name)}`,
);

/** A person as stored, with its distinct ids. */
export interface PersonRecord {
  id: number;
  uuid: string;
  /** the person's properties (an object) */
  properties: Record<string, unknown>;
  is_identified: boolean;
  /** ISO 8601 UTC with milliseconds */
  created_at: string;
  /** every distinct id of the person, in code-unit order of the ids */
  distinct_ids: string[];
}

/** The filters of one persons list request (all optional but the team and paging). */
export interface PersonListQuery {
  teamId: number;
  /** persons that have this distinct id (exact) */
  distinctId?: string | undefined;
  /** persons whose `email` property is exactly this text */
  email?: string | undefined;
  /** PostHog's search: `email` contains it (any case), or a distinct id is it, or (a UUID) the person's uuid is it */
  search?: { text: string; uuid: string | undefined } | undefined;
  /** property filters, every filter read on the person's properties */
  properties?: PropertyGroup | undefined;
  offset: number;
  limit: number;
}

type PersonsQuery = SelectQueryBuilder<Database, 'persons', object>;

/** Reads persons of the store. */
export class PersonsRepository {
  private readonly dialect: DialectName;

  constructor(private readonly db: Kysely<Database>) {
    this.dialect = dialectOf(db);
  }

  /** The materialized columns the filters of `q` may read (none needs a query when `q` filters on no property). */
  private async columnsFor(q: Omit<PersonListQuery, 'offset' | 'limit'>): Promise<MaterializedColumns> {
    return q.properties || q.email !== undefined || q.search !== undefined ? loadMaterializedColumns(this.db) : NO_MATERIALIZED_COLUMNS;
  }

  private filtered(q: PersonListQuery, dialect: DialectName, columns: MaterializedColumns): PersonsQuery {
    let query: PersonsQuery = this.db.selectFrom('persons').where('persons.team_id', '=', q.teamId);
    const hasDistinctId = (id: string) =>
      sql<boolean>`exists (select 1 from person_distinct_ids pdi where pdi.team_id = persons.team_id and pdi.person_id = persons.id and pdi.distinct_id = ${id})`;
    if (q.distinctId !== undefined) query = query.where(hasDistinctId(q.distinctId));
    const email = propertyText(dialect, PERSON_SOURCE, 'email', columns);
    if (q.email !== undefined) query = query.where(sql<boolean>`(${email} = ${q.email})`);
    if (q.search !== undefined) {
      const parts = [sql<boolean>`(${email} is not null and ${icontains(dialect, email, q.search.text)})`, hasDistinctId(q.search.text)];
      if (q.search.uuid !== undefined) parts.push(sql<boolean>`(persons.uuid = ${q.search.uuid})`);
      query = query.where(sql<boolean>`(${sql.join(parts, sql` or `)})`);
    }
    if (q.properties) query = query.where(compilePropertyGroup(dialect, q.properties, () => PERSON_SOURCE, columns));
    return query;
  }

  /**
   * One page of the team's persons, newest first (`created_at` desc, then `id` desc), at most
   * `limit` after skipping `offset`, with their distinct ids. Callers ask for one row more than
   * they show to learn whether more exist.
   */
  async list(q: PersonListQuery): Promise<PersonRecord[]> {
    const rows = await this.filtered(q, this.dialect, await this.columnsFor(q))
      .select(['persons.id', 'persons.uuid', 'persons.properties', 'persons.is_identified', 'persons.created_at'])
      .orderBy('persons.created_at', 'desc')
      .orderBy('persons.id', 'desc')
      .limit(q.limit)
      .offset(q.offset)
      .execute();
    return this.withDistinctIds(rows);
  }

  /** How many of the team's persons match (PostHog's `include_total`). */
  async count(q: Omit<PersonListQuery, 'offset' | 'limit'>): Promise<number> {
    const row = await this.filtered({ ...q, offset: 0, limit: 0 }, this.dialect, await this.columnsFor(q))
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return toInt(row.n as number | string);
  }

  /** The team's person with this integer id or this uuid (lowercase, with dashes), or undefined. */
  async find(teamId: number, key: { id: number } | { uuid: string }): Promise<PersonRecord | undefined> {
    let query = this.db
      .selectFrom('persons')
      .select(['persons.id', 'persons.uuid', 'persons.properties', 'persons.is_identified', 'persons.created_at'])
      .where('persons.team_id', '=', teamId);
    query = 'id' in key ? query.where('persons.id', '=', key.id) : query.where('persons.uuid', '=', key.uuid);
    const row = await query.executeTakeFirst();
    return row ? (await this.withDistinctIds([row]))[0] : undefined;
  }

  /**
   * The team's persons with these uuids (lowercase, with dashes), with their distinct ids, in no
   * particular order; a uuid the team has no person for is left out (the actors of an insight
   * whose person was deleted).
   */
  async findByUuids(teamId: number, uuids: readonly string[]): Promise<PersonRecord[]> {
    const rows = [];
    for (const slice of chunks(uuids)) {
      rows.push(
        ...(await this.db
          .selectFrom('persons')
          .select(['persons.id', 'persons.uuid', 'persons.properties', 'persons.is_identified', 'persons.created_at'])
          .where('persons.team_id', '=', teamId)
          .where('persons.uuid', 'in', slice)
          .execute()),
      );
    }
    return this.withDistinctIds(rows);
  }

  /** The team's persons of these distinct ids, by distinct id (a distinct id without a person left out). */
  async findByDistinctIds(teamId: number, distinctIds: readonly string[]): Promise<Map<string, PersonRecord>> {
    const pairs: { distinct_id: string; person_id: number }[] = [];
    for (const slice of chunks(distinctIds))
      pairs.push(
        ...(await this.db
          .selectFrom('person_distinct_ids')
          .select(['distinct_id', 'person_id'])
          .where('team_id', '=', teamId)
          .where('distinct_id', 'in', slice)
          .execute()),
      );
    const ids = [...new Set(pairs.map((p) => p.person_id))];
    const rows = [];
    for (const slice of chunks(ids))
      rows.push(
        ...(await this.db
          .selectFrom('persons')
          .select(['persons.id', 'persons.uuid', 'persons.properties', 'persons.is_identified', 'persons.created_at'])
          .where('persons.team_id', '=', teamId)
          .where('persons.id', 'in', slice)
          .execute()),
      );
    const persons = new Map((await this.withDistinctIds(rows)).map((p) => [p.id, p]));
    const out = new Map<string, PersonRecord>();
    for (const { distinct_id, person_id } of pairs) {
      const p = persons.get(person_id);
      if (p) out.set(distinct_id, p);
    }
    return out;
  }

  /**
   * Up to `limit` distinct texts of person property `key` (`jsonText`'s text: numbers and
   * booleans as JSON text, objects as JSON) among the team's persons, with how many persons hold
   * each, most first, ties by value; `contains` keeps texts holding it, any case. Null and absent
   * values are left out.
   */
  async propertyValues(
    teamId: number,
    key: string,
    contains: string | undefined,
    limit: number,
  ): Promise<{ value: string; count: number }[]> {
    const text = propertyText(this.dialect, PERSON_SOURCE, key, await loadMaterializedColumns(this.db));
    // the text computed once per person, then grouped by name (PostgreSQL cannot match a GROUP BY
    // expression holding a bound key to the same expression in the SELECT)
    const inner = this.db.selectFrom('persons').select(text.as('v')).where('persons.team_id', '=', teamId).as('p');
    let q = this.db
      .selectFrom(inner)
      .select(['p.v', (eb) => eb.fn.countAll().as('c')])
      .where('p.v', 'is not', null);
    if (contains !== undefined && contains !== '') q = q.where(icontains(this.dialect, sql`p.v`, contains));
    const rows = await q.groupBy('p.v').orderBy('c', 'desc').orderBy('p.v').limit(limit).execute();
    return rows.map((r) => ({ value: String(r.v), count: toInt(r.c as number | string) }));
  }

  /** Up to `limit` of the team's persons' distinct ids in code-unit order, those holding `contains` (any case) when given. */
  async distinctIdValues(teamId: number, contains: string | undefined, limit: number): Promise<string[]> {
    let q = this.db.selectFrom('person_distinct_ids as pdi').select('pdi.distinct_id').where('pdi.team_id', '=', teamId);
    if (contains !== undefined && contains !== '') q = q.where(icontains(this.dialect, sql`pdi.distinct_id`, contains));
    const rows = await q
      .orderBy(sql`pdi.distinct_id`)
      .limit(limit)
      .execute();
    return rows.map((r) => r.distinct_id);
  }

  private async withDistinctIds(
    rows: { id: number; uuid: string; properties: unknown; is_identified: number | boolean; created_at: string | Date }[],
  ): Promise<PersonRecord[]> {
    const ids = new Map<number, string[]>();
    const all = rows.map((r) => r.id);
    for (const slice of chunks(all)) {
      const found = await this.db
        .selectFrom('person_distinct_ids')
        .select(['person_id', 'distinct_id'])
        .where('person_id', 'in', slice)
        .execute();
      for (const f of found) {
        const list = ids.get(f.person_id);
        if (list) list.push(f.distinct_id);
        else ids.set(f.person_id, [f.distinct_id]);
      }
    }
    // code-unit order on both stores (PostgreSQL's collation would order text otherwise)
    for (const list of ids.values()) list.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return rows.map((r) => ({
      id: r.id,
      uuid: r.uuid,
      properties: fromJson<Record<string, unknown> | null>(r.properties) ?? {},
      is_identified: toBool(r.is_identified),
      created_at: toIso(r.created_at),
      distinct_ids: ids.get(r.id) ?? [],
    }));
  }
}
