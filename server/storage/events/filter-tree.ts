/**
 * The tree of validated property filters that the events reads compile to SQL
 * (./filters.ts). The domain builds it from the `properties` query parameter and
 * checks every rule on the way (server/domain/event-filters.ts); the store only translates it.
 */

/** PostHog's operators this server runs. */
export const PROPERTY_OPERATORS = [
  'exact',
  'is_not',
  'icontains',
  'not_icontains',
  'regex',
  'not_regex',
  'gt',
  'lt',
  'gte',
  'lte',
  'is_set',
  'is_not_set',
  'is_date_exact',
  'is_date_after',
  'is_date_before',
] as const;
/** One of PROPERTY_OPERATORS. */
export type PropertyOperator = (typeof PROPERTY_OPERATORS)[number];

/** One validated filter, its value already in the form the SQL needs. */
export type PropertyFilter =
  | { kind: 'filter'; key: string; type: 'event' | 'person'; operator: 'exact' | 'is_not'; texts: string[] }
  | { kind: 'filter'; key: string; type: 'event' | 'person'; operator: 'icontains' | 'not_icontains'; needle: string }
  | { kind: 'filter'; key: string; type: 'event' | 'person'; operator: 'regex' | 'not_regex'; pattern: string }
  | { kind: 'filter'; key: string; type: 'event' | 'person'; operator: 'gt' | 'lt' | 'gte' | 'lte'; number: number }
  | { kind: 'filter'; key: string; type: 'event' | 'person'; operator: 'is_set' | 'is_not_set' }
  | {
      kind: 'filter';
      key: string;
      type: 'event' | 'person';
      operator: 'is_date_exact' | 'is_date_after' | 'is_date_before';
      /** `YYYY-MM-DDTHH:MM:SS.mmm` UTC, the form the store compares dates in */
      date: string;
      /** for is_date_exact with a date-only value: the end of that day (exclusive), same form */
      dayEnd?: string;
    };

/** A group of filters and groups. */
export interface PropertyGroup {
  kind: 'group';
  type: 'AND' | 'OR';
  values: (PropertyFilter | PropertyGroup)[];
}
