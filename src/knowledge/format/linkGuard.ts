/**
 * Knowledge writes stay inside their folder on disk, not only by their path.
 *
 * A path string under `.workflow/` proves nothing when a component of it is a
 * symbolic link: `specs -> /tmp/elsewhere` sends a spec write out of the
 * project, and a linked spec file would have the outside file's content read
 * in and the link replaced by a regular file. So before a write, the target's
 * real path (of its nearest existing ancestor, plus the rest as written) must
 * lie inside the real path of the folder it belongs to, and the target itself
 * must not be a link at all: search skips linked files (root.ts lists only
 * regular files), so writing through one, or replacing it, is never what the
 * user meant. A link to a folder inside the root stays allowed.
 */
import { readlinkSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { canonical, isLink, landing } from '../../lib/paths.js';

/** The real path of `path`: its nearest existing ancestor resolved, the rest appended as written (landing). `target` is the write it is for. */
function realPathOf(path: string, target: string): string {
  const landed = landing(path);
  if ('real' in landed) return landed.real;
  const link = landed.dangling;
  throw new MaestroError('BAD_INPUT', `Refusing to write ${target}: ${link} is a symbolic link to a missing place (${readlinkSync(link)}), so where the write would land is unknown. Nothing was written. Replace the link with a real folder or file, or remove it.`);
}

const within = (path: string, folder: string) => path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);

/** The first component of `target` below `base` that is a symbolic link (the one to name in a refusal). */
function firstLinkBelow(base: string, target: string): string | undefined {
  let p = base;
  for (const part of relative(base, target).split(sep)) {
    p = join(p, part);
    if (isLink(p)) return p;
  }
  return undefined;
}

/**
 * Refuses a write to a file that is itself a symbolic link. Its folder may be
 * one: a run folder is, by design (Maestro links it to the orchestrator's run
 * directory), so the session files in it are held to this check alone.
 */
export function assertNotLinked(target: string): void {
  const abs = resolve(target);
  if (!isLink(abs)) return;
  throw new MaestroError('BAD_INPUT', `Refusing to write ${abs}: it is a symbolic link (to ${readlinkSync(abs)}). Knowledge files are written in place, never through a link, and search skips linked files. Nothing was written. Replace the link with a copy of the file it points to, or remove it.`);
}

/**
 * Refuses a write to `target` (a path under `base`) that a symbolic link would
 * send outside the real path of `base`, or whose target is itself a link.
 * `what` names `base` for the reader (`the project's .workflow/`).
 */
export function assertNoLinkOut(base: string, target: string, what: string): void {
  const abs = resolve(target);
  assertNotLinked(abs);
  const folder = resolve(base);
  const realBase = realPathOf(folder, abs);
  const real = realPathOf(abs, abs);
  if (within(real, realBase)) return;
  const link = firstLinkBelow(folder, abs) ?? abs;
  const where = realBase === folder ? what : `${what} (${realBase} on disk)`;
  throw new MaestroError('BAD_INPUT', `Refusing to write ${abs}: ${link} is a symbolic link leading to ${real}, outside ${where}. Knowledge is written only inside it. Nothing was written. Replace the link with a real folder inside ${folder}, or remove it.`);
}

/**
 * Refuses to read `target` (a path under `base`) when a symbolic link sends it outside the real path of
 * `base`: a repository's content can plant `.workflow/sessions/s1 -> /home/me`, and what is read there would
 * be listed, quoted in an error, or written back beside it. A target that does not exist reads nothing and
 * passes (its caller says it is missing). `what` names `base` for the reader (`the project's .workflow/`).
 */
export function assertReadInside(base: string, target: string, what: string): void {
  const abs = resolve(target);
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    return;
  }
  const realBase = canonical(base);
  if (within(real, realBase)) return;
  const folder = resolve(base);
  const link = firstLinkBelow(folder, abs) ?? abs;
  throw new MaestroError('PATH_OUTSIDE_PROJECTS', `Refusing to read ${abs}: ${link} is a symbolic link leading to ${real}, outside ${what}. Knowledge is read and written only inside it. Nothing was read or written. Replace the link with a real folder or file inside ${folder}, or remove it.`, { details: { file: abs, link } });
}

/**
 * Where `path` (under `base`) really leads when that is inside none of the folders `allowed` (their real paths),
 * with the link below `base` that sends it there; null when it stays inside one of them. A link to a missing
 * place is judged by where it points (one link further at most), so nothing is created or written through it.
 */
export function linkedOutside(base: string, path: string, allowed: readonly string[]): { link: string; real: string } | null {
  const abs = resolve(path);
  const real = whereItLeads(abs);
  if (allowed.some((folder) => within(real, canonical(folder)))) return null;
  return { link: firstLinkBelow(resolve(base), abs) ?? abs, real };
}

function whereItLeads(abs: string): string {
  const landed = landing(abs);
  if ('real' in landed) return landed.real;
  let target: string;
  try {
    target = resolve(dirname(landed.dangling), readlinkSync(landed.dangling));
  } catch {
    return landed.dangling; // not a link after all (unreadable): judged by its own path
  }
  const further = landing(target);
  return 'real' in further ? further.real : target;
}
