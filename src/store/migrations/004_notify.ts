/**
 * Live feeds across daemons on one PostgreSQL. Every statement that inserts
 * events sends NOTIFY maestro_events in the same transaction (so a listener
 * hears of it exactly when the rows become visible); the daemons' event feeds
 * LISTEN and read at once. Streamed items (tokens, phases) of a run are not
 * stored as events: they travel as NOTIFY maestro_stream payloads, and an
 * item too big for a payload (8000 bytes) is parked in stream_overflow and
 * the payload names its row. SQLite gets the table only (one daemon per file).
 */
import type { Migration } from './migration.js';

export const notify: Migration = {
  version: 4,
  name: 'notify',
  statements: [
    `CREATE TABLE stream_overflow (
      id {{serial}},
      payload TEXT NOT NULL,
      at BIGINT NOT NULL
    )`,
  ],
  postgres: [
    // FOR EACH STATEMENT with an empty payload: identical notifications in one transaction are folded into one.
    `CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN PERFORM pg_notify('maestro_events', ''); RETURN NULL; END $fn$`,
    `CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify()`,
  ],
};
