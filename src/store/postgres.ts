/**
 * PostgreSQL through node-postgres, for teams whose daemons share one database.
 * BIGINT (int8) columns come back as JS numbers: every one we store is an epoch
 * millisecond or a counter, far below 2^53.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { MaestroError } from '../core/errors.js';
import { redactUrl } from '../core/redact.js';
import { trackResource } from '../lib/resources.js';
import type { DBAdapter, Queryable, QueryOptions, SqlValue, TransactionOptions } from './db.js';
import { EventNotifier } from './pgNotifier.js';

const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export { redactUrl };

/**
 * Errors that say the server cannot be reached or used right now, not that a statement is wrong: no route or
 * connection, a missing database or refused login, and a server going down or coming up (57P01–57P03: shut
 * down, crashed, "the database system is starting up"), or a connection lost mid-way. Callers treat
 * DATABASE_UNREACHABLE as a moment to wait, never as a fault of the task at hand.
 */
const UNREACHABLE_CODES = ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE', '3D000', '28P01', '28000', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006'];
const LOST_CONNECTION = /Connection terminated|connection error and is not queryable/;

function wrapConnectError(err: unknown, url: string): unknown {
  const e = err as NodeJS.ErrnoException & { code?: string };
  if (e && ((typeof e.code === 'string' && UNREACHABLE_CODES.includes(e.code)) || (!e.code && LOST_CONNECTION.test(e.message ?? '')))) {
    return new MaestroError('DATABASE_UNREACHABLE', `Cannot reach PostgreSQL at ${redactUrl(url)}: ${e.message}`, { cause: err });
  }
  return err;
}

function queryable(client: pg.Pool | pg.PoolClient, url: string): Queryable {
  const q = async <T>(sql: string, params: readonly SqlValue[] = [], options?: QueryOptions): Promise<T[]> => {
    try {
      const res = await client.query({ name: options?.prepare, text: sql, values: params as SqlValue[], types });
      return res.rows as T[];
    } catch (err) {
      throw wrapConnectError(err, url);
    }
  };
  return {
    dialect: 'postgres',
    all: q,
    async one<T>(sql: string, params?: readonly SqlValue[]) {
      return (await q<T>(sql, params))[0];
    },
    async run(sql: string, params: readonly SqlValue[] = []) {
      try {
        const res = await client.query({ text: sql, values: params as SqlValue[], types });
        return res.rowCount ?? 0;
      } catch (err) {
        throw wrapConnectError(err, url);
      }
    },
  };
}

/**
 * A handle that takes one statement and refuses a second: a one-statement transaction runs
 * without BEGIN and COMMIT, so a second statement would not share its transaction.
 */
function oneStatement(q: Queryable): Queryable {
  let sent = false;
  const once = () => {
    if (sent) throw new Error('A one-statement transaction sent a second statement');
    sent = true;
  };
  return {
    dialect: q.dialect,
    all: (sql, params, options) => (once(), q.all(sql, params, options)),
    one: (sql, params) => (once(), q.one(sql, params)),
    run: (sql, params) => (once(), q.run(sql, params)),
  };
}

/**
 * How long the server lets one of our sessions sit idle inside a transaction. Ours last milliseconds; one
 * idle for this long belongs to a daemon that vanished mid-transaction (cut off from the network, frozen),
 * and the server would otherwise keep its row locks until TCP gave up, hours later, while every other
 * daemon's update of those rows (taking a lapsed lease back) waits behind them.
 */
export const IDLE_IN_TRANSACTION_MS = 30_000;

/** The channel the daemons LISTEN on for committed events (src/app/daemon.ts names it too). */
export const EVENTS_CHANNEL = 'maestro_events';

export interface PostgresOptions {
  max?: number;
  idleInTransactionMs?: number;
  /** Tests: the notifier's gap between two notifications (default NOTIFY_GAP_MS). */
  notifyGapMs?: number;
}

export function openPostgres(url: string, options: PostgresOptions = {}): DBAdapter {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 10_000,
    idle_in_transaction_session_timeout: options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS,
    // A server that vanished is noticed by the client too, not only at the next query.
    keepAlive: true,
    keepAliveInitialDelayMillis: 5000,
  });
  // An idle client that loses its server must not crash the daemon; the next query reconnects.
  pool.on('error', () => undefined);
  // Nor one checked out between two of its uses: a server restart sends every backend a FATAL 57P01, and a
  // client with no query running emits it as an 'error' event. The pool and the transaction below listen
  // while they hold a client, but a multihost run (three daemons, a PostgreSQL restart) still crashed a
  // daemon on one with no listener. Every client gets one for its life; a dead client is not queryable,
  // so its next statement fails (DATABASE_UNREACHABLE) and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const base = queryable(pool, url);
  // A failed send is dropped: the listeners' safety-net poll reads the log anyway (pgNotifier.ts).
  // The notification's own transaction commits without waiting for the WAL flush (it holds the notify
  // lock until its commit returns, and it carries no data worth making durable); one round trip.
  // The payload says which process sent it (a random id, ours alone: nothing of the user's goes into the SQL).
  const origin = randomUUID();
  const notifier = new EventNotifier(
    () => pool.query(`BEGIN; SET LOCAL synchronous_commit = off; SELECT pg_notify('${EVENTS_CHANNEL}', '${origin}'); COMMIT`),
    { gapMs: options.notifyGapMs },
  );
  let closed = false;
  const untrack = trackResource('database', `postgres ${redactUrl(url)}`, () => adapter.close());
  const adapter: DBAdapter = {
    ...base,
    name: redactUrl(url),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>, _label?: string, options?: TransactionOptions): Promise<T> {
      if (options?.oneStatement) return fn(oneStatement(base));
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw wrapConnectError(err, url);
      }
      // A checked-out client has no pool listener: its server going away between two
      // statements (a restart) would be an unhandled 'error' event and end the process.
      // The transaction's next statement fails instead, and the caller sees that.
      const onError = () => undefined;
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn(queryable(client, url));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.off('error', onError);
        client.release();
      }
    },
    notifyEvents: () => notifier.poke(),
    notifyOrigin: origin,
    async close() {
      if (closed) return;
      closed = true;
      untrack();
      // Announce what this process committed last before the pool goes.
      await notifier.close();
      await pool.end();
    },
  };
  return adapter;
}
