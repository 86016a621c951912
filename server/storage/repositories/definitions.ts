/**
 * What a project says about its event and property definitions (tables `event_definitions` and
 * `property_definitions`, migration 0016): the stored part of a definition, merged by the domain
 * (server/domain/event-definitions.ts, property-definitions.ts) with what is derived from the
 * events. Rows are read per project (a project describes tens to thousands of names, not more),
 * written one at a time. Timestamps are ISO 8601 UTC strings; tags and columns plain arrays.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { boolValue, fromJson, jsonValue, toBool, toIso } from '../values.js';

/** The verification and visibility shared by both kinds of definition. */
export interface DefinitionMarks {
  description: string;
  tags: string[];
  verified: boolean;
  verified_at: string | null;
  verified_by_id: number | null;
  hidden: boolean;
  updated_at: string;
  updated_by_id: number | null;
}

/** A stored event definition. */
export interface EventDefinitionMeta extends DefinitionMarks {
  id: string;
  team_id: number;
  name: string;
  /** created through the API (listed before any event of the name is stored) */
  declared: boolean;
  owner_id: number | null;
  post_to_slack: boolean;
  default_columns: string[];
  created_at: string;
}

/** A stored property definition; `type` 1 event, 2 person (PostHog's `PropertyDefinition.Type`). */
export interface PropertyDefinitionMeta extends DefinitionMarks {
  id: string;
  team_id: number;
  type: number;
  name: string;
  /** the declared type, null: as derived */
  property_type: string | null;
}

type EventRow = Awaited<ReturnType<ReturnType<DefinitionsRepository['eventRows']>['execute']>>[number];
type PropertyRow = Awaited<ReturnType<ReturnType<DefinitionsRepository['propertyRows']>['execute']>>[number];

function marksOf(r: EventRow | PropertyRow): DefinitionMarks {
  return {
    description: r.description,
    tags: (r.tags === null ? null : fromJson<string[] | null>(r.tags)) ?? [],
    verified: toBool(r.verified),
    verified_at: r.verified_at === null ? null : toIso(r.verified_at),
    verified_by_id: r.verified_by_id,
    hidden: toBool(r.hidden),
    updated_at: toIso(r.updated_at),
    updated_by_id: r.updated_by_id,
  };
}

function toEventMeta(r: EventRow): EventDefinitionMeta {
  return {
    ...marksOf(r),
    id: r.id,
    team_id: r.team_id,
    name: r.name,
    declared: toBool(r.declared),
    owner_id: r.owner_id,
    post_to_slack: toBool(r.post_to_slack),
    default_columns: (r.default_columns === null ? null : fromJson<string[] | null>(r.default_columns)) ?? [],
    created_at: toIso(r.created_at),
  };
}

function toPropertyMeta(r: PropertyRow): PropertyDefinitionMeta {
  return { ...marksOf(r), id: r.id, team_id: r.team_id, type: r.type, name: r.name, property_type: r.property_type };
}

/** The column values of the shared marks. */
function marksValues(m: DefinitionMarks) {
  return {
    description: m.description,
    tags: m.tags.length ? jsonValue(m.tags) : null,
    verified: boolValue(m.verified),
    verified_at: m.verified_at,
    verified_by_id: m.verified_by_id,
    hidden: boolValue(m.hidden),
    updated_at: m.updated_at,
    updated_by_id: m.updated_by_id,
  };
}

/** Repository of stored definitions; use inside a transaction for read-then-write rules. */
export class DefinitionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  private eventRows() {
    return this.db.selectFrom('event_definitions').selectAll();
  }

  private propertyRows() {
    return this.db.selectFrom('property_definitions').selectAll();
  }

  private eventValues(m: EventDefinitionMeta) {
    return {
      ...marksValues(m),
      owner_id: m.owner_id,
      post_to_slack: boolValue(m.post_to_slack),
      default_columns: m.default_columns.length ? jsonValue(m.default_columns) : null,
    };
  }

  /** Every stored event definition of the team, by name. */
  async eventDefinitions(teamId: number): Promise<EventDefinitionMeta[]> {
    return (await this.eventRows().where('team_id', '=', teamId).orderBy('name').execute()).map(toEventMeta);
  }

  /** The stored event definition with this id in the team, if any. */
  async eventDefinition(teamId: number, id: string): Promise<EventDefinitionMeta | undefined> {
    const r = await this.eventRows().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return r && toEventMeta(r);
  }

  /**
   * Stores `m`: a new row, or the team's row with its id replaced. `created_at` and `declared` of
   * an existing row are kept (a definition once declared stays listed).
   */
  async saveEventDefinition(m: EventDefinitionMeta): Promise<void> {
    const values = this.eventValues(m);
    await this.db
      .insertInto('event_definitions')
      .values({ ...values, id: m.id, team_id: m.team_id, name: m.name, declared: boolValue(m.declared), created_at: m.created_at })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
  }

  /**
   * Stores a new row for `m`; false, writing nothing, when the team has one of that id already
   * (a name declared or edited before).
   */
  async createEventDefinition(m: EventDefinitionMeta): Promise<boolean> {
    const r = await this.db
      .insertInto('event_definitions')
      .values({
        ...this.eventValues(m),
        id: m.id,
        team_id: m.team_id,
        name: m.name,
        declared: boolValue(m.declared),
        created_at: m.created_at,
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Every stored property definition of the team of this type (1 event, 2 person). */
  async propertyDefinitions(teamId: number, type: number): Promise<PropertyDefinitionMeta[]> {
    return (await this.propertyRows().where('team_id', '=', teamId).where('type', '=', type).orderBy('name').execute()).map(toPropertyMeta);
  }

  /** The stored property definition with this id in the team, if any. */
  async propertyDefinition(teamId: number, id: string): Promise<PropertyDefinitionMeta | undefined> {
    const r = await this.propertyRows().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return r && toPropertyMeta(r);
  }

  /** Stores `m`: a new row, or the team's row with its id replaced. */
  async savePropertyDefinition(m: PropertyDefinitionMeta): Promise<void> {
    const values = { ...marksValues(m), property_type: m.property_type };
    await this.db
      .insertInto('property_definitions')
      .values({ ...values, id: m.id, team_id: m.team_id, type: m.type, name: m.name })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
  }
}
