/**
 * Whether this daemon can reach each project's shared remote. A clone, fetch
 * or ls-remote that fails because the remote does not answer (no such
 * repository, a host that refuses or cannot be resolved, a dropped
 * connection) is REMOTE_UNREACHABLE and remembered: until the retry is due
 * the next call fails at once with the same error, with no git process and no
 * new log line each tick, and the project's tasks are not claimed. Any other
 * failure (a full disk, a damaged clone) stays the git error it was: it is
 * not the network's, and the task it stops needs a person as before.
 */
import { MaestroError } from '../core/errors.js';
import type { Project } from '../core/types.js';

/** How long after a failed clone or fetch of a shared remote the next one is tried. */
export const REMOTE_RETRY_MS = 10_000;

/** What git says when the other side does not answer, over a path, ssh or http(s). */
const NO_ANSWER =
  /Could not read from remote repository|does not appear to be a git repository|repository '[^']*' (does not exist|not found)|Could not resolve host|Connection (refused|timed out|reset)|Failed to connect|unable to access|Network is unreachable|No route to host|remote end hung up|early EOF|Operation timed out|no answer from the remote/i;

/** A remote URL's password (https://user:pw@host/…), wherever it appears in a text, as ***. */
function hidePasswords(text: string): string {
  return text.replace(/(\/\/[^/:@\s]+):[^@\s/]+@/g, '$1:***@');
}

export interface RemoteReachOptions {
  retryMs?: number;
  now?: () => number;
  /** A remote stopped answering (with the error), or answers again (null). Said once per change. */
  onReachability?: (project: Project, err: MaestroError | null) => void;
}

export class RemoteReach {
  private readonly failures = new Map<string, { at: number; error: MaestroError; project: Project }>();
  readonly retryMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: RemoteReachOptions = {}) {
    this.retryMs = opts.retryMs ?? REMOTE_RETRY_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Whether the project's remote is known not to answer (its retry due or not). */
  failed(projectId: string): boolean {
    return this.failures.has(projectId);
  }

  /** False while the project's remote is known not to answer and its next try is not due. */
  mayTry(projectId: string): boolean {
    const failed = this.failures.get(projectId);
    return !failed || this.now() - failed.at >= this.retryMs;
  }

  /** Runs `fn`, which talks to the project's remote; see the file's comment for what a failure becomes. */
  async reach<T>(project: Project, remote: string, fn: () => Promise<T>): Promise<T> {
    const failed = this.failures.get(project.id);
    if (failed && !this.mayTry(project.id)) throw failed.error;
    try {
      const out = await fn();
      this.forget(project.id);
      return out;
    } catch (err) {
      const why = (err as Error).message ?? String(err);
      if (!NO_ANSWER.test(why)) throw err;
      const shown = hidePasswords(remote);
      const error = new MaestroError('REMOTE_UNREACHABLE', `The shared remote ${shown} of project ${project.name} cannot be reached: ${hidePasswords(why)}. No task of the project is claimed until it answers; it is tried again every ${Math.round(this.retryMs / 1000)} s.`, { cause: err, details: { path: shown, projectId: project.id } });
      this.failures.set(project.id, { at: this.now(), error, project });
      if (!failed) this.opts.onReachability?.(project, error);
      throw error;
    }
  }

  /** Forgets the failures of projects no longer registered on a shared remote (deleted, or their remote dropped). */
  keepOnly(projectIds: ReadonlySet<string>): void {
    for (const id of [...this.failures.keys()]) if (!projectIds.has(id)) this.forget(id);
  }

  private forget(projectId: string): void {
    const failed = this.failures.get(projectId);
    if (!failed) return;
    this.failures.delete(projectId);
    this.opts.onReachability?.(failed.project, null);
  }
}
