/**
 * Several daemons share one PostgreSQL, and they are upgraded one at a time: the first new one migrates the
 * schema at its start, and the old ones, which checked the version only at theirs, would go on claiming and
 * writing rows the newer schema means otherwise (an old daemon ignores an archived project, say). Each daemon
 * reads the schema's version every `everyMs`; while it is newer than this build's, the health condition
 * SCHEMA_NEWER pauses its claims (its runs in progress finish) and says to upgrade it.
 */
import type { Queryable } from '../store/db.js';
import { currentSchemaVersion } from '../store/migrate.js';
import { LATEST_SCHEMA_VERSION } from '../store/migrations/index.js';
import { trackResource } from '../lib/resources.js';
import type { HealthMonitor } from './health.js';

export function watchSchema(db: Queryable & { name: string }, health: HealthMonitor, everyMs: number): () => void {
  let busy = false;
  const check = async () => {
    if (busy) return;
    busy = true;
    try {
      const version = await currentSchemaVersion(db);
      health.schema(version > LATEST_SCHEMA_VERSION ? {
        path: db.name,
        message: `The database ${db.name} has schema version ${version}, newer than this Maestro knows (${LATEST_SCHEMA_VERSION}): another daemon was upgraded. This daemon claims no new tasks (its runs in progress finish); upgrade it and restart it.`,
      } : null);
    } catch {
      // The database away (a restart): the store's own errors say so; the next check tries again.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void check(), everyMs);
  timer.unref();
  const untrack = trackResource('timer', 'schema watch', () => clearInterval(timer));
  return () => {
    clearInterval(timer);
    untrack();
  };
}
