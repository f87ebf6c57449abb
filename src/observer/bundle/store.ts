/**
 * SessionBundleStore: load a bundle with its status, write it atomically, and
 * patch it with the optimistic re-read the notes describe (no lock files; if
 * the file's mtime moved between our read and our write, read again and
 * re-apply, up to 5 times). Load statuses (FORMATS §8.3):
 *   hit | miss (bundle_not_found, jsonl_source_missing)
 *   | corrupted (parse_error, schema_or_session_mismatch, workspace_mismatch)
 *   | expired (workspace_root_missing) | stale (jsonl newer than meta.jsonlMtime)
 */
import { jsonSyntaxWhere } from '../../lib/jsonError.js';
import { existsSync, lstatSync, renameSync, statSync } from 'node:fs';
import { assertNoLinkOut } from '../../knowledge/format/linkGuard.js';
import { readRegularFile } from '../../lib/regularFile.js';
import { MaestroError } from '../../core/errors.js';
import { redactDeep } from '../../core/redact.js';
import { bundlePath, writeFileAtomic, type WikiLayout } from '../../knowledge/format/wiki/layout.js';
import { BUNDLE_SCHEMA_VERSION, type SessionBundle } from './types.js';

export type BundleLoadStatus = 'hit' | 'miss' | 'corrupted' | 'expired' | 'stale';
export type BundleLoadReason =
  | 'bundle_not_found'
  | 'jsonl_source_missing'
  | 'parse_error'
  | 'schema_or_session_mismatch'
  | 'workspace_mismatch'
  | 'workspace_root_missing'
  | 'jsonl_newer';

export interface BundleLoad {
  status: BundleLoadStatus;
  reason?: BundleLoadReason;
  /** Present whenever the file parsed and matched the schema (also when stale, expired or missing its transcript). */
  bundle: SessionBundle | null;
  /** The mtime of the bundle file when read; patch uses it to detect a concurrent writer. */
  mtimeMs: number | null;
  detail?: string;
  /** A bundle written for another workspace root (reason workspace_mismatch): kept for a person to adopt, never used silently. */
  foreign?: SessionBundle;
  /** true when the file is a bundle this code does not understand (another schemaVersion): it must not be overwritten. */
  unknownSchema?: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The normalized known keys laid over the object they were read from, so the
 * keys this code does not know (another writer's, a newer GUI-Anything's) are
 * written back as they were. GUI-Anything keeps them the same way: it parses
 * the file into one object, fills in what is missing, mutates that object and
 * writes it back whole. `known` must hold every key this code knows at its level.
 */
export function overUnknownKeys<T extends object>(read: Record<string, unknown>, known: T): T {
  return { ...read, ...known };
}

/**
 * Fills defaults for fields an older or partial writer left out; null when the
 * shape is wrong. Every object level rebuilt here keeps the keys it does not
 * know: where we rewrite GUI-Anything's `wiki/`, we keep what we do not read.
 */
export function normalizeBundle(raw: unknown, sessionId: string): SessionBundle | null {
  if (!isObject(raw) || raw.schemaVersion !== BUNDLE_SCHEMA_VERSION || !isObject(raw.meta)) return null;
  const meta = raw.meta;
  if (meta.sessionId !== sessionId || typeof meta.workspaceRoot !== 'string') return null;
  // A bundle written before the observer redacted secrets is redacted as it is read: the board
  // shows it so, and the next persist writes it back so. Paths in `meta` are left alone, and so
  // are keys we do not know at the top level and in `meta` (not ours to rewrite).
  const session = isObject(raw.session) ? redactDeep(raw.session) : {};
  const flow = isObject(session.flow) ? session.flow : {};
  const curation = isObject(raw.curation) ? redactDeep(raw.curation) : {};
  return overUnknownKeys<SessionBundle>(raw, {
    schemaVersion: 1,
    meta: overUnknownKeys(meta, {
      sessionId,
      workspaceRoot: meta.workspaceRoot,
      jsonlPath: typeof meta.jsonlPath === 'string' ? meta.jsonlPath : '',
      jsonlMtime: typeof meta.jsonlMtime === 'number' ? meta.jsonlMtime : 0,
      updatedAt: typeof meta.updatedAt === 'number' ? meta.updatedAt : 0,
    }),
    session: overUnknownKeys(session, {
      intent: isObject(session.intent) ? (session.intent as unknown as SessionBundle['session']['intent']) : null,
      flow: overUnknownKeys(flow, {
        revision: typeof flow.revision === 'number' ? flow.revision : 0,
        fingerprint: typeof flow.fingerprint === 'string' ? flow.fingerprint : '',
        flowGraph: isObject(flow.flowGraph) ? (flow.flowGraph as unknown as SessionBundle['session']['flow']['flowGraph']) : null,
        flowchartHints: isObject(flow.flowchartHints) ? (flow.flowchartHints as SessionBundle['session']['flow']['flowchartHints']) : {},
        graphPatchLedger: Array.isArray(flow.graphPatchLedger) ? (flow.graphPatchLedger as SessionBundle['session']['flow']['graphPatchLedger']) : [],
      }),
    }),
    curation: overUnknownKeys(curation, {
      openIntentKey: typeof curation.openIntentKey === 'string' ? curation.openIntentKey : null,
      buckets: isObject(curation.buckets) ? (curation.buckets as SessionBundle['curation']['buckets']) : {},
      evidence: isObject(curation.evidence) ? (curation.evidence as SessionBundle['curation']['evidence']) : {},
    }),
    explorations: isObject(raw.explorations) ? normalizeExplorations(redactDeep(raw.explorations)) : {},
  });
}

/**
 * Bundles Maestro wrote before it matched GUI-Anything stored `meta.tokens` as
 * `{input, output, cacheRead, cacheWrite}`; they read as the total with the
 * object moved to `tokenBreakdown` (a zero total is left out, as GUI-Anything
 * leaves it out). A non-positive durationMs is dropped the same way.
 */
function normalizeExplorations(raw: Record<string, unknown>): SessionBundle['explorations'] {
  const out = raw as SessionBundle['explorations'];
  for (const e of Object.values(raw)) {
    if (!isObject(e) || !isObject(e.meta)) continue;
    const meta = e.meta;
    if (isObject(meta.tokens)) {
      const t = meta.tokens;
      const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
      const breakdown = { input: n(t.input), output: n(t.output), cacheRead: n(t.cacheRead), cacheWrite: n(t.cacheWrite) };
      const total = breakdown.input + breakdown.output + breakdown.cacheRead + breakdown.cacheWrite;
      delete meta.tokens;
      if (total > 0) Object.assign(meta, { tokens: total, tokenBreakdown: breakdown });
    } else if (meta.tokens !== undefined && !(typeof meta.tokens === 'number' && meta.tokens > 0)) delete meta.tokens;
    if (meta.durationMs !== undefined && !(typeof meta.durationMs === 'number' && meta.durationMs > 0)) delete meta.durationMs;
  }
  return out;
}

export interface LoadContext {
  workspaceRoot: string;
}

export function loadBundle(layout: WikiLayout, sessionId: string, ctx: LoadContext): BundleLoad {
  const path = bundlePath(layout, sessionId);
  let text: string;
  let mtimeMs: number;
  try {
    mtimeMs = statSync(path).mtimeMs;
    text = readRegularFile(path);
  } catch {
    return { status: 'miss', reason: 'bundle_not_found', bundle: null, mtimeMs: null };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // The place only: JSON.parse's message quotes the start of the file.
    return { status: 'corrupted', reason: 'parse_error', bundle: null, mtimeMs, detail: `${path}: not valid JSON (${jsonSyntaxWhere(text)})` };
  }
  const bundle = normalizeBundle(raw, sessionId);
  if (!bundle) {
    const version = isObject(raw) ? raw.schemaVersion : undefined;
    if (typeof version === 'number' && version !== BUNDLE_SCHEMA_VERSION) {
      return { status: 'corrupted', reason: 'schema_or_session_mismatch', bundle: null, mtimeMs, unknownSchema: true, detail: `${path}: schemaVersion ${version} is not one this observer reads (1); it is left as it is` };
    }
    return { status: 'corrupted', reason: 'schema_or_session_mismatch', bundle: null, mtimeMs, detail: `${path}: schemaVersion must be 1 and meta.sessionId "${sessionId}"` };
  }
  if (!existsSync(bundle.meta.workspaceRoot)) return { status: 'expired', reason: 'workspace_root_missing', bundle, mtimeMs };
  if (bundle.meta.workspaceRoot !== ctx.workspaceRoot) {
    return { status: 'corrupted', reason: 'workspace_mismatch', bundle: null, foreign: bundle, mtimeMs, detail: `${path} belongs to ${bundle.meta.workspaceRoot}, not ${ctx.workspaceRoot}` };
  }
  let jsonlMtime: number;
  try {
    jsonlMtime = statSync(bundle.meta.jsonlPath).mtimeMs;
  } catch {
    return { status: 'miss', reason: 'jsonl_source_missing', bundle, mtimeMs };
  }
  if (jsonlMtime > bundle.meta.jsonlMtime) return { status: 'stale', reason: 'jsonl_newer', bundle, mtimeMs };
  return { status: 'hit', bundle, mtimeMs };
}

export function writeBundle(layout: WikiLayout, bundle: SessionBundle): void {
  // The owner's only: it holds the session's prompts and answers.
  writeFileAtomic(bundlePath(layout, bundle.meta.sessionId), `${JSON.stringify(bundle, null, 2)}\n`, { root: layout.root, private: true });
}

/** What identifies one version of a file on disk: inode (each atomic write is a new one), size and mtime. */
export function fileStamp(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
}

/**
 * The live session's write: when the bundle on disk is still the version this
 * process wrote last (same stamp), nobody else wrote it, so it is written
 * without patchBundle's re-read and re-parse of the whole file. Returns the
 * new stamp, or null when the file is not ours as we left it (first write,
 * another writer, a deleted file) — then the caller patches.
 */
export function writeOwnedBundle(layout: WikiLayout, bundle: SessionBundle, lastStamp: string | null): string | null {
  const path = bundlePath(layout, bundle.meta.sessionId);
  if (lastStamp === null || fileStamp(path) !== lastStamp) return null;
  writeBundle(layout, bundle);
  return fileStamp(path);
}

/**
 * Keeps an unreadable bundle as `bundle.json.corrupt-<ms>` before it is rebuilt, so nothing is lost. The file is
 * renamed, never copied: a copy follows a symbolic link, and a wiki can come with
 * `sessions/<id>/bundle.json -> ~/.docker/config.json` (read as corrupted), whose target would have been copied
 * into the wiki. A rename moves the link itself. A session folder that leads out of the wiki is refused, as writes are.
 */
export function quarantineBundle(layout: WikiLayout, sessionId: string, now: number): string | null {
  const path = bundlePath(layout, sessionId);
  try {
    lstatSync(path);
  } catch {
    return null;
  }
  const target = `${path}.corrupt-${now}`;
  assertNoLinkOut(layout.root, target, `the wiki ${layout.root}`);
  renameSync(path, target);
  return target;
}

const PATCH_ATTEMPTS = 5;

/**
 * Read-modify-write with an mtime check. `mutate` receives the current bundle
 * (null when none is usable) and returns the bundle to write, or null to write
 * nothing. Throws after 5 attempts that each saw a concurrent write.
 */
export function patchBundle(layout: WikiLayout, sessionId: string, ctx: LoadContext, mutate: (current: SessionBundle | null, load: BundleLoad) => SessionBundle | null): SessionBundle | null {
  const path = bundlePath(layout, sessionId);
  for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt += 1) {
    const load = loadBundle(layout, sessionId, ctx);
    const next = mutate(load.bundle, load);
    if (!next) return null;
    let mtimeNow: number | null = null;
    try {
      mtimeNow = statSync(path).mtimeMs;
    } catch {
      mtimeNow = null;
    }
    if (mtimeNow !== load.mtimeMs) continue;
    writeBundle(layout, next);
    return next;
  }
  throw new MaestroError('INTERNAL', `${path} kept changing while being patched (${PATCH_ATTEMPTS} attempts); another observer is writing it.`);
}
