/**
 * What GET /api/daemons answers (`maestro daemons --json` prints it): the daemons of this database heard from in
 * the last day, each with its settings as it registered them and the ones that differ from the answering daemon's.
 * Pure (zod only).
 */
import { z } from 'zod';
import { daemonSettingsSchema } from '../../core/daemonSettings.js';

const epochMs = z.number().describe("milliseconds since the epoch, by the database's clock on PostgreSQL (the daemon's on SQLite)");

export const daemonEntrySchema = z.strictObject({
  name: z.string().describe('as registered, cut at 200 characters (then ending in …); any text: escape it to show it'),
  host: z.string().describe('cut at 255 characters'),
  pid: z.number(),
  home: z.string().describe('cut at 4096 characters'),
  startedAt: epochMs,
  heartbeatAt: epochMs,
  lastHeardMsAgo: z.number().describe("since its last heartbeat, by the database's clock (PostgreSQL's now()), never one host's clock against another's"),
  runsInFlight: z.number().int().nonnegative().describe('its runs with status running'),
  state: z.enum(['live', 'stale']).describe('stale: no heartbeat for three of its leases (it was killed, or cannot reach the database); a stop removes a daemon'),
  self: z.boolean().describe('the daemon that answered'),
  settings: daemonSettingsSchema.nullable().describe('null: a Maestro from before settings were registered, or unreadable'),
  unreadable: z.string().nullable().describe('why the stored settings were not taken, or null'),
  differs: z.array(daemonSettingsSchema.keyof()).describe("the settings that differ from the answering daemon's"),
});

export const daemonListResponse = z.strictObject({
  self: z.string().describe("the answering daemon's name"),
  settings: daemonSettingsSchema.describe("the answering daemon's settings"),
  clockSkewMs: z.number().nullable().describe("the answering daemon's clock minus the database's (PostgreSQL); null on SQLite, one machine's clock"),
  daemons: z.array(daemonEntrySchema).describe('by name'),
});

export type DaemonEntry = z.infer<typeof daemonEntrySchema>;
export type DaemonList = z.infer<typeof daemonListResponse>;

/** What POST /api/daemon/stop answers before the daemon stops: where it runs, so that `maestro stop` can wait for its exit. */
export const daemonStopResponse = z.strictObject({
  stopping: z.literal(true),
  pid: z.number().describe("the daemon's process id, on host"),
  host: z.string().describe("the daemon's host name (os.hostname())"),
  home: z.string().describe("the daemon's MAESTRO_HOME: its lock is released as it exits"),
  graceMs: z.number().describe('how long running stages may take to finish before their workers are stopped (as at SIGTERM)'),
});

export type DaemonStop = z.infer<typeof daemonStopResponse>;

/**
 * How far a stop has got, as POST /api/daemon/stop?follow=true streams it (one JSON line each, after the first line,
 * the DaemonStop): running stages finishing (up to the grace), the hand-over (finished results applied, tasks between
 * stages released to the other daemons, the daemon's row taken off), then done. The line repeats every few seconds
 * while nothing changes, so that a client that gives up can say what it saw.
 */
export const STOP_PHASES = ['finishing-stages', 'handing-over', 'handed-over'] as const;
export type StopPhase = (typeof STOP_PHASES)[number];
export const stopProgressLine = z.strictObject({ phase: z.enum(STOP_PHASES), runsRunning: z.number().int().nonnegative().describe('its workers still running') });
export type StopProgressLine = z.infer<typeof stopProgressLine>;
