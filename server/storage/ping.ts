/** The store's liveness probe, for the readiness check of `/_readyz` (server/domain/readiness.ts). */
import { sql } from 'kysely';
import type { Store } from './db.js';

/** Whether a trivial query (`select 1`) succeeds on `store`; never rejects. */
export async function storeAnswers(store: Store): Promise<boolean> {
  try {
    await sql`select 1`.execute(store.db);
    return true;
  } catch {
    return false;
  }
}
