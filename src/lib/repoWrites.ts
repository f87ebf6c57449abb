/**
 * What Maestro writes in a repository's checkout stays in the repository on disk, not only by its path. A checkout
 * holds whatever links its commits hold: with `.workflow -> /tmp/x` committed, a task's session.json, its runs/
 * folder and the corpus lock were made in /tmp/x (a trial, 2026-12); with `.gitignore -> ~/.bashrc`, `maestro init`
 * would have appended its lines to the person's shell startup file. mkdir -p, an atomic rename into a folder and an
 * append all follow every link on the way.
 *
 * One rule for every writer in a checkout, the one its readers keep (knowledge/format/root.ts `readableIn`,
 * executor/projectConfig.ts): a path is written only when where it lands is inside the real path of the
 * repository. A link to a folder or file inside the repository is followed as before; a link to a missing place is
 * judged by the place it names, which a write would create. Asked before the first write (of the folder, its lock,
 * its temporary file), so a refusal leaves nothing behind, and it names the link and where it leads.
 */
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { canonical, landing } from './paths.js';

export interface LinkOut {
  /** The first part of the path, below the repository, that is a symbolic link leading out of it. */
  link: string;
  /** Where the path lands through it. */
  leadsTo: string;
}

/** Links followed for a path whose links lead nowhere, as the kernel does before ELOOP. */
const MAX_HOPS = 40;

const within = (path: string, folder: string) => path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw err;
  }
}

/** Where a write to `path` lands: its real path, or through a link to a missing place, the place that link names. */
function whereItLands(path: string): string {
  let p = path;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    try {
      const landed = landing(p);
      if ('real' in landed) return landed.real;
      const link = landed.dangling;
      p = join(resolve(dirname(link), readlinkSync(link)), relative(link, p));
    } catch {
      return p; // a file in the way (ENOTDIR), or no link any more: judged by its own path
    }
  }
  return p;
}

/**
 * The first symbolic link below `repo` on the way to `path` (a path inside `repo` by its name) that sends it out of
 * the repository, with where the path then lands; null when the path stays inside on disk.
 */
export function linkOutOfRepo(repo: string, path: string): LinkOut | null {
  const base = resolve(repo);
  const abs = resolve(base, path);
  const rel = relative(base, abs);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`linkOutOfRepo: ${abs} is not a path inside ${base}`);
  const realRepo = canonical(base);
  let p = base;
  for (const part of rel.split(sep).filter(Boolean)) {
    p = join(p, part);
    const st = lstatOrNull(p);
    if (!st) break; // nothing below exists (or a file is in the way): a write creates it where its folder is, or fails
    if (st.isSymbolicLink() && !within(whereItLands(p), realRepo)) return { link: p, leadsTo: whereItLands(abs) };
  }
  return null;
}

export interface InRepoOptions {
  /** The file the check is for (below `path`), named in the refusal with where it lands (default: the path checked). */
  target?: string;
  /** 'read' for a reader that holds to the same rule. Default 'write'. */
  use?: 'read' | 'write';
}

/**
 * Refuses `path` (a folder Maestro writes in, or a file) when a symbolic link below `repo` sends it out of the
 * repository: PATH_OUTSIDE_PROJECTS naming the link and where it leads. Nothing has been written when it throws.
 */
export function assertInRepo(repo: string, path: string, opts: InRepoOptions = {}): void {
  const out = linkOutOfRepo(repo, path);
  if (!out) return;
  const target = resolve(opts.target ?? path);
  const leadsTo = opts.target === undefined ? out.leadsTo : whereItLands(target);
  const use = opts.use ?? 'write';
  const said = use === 'write' ? 'What Maestro writes in a checkout stays inside it. Nothing was written.' : 'What Maestro reads of a checkout stays inside it. Nothing was read or written.';
  throw new MaestroError(
    'PATH_OUTSIDE_PROJECTS',
    `Refusing to ${use} ${target}: ${out.link} is a symbolic link leading to ${leadsTo}, outside the repository ${resolve(repo)}. ${said} Replace the link with a real folder or file inside the repository, or remove it.`,
    { details: { file: target, link: out.link } },
  );
}
