/**
 * HealthMonitor: what is wrong with the machine under the daemon right now —
 * a full disk, or a home that turned read-only. A fault is noticed where it
 * happens (a log write, a SQLite statement, the probe) and cleared only by the
 * probe, which every `probeMs` creates and removes an empty file in each
 * watched folder (a read-only remount shows there, statfs cannot say) and,
 * when statfs says space is short or a condition is set, writes `probeBytes`
 * into it first. While any condition lasts the
 * orchestrator claims no new work (a new task would only fail on the disk);
 * when the probe's write succeeds again the condition clears and claiming
 * resumes by itself. `GET /api/health`, `maestro doctor` and the board's
 * banner show the conditions.
 *
 * A shared remote this daemon cannot reach (REMOTE_UNREACHABLE) is a condition
 * too, set and cleared by whoever tried it (ProjectRepos), not by the probe:
 * it holds only its project's claims, so it does not pause claiming here.
 *
 * A registered project whose own folder is missing (PROJECT_FOLDER_MISSING, daemon/projectFolder.ts) is one
 * too, said by the orchestrator's tick with the whole list each time; it pauses no claim (the merge
 * coordinator sends the project's approved work to the person).
 *
 * A database another daemon migrated past this build's schema (SCHEMA_NEWER, set by watchSchema) pauses
 * every claim until this daemon is upgraded: its code would write rows the newer schema means otherwise.
 */
import { statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { isMaestroError } from '../core/errors.js';
import { trackResource } from '../lib/resources.js';

export type ConditionCode = 'DISK_FULL' | 'HOME_READ_ONLY' | 'REMOTE_UNREACHABLE' | 'PROJECT_FOLDER_MISSING' | 'SCHEMA_NEWER';

export interface HealthCondition {
  code: ConditionCode;
  /** The file or folder whose write failed. */
  path: string;
  message: string;
  since: number;
  /** The project it holds back (REMOTE_UNREACHABLE, PROJECT_FOLDER_MISSING); absent for one that holds the whole daemon. */
  projectId?: string;
}

export interface HealthReport {
  /** False while any condition lasts. */
  ok: boolean;
  conditions: HealthCondition[];
}

export interface HealthOptions {
  /** Folders whose disks matter: the home, and the database's folder when it lives elsewhere. */
  dirs: string[];
  probeMs: number;
  /** The probe's write; the free space below which statfs calls for one (256 KiB). */
  probeBytes?: number;
  now: () => number;
  onChange: (report: HealthReport) => void;
}

const KIB = 1024;

/** Which condition an error is, if any: node's errno codes, SQLite's (via the catalogue), ours. */
export function conditionOf(err: unknown): ConditionCode | null {
  if (isMaestroError(err, 'DISK_FULL')) return 'DISK_FULL';
  if (isMaestroError(err, 'HOME_READ_ONLY')) return 'HOME_READ_ONLY';
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') return 'DISK_FULL';
  if (code === 'EROFS') return 'HOME_READ_ONLY';
  return null;
}

function pathOf(err: unknown): string | undefined {
  const e = err as { path?: unknown; details?: { path?: unknown } } | null;
  if (typeof e?.path === 'string') return e.path;
  if (typeof e?.details?.path === 'string') return e.details.path;
  return undefined;
}

function messageFor(code: ConditionCode, path: string): string {
  return code === 'DISK_FULL'
    ? `No space left on the disk holding ${path}: Maestro claims no new tasks until space is freed, then resumes by itself. Free some space on that disk.`
    : `${path} is read-only: Maestro claims no new tasks until it is writable again. Remount it read-write.`;
}

export class HealthMonitor {
  /** Keyed by code and watched folder: one condition per disk, whatever file failed on it. */
  private readonly current = new Map<string, HealthCondition & { dir: string }>();
  /** Shared remotes this daemon cannot reach, by project id. */
  private readonly remotes = new Map<string, HealthCondition>();
  /** Projects whose own folder is missing, by project id. */
  private folders = new Map<string, HealthCondition>();
  /** The database's schema is newer than this build's (another daemon was upgraded). */
  private schemaNewer: HealthCondition | null = null;
  private readonly dirs: string[];
  private readonly probeBytes: number;
  private timer: NodeJS.Timeout | null = null;
  private untrack: (() => void) | null = null;

  constructor(private readonly opts: HealthOptions) {
    this.dirs = [...new Set(opts.dirs.map((d) => resolve(d)))];
    this.probeBytes = opts.probeBytes ?? 256 * KIB;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.probe(), this.opts.probeMs);
    this.timer.unref();
    this.untrack = trackResource('timer', 'health probe', () => this.stop());
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.untrack?.();
    this.untrack = null;
  }

  report(): HealthReport {
    const conditions = [...[...this.current.values()].map(({ dir: _dir, ...c }) => c), ...this.remotes.values(), ...this.folders.values(), ...(this.schemaNewer ? [this.schemaNewer] : [])];
    return { ok: conditions.length === 0, conditions };
  }

  /** No new work while the disk is full, the home read-only or the database's schema newer than this build's. */
  get claimPaused(): boolean {
    return this.current.size > 0 || this.schemaNewer !== null;
  }

  /** Says the database (`path`, as its name is shown) has a schema newer than this build's, or with null that it does not. */
  schema(newer: { path: string; message: string } | null): void {
    if ((newer === null) === (this.schemaNewer === null)) return;
    this.schemaNewer = newer && { code: 'SCHEMA_NEWER', ...newer, since: this.opts.now() };
    this.opts.onChange(this.report());
  }

  /**
   * Says that project `projectId`'s shared remote cannot be reached (`path`: the remote, `message`: why), or,
   * with null, that it answers again. Only a change is reported.
   */
  remote(projectId: string, unreachable: { path: string; message: string } | null): void {
    if (unreachable === null ? !this.remotes.delete(projectId) : this.remotes.has(projectId)) return;
    if (unreachable) this.remotes.set(projectId, { code: 'REMOTE_UNREACHABLE', ...unreachable, since: this.opts.now(), projectId });
    this.opts.onChange(this.report());
  }

  /** Says which projects' folders are missing now (all of them: one no longer listed is there again). Only a change is reported. */
  projectFolders(missing: readonly { projectId: string; path: string; message: string }[]): void {
    const same = missing.length === this.folders.size && missing.every((m) => this.folders.get(m.projectId)?.message === m.message);
    if (same) return;
    this.folders = new Map(missing.map(({ projectId, path, message }) => [projectId, this.folders.get(projectId)?.message === message ? this.folders.get(projectId)! : { code: 'PROJECT_FOLDER_MISSING', path, message, since: this.opts.now(), projectId }]));
    this.opts.onChange(this.report());
  }

  /** Records the condition `err` is, if it is one; returns whether it was. */
  notice(err: unknown, fallbackPath?: string): boolean {
    const code = conditionOf(err);
    if (!code) return false;
    const path = pathOf(err) ?? fallbackPath ?? this.dirs[0]!;
    const dir = this.watchedDirOf(path);
    const key = `${code}:${dir}`;
    if (this.current.has(key)) return true;
    this.current.set(key, { code, path, message: messageFor(code, path), since: this.opts.now(), dir });
    this.opts.onChange(this.report());
    return true;
  }

  /** Checks every watched folder now (also run by the timer). */
  probe(): void {
    let changed = false;
    for (const dir of this.dirs) changed = this.probeDir(dir) || changed;
    if (changed) this.opts.onChange(this.report());
  }

  /** Returns whether a condition cleared. */
  private probeDir(dir: string): boolean {
    const mine = [...this.current.entries()].filter(([, c]) => c.dir === dir);
    const fill = mine.length > 0 || this.looksShort(dir);
    const file = join(dir, `.maestro-probe-${process.pid}`);
    try {
      writeFileSync(file, fill ? Buffer.alloc(this.probeBytes) : '');
    } catch (err) {
      this.notice(err, dir);
      return false;
    } finally {
      try {
        unlinkSync(file);
      } catch {
        // never written, or a read-only folder
      }
    }
    for (const [key] of mine) this.current.delete(key);
    return mine.length > 0;
  }

  private looksShort(dir: string): boolean {
    try {
      const s = statfsSync(dir);
      return s.bavail * s.bsize < this.probeBytes;
    } catch {
      return true;
    }
  }

  private watchedDirOf(path: string): string {
    const abs = resolve(path);
    const within = this.dirs.filter((d) => abs === d || abs.startsWith(d.endsWith(sep) ? d : d + sep));
    return within.sort((a, b) => b.length - a.length)[0] ?? this.dirs[0]!;
  }
}
