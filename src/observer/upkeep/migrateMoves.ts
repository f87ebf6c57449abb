/**
 * The moves of `maestro wiki migrate`, which never overwrite anything.
 *
 * Planning (`MovePlan`): every move and trash is planned before anything moves, and each one
 * claims its destination. A destination is taken when something is there on disk, when an
 * earlier item of the same plan goes there, when an earlier item's destination lies inside it
 * or holds it (a folder moved to `a/` and a file to `a/x`), or when a folder above it is a file.
 * A taken destination makes the item a conflict: reported, left in place, as an existing target
 * always was. Two sources going to one place used to be two moves, and the second replaced the
 * first (a person's entry lost, `done` printed).
 *
 * Moving (`moveNoClobber`): a file is hard-linked to its destination and then unlinked at its
 * source (link() fails with EEXIST, so nothing made since the plan is replaced); a folder, or a
 * file on a file system without hard links, is renamed after checking that nothing is there.
 * A failure names both paths and says how far the migration got.
 */
import { linkSync, lstatSync, mkdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { MaestroError } from '../../core/errors.js';

/** One thing `wiki migrate` does (or, for a conflict, leaves where it is). */
export interface MigrationPlanItem {
  action: 'move' | 'trash' | 'merge' | 'conflict';
  from: string;
  to?: string;
  note?: string;
}

/** Something at `path`, a dangling symbolic link included (existsSync follows links; rename would replace one). */
export function onDisk(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A folder, or a symbolic link to one (a wiki kept elsewhere and linked in is still a folder to move into). */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let d = dirname(path); d !== dirname(d); d = dirname(d)) out.push(d);
  return out;
}

export class MovePlan {
  /** destination → the source planned to go there */
  private readonly claimed = new Map<string, string>();
  /** every folder above a claimed destination → the source whose destination it holds */
  private readonly holds = new Map<string, string>();
  private readonly movedFrom = new Set<string>();

  constructor(readonly items: MigrationPlanItem[]) {}

  /** Why `to` cannot take `from`, or null when it is free. */
  takenBy(from: string, to: string): string | null {
    if (this.movedFrom.has(from) || ancestors(from).some((d) => this.movedFrom.has(d))) return 'already moved by another item of this migration';
    if (onDisk(to)) return 'destination exists; left in place';
    const same = this.claimed.get(to) ?? this.holds.get(to);
    if (same) return `${same} goes ${this.claimed.has(to) ? 'there' : 'inside it'} in this migration; left in place`;
    for (const d of ancestors(to)) {
      const holder = this.claimed.get(d);
      if (holder) return `${holder} goes to ${d} in this migration; left in place`;
      if (onDisk(d) && !isFolder(d)) return `${d} is not a folder; left in place`;
    }
    return null;
  }

  claim(from: string, to: string): void {
    this.claimed.set(to, from);
    for (const d of ancestors(to)) if (!this.holds.has(d)) this.holds.set(d, from);
    this.movedFrom.add(from);
  }

  /** Plans one move or trash: claimed, or a conflict that says why. */
  add(action: 'move' | 'trash', from: string, to: string): void {
    const taken = this.takenBy(from, to);
    if (taken) {
      this.items.push({ action: 'conflict', from, to, note: taken });
      return;
    }
    this.claim(from, to);
    this.items.push({ action, from, to });
  }
}

/** File systems without hard links (FAT, some network mounts) answer link() with one of these. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

function existsError(to: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${to} exists`), { code: 'EEXIST' });
}

/** Moves a file or folder to `to`, never over anything there. */
export function moveNoClobber(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  if (!lstatSync(from).isDirectory()) {
    try {
      linkSync(from, to);
    } catch (err) {
      if (!NO_HARD_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      return renameUnlessThere(from, to);
    }
    try {
      unlinkSync(from);
    } catch (err) {
      // The source cannot go (its folder read-only): the new name goes again, so the file is where it was.
      unlinkSync(to);
      throw err;
    }
    return;
  }
  renameUnlessThere(from, to);
}

/** For a folder, and where there are no hard links: rename() would replace a file or an empty folder, so look first. */
function renameUnlessThere(from: string, to: string): void {
  if (onDisk(to)) throw existsError(to);
  renameSync(from, to);
}

const WHY: Record<string, string> = {
  EEXIST: 'something is there now that was not when the migration was planned; nothing was overwritten',
  ENOENT: 'the source is gone (moved or deleted while the migration ran)',
  EXDEV: 'the two are on different file systems; move the folder by hand, or pass a --from on the same disk',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the disk',
  ENOTDIR: 'a folder on the way is a file',
};

/** A move that failed, in words: what, where, and how much of the migration was done. */
export function moveError(err: unknown, from: string, to: string, progress: { done: number; total: number }): MaestroError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const why = WHY[code] ?? `the file system refused it (${code || (err as Error).message})`;
  const done = progress.done ? `${progress.done} of ${progress.total} move(s) were done before this and stay done` : `nothing was moved (0 of ${progress.total})`;
  return new MaestroError(code === 'EEXIST' ? 'ALREADY_EXISTS' : 'INTERNAL', `Could not move ${from} to ${to}: ${why}${WHY[code] ? ` (${code})` : ''}. ${done}; \`maestro wiki migrate --dry-run\` shows what is left.`, {
    cause: err,
    details: { from, to },
  });
}
