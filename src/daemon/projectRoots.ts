/**
 * Path parameters stay inside registered projects: a `root=` the knowledge
 * routes receive must name a registered project's folder (or its `.workflow`),
 * compared after resolving symlinks, so no request reads, or creates an index
 * in, a folder the user never registered.
 */
import { basename, dirname, resolve } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { canonical, holds } from '../lib/paths.js';
import type { Store } from '../store/store.js';

/** The registered project folder `root` names; PATH_OUTSIDE_PROJECTS for anything else. */
export async function confineToProjects(store: Store, root: string | undefined): Promise<string> {
  if (root === undefined || root === '') {
    throw new MaestroError('BAD_INPUT', 'Name the project: pass projectId, or root (a registered project\'s folder).');
  }
  const given = canonical(basename(resolve(root)) === '.workflow' ? dirname(resolve(root)) : root);
  for (const project of await store.projects.list()) {
    if (canonical(project.repoPath) === given) return project.repoPath;
  }
  throw new MaestroError('PATH_OUTSIDE_PROJECTS', `${root} is not a registered project's folder; this daemon reads and writes only inside registered projects. Register it with "maestro project add ${resolve(root)}", or pass projectId.`, { details: { root } });
}

/** How often the registered folders are read again, at most (registeredFolders). */
const REREAD_MS = 1000;

/**
 * A check, synchronous, that a folder is a registered project's (or inside one), for the knowledge code, which
 * cannot wait on the store: the folders are read once now, then again in the background when asked and at least
 * REREAD_MS old, so a project registered a moment ago counts from the next call on.
 */
export async function registeredFolders(store: Store): Promise<(dir: string) => boolean> {
  let folders: string[] = [];
  let readAt = 0;
  let reading = false;
  const read = async () => {
    folders = (await store.projects.list()).map((p) => canonical(p.repoPath));
    readAt = Date.now();
  };
  await read();
  return (dir) => {
    if (!reading && Date.now() - readAt >= REREAD_MS) {
      reading = true;
      void read().catch(() => undefined).finally(() => (reading = false));
    }
    return folders.some((f) => holds(f, dir));
  };
}
