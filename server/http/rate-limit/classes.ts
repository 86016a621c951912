/**
 * The throttle class of each operation, read from the spec: every operation of `openapi.yaml`
 * declares `x-rate-limit-class: events | event_values | query | default` (PostHog's throttle
 * scopes, posthog/rate_limit.py: the events list and retrieve are `events`, the events values
 * `event_values`, the query endpoint `query`, everything else `default`), as it declares its scopes. There is no second table of
 * classes in code. Read once at start-up; an operation without a valid class is a start-up error
 * (and a lint error: the `rule/operation-rate-limit-class` rule of redocly.yaml).
 */
import { listOperations, type OpenApiDocument } from '../spec.js';
import type { RateClass } from './config.js';

/** The classes an operation may declare, in the order of the README's table. */
export const RATE_CLASSES: readonly RateClass[] = ['events', 'event_values', 'query', 'default'];

/** The spec extension naming an operation's throttle class. */
export const RATE_CLASS_EXTENSION = 'x-rate-limit-class';

/** Thrown at start-up when an operation of the spec has no valid `x-rate-limit-class`. */
export class RateClassError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RateClassError';
  }
}

/**
 * operationId → throttle class, for every operation of `spec`. Throws `RateClassError` naming the
 * operation when one has no `x-rate-limit-class` or a value other than `events`, `event_values`,
 * `query`, `default`.
 */
export function rateClassesOf(spec: OpenApiDocument): ReadonlyMap<string, RateClass> {
  const classes = new Map<string, RateClass>();
  for (const op of listOperations(spec)) {
    const operation = spec.paths[op.path]?.[op.method] as Record<string, unknown> | undefined;
    const value = operation?.[RATE_CLASS_EXTENSION];
    if (!RATE_CLASSES.includes(value as RateClass))
      throw new RateClassError(
        `openapi.yaml operation ${op.operationId} (${op.method.toUpperCase()} ${op.path}) must declare ${RATE_CLASS_EXTENSION}: ${RATE_CLASSES.join(' | ')}, ` +
          `got ${value === undefined ? 'none' : JSON.stringify(value)}`,
      );
    classes.set(op.operationId, value as RateClass);
  }
  return classes;
}
