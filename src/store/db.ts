/**
 * The DBAdapter: the only way the store talks to a database. SQL is written
 * once, PostgreSQL-style (`$1, $2`); the SQLite adapter rewrites placeholders.
 * Timestamps are BIGINT epoch milliseconds and JSON columns are TEXT in both
 * engines, so every row maps the same way whichever engine holds it.
 */

import type { MaestroEvent } from '../core/types.js';

export type Dialect = 'sqlite' | 'postgres';
export type SqlValue = string | number | null;

export interface QueryOptions {
  /** The prepared statement's name: one name, one SQL text. */
  prepare?: string;
}

export interface TransactionOptions {
  /**
   * `fn` sends exactly one statement. PostgreSQL runs it on its own (one statement is one
   * transaction there), without the BEGIN and COMMIT round trips; a second statement is refused.
   */
  oneStatement?: boolean;
}

export interface Queryable {
  readonly dialect: Dialect;
  /**
   * Every row the statement returns (also for `… RETURNING`). `options.prepare` names a hot statement
   * of fixed text: PostgreSQL parses and plans it once per connection (SQLite prepares every text once anyway).
   */
  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlValue[], options?: QueryOptions): Promise<T[]>;
  /** The first row, or undefined. */
  one<T = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /** Runs a statement and returns how many rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /**
   * Told of each event the store appends through this handle (set by the Store
   * on a transaction's handle): once the transaction commits, its events go
   * straight to the live feeds, without reading them back.
   */
  readonly onEvent?: (e: MaestroEvent) => void;
  /**
   * Tests only (StoreOptions.handClock): leases and the registry go by the caller's injected clock on PostgreSQL
   * too, for a suite that moves time by hand (ops/dbClock.ts). Unset: the database's clock there.
   */
  readonly handClock?: boolean;
}

export interface DBAdapter extends Queryable {
  /** A human-readable name for logs and leak reports (never includes a password). */
  readonly name: string;
  /**
   * Runs `fn` in one write transaction (SQLite: BEGIN IMMEDIATE). Rolls back
   * when `fn` throws. Transactions do not nest: `fn` uses the handle it is given.
   * `label` names the operation for the test seam (store/faults.ts); the engines ignore it.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, label?: string, options?: TransactionOptions): Promise<T>;
  /**
   * Called by the store once a transaction that appended events has committed (never for one rolled
   * back). PostgreSQL announces them to the other daemons' listeners with one coalesced NOTIFY
   * maestro_events sent outside the transaction (store/pgNotifier.ts); SQLite has no listeners.
   * Resolves once a notification sent after the call went out or failed; never rejects.
   */
  notifyEvents?(): Promise<void>;
  /** What this process's notifications carry (PostgreSQL): its own listener knows them and reads nothing for them. */
  readonly notifyOrigin?: string;
  close(): Promise<void>;
}
