/**
 * The limiters' counter store: an express-rate-limit `Store` that counts in Redis
 * (rate-limit-redis) while the Redis link is up, and in this process's memory (express-rate-limit's
 * MemoryStore, same window) while it is down — the same limits, so N processes allow up to
 * N × a limit during an outage. See docs/deploy.md, "When Redis is unreachable".
 */
import {
  MemoryStore,
  type ClientRateLimitInfo,
  type IncrementResponse,
  type Options as LimiterOptions,
  type Store,
} from 'express-rate-limit';
import type { RedisStore } from 'rate-limit-redis';
import type { RedisLink, ScriptLoader } from './redis-link.js';

/**
 * An express-rate-limit store over `redis` while `link` is usable, else over memory. It never
 * throws: a Redis failure (or no answer within the link's timeout) is reported to the link and
 * that request is counted in memory.
 */
export class SharedCounterStore implements Store, ScriptLoader {
  readonly localKeys = false;
  readonly prefix: string;
  private readonly memory = new MemoryStore();
  private options: LimiterOptions | undefined;

  constructor(
    private readonly redis: RedisStore,
    private readonly link: RedisLink,
  ) {
    this.prefix = redis.prefix;
  }

  init(options: LimiterOptions): void {
    this.options = options;
    this.memory.init(options);
    this.link.register(this);
  }

  /** (Re)loads the Redis scripts (rate-limit-redis's `init`); rejects before `init`. */
  loadScripts(): Promise<void> {
    if (!this.options) return Promise.reject(new Error('store not initialised'));
    return this.redis.init(this.options);
  }

  private async route<T>(onRedis: () => Promise<T>, onMemory: () => Promise<T>): Promise<T> {
    if (this.link.usable()) {
      try {
        return await this.link.attempt(onRedis);
      } catch (err) {
        this.link.failed(err);
      }
    }
    return onMemory();
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.route(
      () => this.redis.increment(key),
      () => this.memory.increment(key),
    );
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.route(
      () => this.redis.get(key),
      () => this.memory.get(key),
    );
  }

  decrement(key: string): Promise<void> {
    return this.route(
      () => this.redis.decrement(key),
      () => this.memory.decrement(key),
    );
  }

  async resetKey(key: string): Promise<void> {
    await this.memory.resetKey(key);
    await this.route(
      () => this.redis.resetKey(key),
      async () => undefined,
    );
  }

  shutdown(): void {
    this.memory.shutdown();
  }
}
