/**
 * Where a daemon works on a project. A project on one host uses its own
 * repository (`repoPath`). A project with `config.remote` (a bare repository
 * every host reaches) is worked in this daemon's own clone of it, under
 * $MAESTRO_HOME/clones/<projectId>: main comes from the remote before each
 * run, task branches go back to it after each run (so another daemon can take
 * a task over from where it stopped), and merges are pushed to the remote's
 * main under the database's merge lease.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { coerceError, isMaestroError, MaestroError } from '../core/errors.js';
import { RemoteReach, type RemoteReachOptions } from './remoteReach.js';
import { steeringMove } from './remoteSteering.js';
import { baseBranchOf } from '../core/baseBranch.js';
import type { Project } from '../core/types.js';
import { git, type GitOptions, type GitResult } from '../git/git.js';
import { isAncestor, tipsOf } from '../git/merge.js';
import { listWorktrees, setAsideLeftovers } from '../git/worktree.js';
import { setAsideEmbeddedRepositories } from '../git/embedded.js';
import { fetchForSync, fetchFromRemote, noBaseBranch } from './remoteFetch.js';
import { maintainAtPace } from '../git/maintenance.js';
import { oneAtATime } from '../lib/oneAtATime.js';

export function remoteOf(project: Project): string | null {
  return typeof project.config.remote === 'string' && project.config.remote ? project.config.remote : null;
}

/** Where this daemon works on a project: its clone under `home` for a project on a shared remote, else the project's own repository. */
export function workRepoOf(home: string, project: Project): string {
  return remoteOf(project) ? join(home, 'clones', project.id) : project.repoPath;
}

export { baseBranchOf };

/**
 * How long a clone, fetch or push may go without a word from git before it is stopped as a remote that
 * does not answer (a host that accepts the connection and says nothing, a connection dropped without a
 * reset). They run with `--progress`, which git writes at least every second while data moves, so a big
 * transfer is never taken for one that hangs.
 */
export const GIT_STALL_MS = 120_000;

/** A sync for runs waiting its turn at the clone: a prepare asked meanwhile joins it. */
interface QueuedSync {
  started: boolean;
  done: Promise<string>;
}

export interface ProjectReposOptions extends RemoteReachOptions {
  /** See GIT_STALL_MS (tests make it short). */
  stallMs?: number;
  /** A sync brought a main whose steering files (core/steering.ts) differ from what this clone had: told after the checkout. */
  onSteeringMoved?: (project: Project, clone: string, move: { from: string; to: string }) => Promise<void>;
  /** A clone's maintenance failed (the work goes on). */
  onError?: (err: Error) => void;
}

export class ProjectRepos {
  /** Clones and fetches `unready` started in the background, by project. */
  private readonly trying = new Map<string, Promise<unknown>>();
  /** One git operation at a time per clone: fetches, resets and pushes must not interleave. */
  private readonly serial = oneAtATime();
  /** Which remotes answer (a failure is remembered until its retry is due). */
  readonly reach: RemoteReach;
  private readonly stallMs: number;
  /** Syncs for runs (prepare) started so far, and by project the one waiting its turn and the one under way. */
  private syncsStarted = 0;
  private readonly runSyncs = new Map<string, { waiting?: QueuedSync; current?: { number: number; done: Promise<string> } }>();

  constructor(
    private readonly home: string,
    private readonly opts: ProjectReposOptions = {},
  ) {
    this.reach = new RemoteReach(opts);
    this.stallMs = opts.stallMs ?? GIT_STALL_MS;
  }

  /** Runs git on a command that talks to the remote, stopped when the remote stops answering (GIT_STALL_MS). */
  remoteGit(cwd: string, args: string[], options: Omit<GitOptions, 'stallMs'> = {}): Promise<GitResult> {
    return git(cwd, args, { ...options, stallMs: this.stallMs });
  }

  /**
   * Fetches `branch` of `remote` into refs/remotes/<remote>/<branch> as every fetch of a clone is made (worktrees
   * being added waited out, no auto-maintenance); false when git gives up with 128 (no such branch there).
   */
  async fetchRemoteBranch(clone: string, remote: string, branch: string): Promise<boolean> {
    try {
      await fetchFromRemote(clone, [remote, `+refs/heads/${branch}:refs/remotes/${remote}/${branch}`], this.stallMs);
      return true;
    } catch (err) {
      if (isMaestroError(err) && err.details?.code === 128) return false;
      throw err;
    }
  }

  /** Runs `fn` with this project's clone to itself (a merge: sync, merge, push, with nothing in between). */
  exclusive<T>(projectId: string, fn: () => Promise<T>): Promise<T> {
    return this.serial(projectId, fn);
  }

  /** A mark for `prepare`: syncs started after it are those started from now on. */
  mark(): number {
    return this.syncsStarted;
  }

  /**
   * The repository to work in: the project's own, or this host's clone brought up to date by a sync started after
   * `after` (a mark; by default, one started after this call). Runs decided together share one: a sync started
   * once both were claimed brings everything either needs (every push before the claim, the merges of their
   * dependencies among them), and a second one after it brought nothing and held the second run back
   * (bench:multihost: a daemon's second run of a tick started a second after its first, behind two fetches).
   */
  async prepare(project: Project, after = this.syncsStarted): Promise<string> {
    if (!remoteOf(project)) return project.repoPath;
    const syncs = this.runSyncs.get(project.id) ?? {};
    this.runSyncs.set(project.id, syncs);
    if (syncs.current && syncs.current.number > after) return syncs.current.done;
    if (syncs.waiting && !syncs.waiting.started) return syncs.waiting.done;
    const waiting: QueuedSync = { started: false, done: Promise.resolve('') };
    waiting.done = this.serial(project.id, async () => {
      waiting.started = true;
      const current = { number: ++this.syncsStarted, done: this.sync(project) };
      syncs.current = current;
      try {
        return await current.done;
      } finally {
        if (syncs.current === current) syncs.current = undefined;
      }
    });
    syncs.waiting = waiting;
    return waiting.done;
  }

  /**
   * The projects on a shared remote whose tasks may not be claimed now: no clone here yet (their hooks and
   * settings are main's, read from the clone), or a remote that stopped answering. Each is tried again in the
   * background (a clone, or a fetch) once its retry is due, so a tick never waits for a remote (a big
   * repository's clone, an unreachable host's timeout); `onReady` hears when one can be claimed from.
   */
  unready(projects: readonly Project[], onReady: () => void, onError: (err: Error) => void): Set<string> {
    const unready = new Set<string>();
    const onRemotes = projects.filter((p) => remoteOf(p));
    this.reach.keepOnly(new Set(onRemotes.map((p) => p.id)));
    for (const project of onRemotes) {
      if (existsSync(join(workRepoOf(this.home, project), '.git')) && !this.reach.failed(project.id)) continue;
      unready.add(project.id);
      if (this.trying.has(project.id) || !this.reach.mayTry(project.id)) continue;
      const attempt = this.prepare(project).then(onReady, (err) => {
        // An unreachable remote was said through onReachability; anything else (a failed checkout) is the log's.
        if (!isMaestroError(err, 'REMOTE_UNREACHABLE')) onError(coerceError(err));
      });
      this.trying.set(project.id, attempt.finally(() => this.trying.delete(project.id)));
    }
    return unready;
  }

  /** Resolves when no clone or fetch started by `unready` is under way. */
  async idle(): Promise<void> {
    while (this.trying.size) await Promise.all(this.trying.values());
  }

  /** A first clone, made beside its place and moved there whole: a clone cut short (a kill) is never taken for one. */
  private async cloneFresh(remote: string, clone: string): Promise<void> {
    const partial = `${clone}.partial`;
    mkdirSync(join(this.home, 'clones'), { recursive: true });
    rmSync(partial, { recursive: true, force: true });
    await this.remoteGit(join(this.home, 'clones'), ['clone', '-q', '--progress', '--end-of-options', remote, partial]);
    rmSync(clone, { recursive: true, force: true }); // a folder without .git: nothing of git's
    renameSync(partial, clone);
  }

  /** Clone if needed, fetch, and reset main to the remote's. Call inside `exclusive`. */
  async sync(project: Project): Promise<string> {
    const remote = remoteOf(project);
    if (!remote) return project.repoPath;
    const clone = workRepoOf(this.home, project);
    const base = baseBranchOf(project);
    // A remote without the base branch answered: it is reached (and no longer counted unreachable), then refused.
    const fetched = await this.reach.reach(project, remote, async () => {
      if (!existsSync(join(clone, '.git'))) await this.cloneFresh(remote, clone);
      return fetchForSync(clone, base, this.stallMs);
    });
    if (!fetched) throw await noBaseBranch(clone, remote, base);
    await maintainAtPace(clone).catch((err: unknown) => this.opts.onError?.(coerceError(err)));
    // Hooks and checks run from this clone's main: a change to them that no Maestro merge made is told (remoteSteering.ts).
    const move = this.opts.onSteeringMoved ? await steeringMove(clone, base) : null;
    // Main as the remote has it, checked out and clean, in one git process (a checkout and a reset --hard were two).
    await git(clone, ['checkout', '-q', '-f', '--no-track', '-B', base, `origin/${base}`]);
    if (move) await this.opts.onSteeringMoved!(project, clone, move);
    return clone;
  }

  /** Fetches the remote into this host's clone, when it has one: a diff of work another daemon pushed or merged. */
  async refresh(project: Project): Promise<void> {
    const remote = remoteOf(project);
    const clone = workRepoOf(this.home, project);
    if (!remote || !existsSync(join(clone, '.git'))) return;
    await this.serial(project.id, () => this.reach.reach(project, remote, () => fetchForSync(clone, baseBranchOf(project), this.stallMs)));
  }

  /**
   * The repository a run of `branch` works in: the project's own, or this host's clone with main and the task
   * branch brought from the remote (prepare, then fetchBranch). The remote's copy of a branch that `published`
   * says no run ever pushed (a task's first execute or plan) is not looked for. A review of `commit` starts only
   * once the remote has that commit, since any daemon may merge what it approves: the push before the execute
   * run's outcome was committed may have failed (the remote was away), and is tried again here.
   * When this clone's branch is that commit and it last saw the remote take it, the review needs nothing from
   * the remote (fetches were a third of a task's git CPU on a shared remote). `counted`: the commit the task's
   * last outcome named (fetchBranch). `after`: prepare's mark.
   */
  async prepareRun(project: Project, branch: string, o: { commit: string | null; counted: string | null; published: boolean; holds: () => Promise<boolean>; after?: number }): Promise<string> {
    if (!remoteOf(project)) return project.repoPath;
    const clone = workRepoOf(this.home, project);
    if (o.commit && existsSync(join(clone, '.git'))) {
      const { local, published } = await branchTips(clone, branch);
      if (local === o.commit && published === o.commit) return clone;
    }
    await this.prepare(project, o.after);
    if (o.published) await this.fetchBranch(project, clone, branch, o.counted);
    // A push the remote refuses is said by the push after the run (git.push_failed); the review goes on.
    if (o.commit) await this.pushBranch(project, clone, branch, o.holds).catch(() => undefined);
    return clone;
  }

  /**
   * Brings the task branch as the remote has it. A clone without it (a task taken over) fetches it, and the
   * remote's main in the same fetch: the branch may have taken in main commits newer than this clone's
   * `origin/main` (fetched a moment earlier), and a run diffs against `origin/main`, so an older one would
   * count those commits as the task's own change. A clone with an older one (another daemon ran the task since
   * and pushed on top of it; `prepare` has just fetched) moves it forward, in the worktree that has it checked
   * out: a run on the old one reviewed a commit the branch had left. A branch ahead of the remote's, or apart
   * from it, stays: its push after the last run was refused, and the push after this run publishes it. Unless it
   * lacks the commit the task's last outcome named (`counted`) and the remote's has it: then this clone's is
   * the work of a run whose outcome was discarded (its daemon lost the task meanwhile), and the remote's replaces
   * it (git's reflog keeps it).
   */
  async fetchBranch(project: Project, clone: string, branch: string, counted: string | null = null): Promise<void> {
    const remote = remoteOf(project);
    if (!remote) return;
    const base = baseBranchOf(project);
    await this.serial(project.id, async () => {
      const { local, published } = await branchTips(clone, branch);
      if (local) {
        if (!published || published === local) return;
        if (await isAncestor(clone, local, published)) await moveBranch(clone, branch, local, published);
        else if (counted && !(await isAncestor(clone, counted, local)) && (await isAncestor(clone, counted, published))) await moveBranch(clone, branch, local, published, { discard: true });
        return;
      }
      await this.reach.reach(project, remote, async () => {
        const heads = await this.remoteGit(clone, ['ls-remote', '--heads', 'origin', branch]);
        if (heads.stdout.trim()) await fetchFromRemote(clone, ['origin', `+refs/heads/${branch}:refs/heads/${branch}`, `+refs/heads/${base}:refs/remotes/origin/${base}`], this.stallMs);
      });
    });
  }

  /**
   * Publishes a task branch so that whichever daemon goes on with the task finds it. Not when the remote has
   * that commit already, as this clone last saw it (a push or fetch sets the clone's `origin/<branch>`): a
   * review run changes no branch, and its push cost six git processes for nothing. Never back: a branch the
   * remote has moved past (another daemon ran the task since) is this clone's old copy, and a forced push of
   * it took the newer work off the remote after its review.
   * A remote branch that is not behind ours (it holds commits this clone lacks) is put over only while `holds`
   * says the task is still this daemon's: a daemon cut off from the database ran on after its lease passed to
   * another, and its forced push replaced the commit the new holder's reviewers had approved (CI, multihost).
   */
  async pushBranch(project: Project, clone: string, branch: string, holds: () => Promise<boolean>): Promise<void> {
    if (!remoteOf(project)) return;
    // Published as it is (a review run's branch): said without waiting for the clone, which a merge train may hold
    // for a quarter of a second (bench:multihost: the run's end, and its slot, waited for it). The refs only move
    // forward meanwhile, and the check below would then skip the push too.
    const seen = await branchTips(clone, branch);
    if (seen.local && seen.local === seen.published) return;
    await this.serial(project.id, async () => {
      const { local, published } = await branchTips(clone, branch);
      if (!local || (published && (local === published || (await isAncestor(clone, local, published))))) return;
      await this.push(clone, branch, holds);
    });
  }

  /**
   * pushBranch without waiting its turn: call inside `exclusive`. For a branch the remote lacks, so it never
   * replaces one (a push that came meanwhile is refused). Returns false when the clone has no such branch.
   */
  async pushBranchNow(project: Project, clone: string, branch: string): Promise<boolean> {
    if (!remoteOf(project)) return false;
    const local = await git(clone, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { okCodes: [1] });
    if (local.code !== 0) return false;
    await this.push(clone, branch, null);
    return true;
  }

  /**
   * Pushes the clone's `branch` to the remote's: a fast-forward, or (the remote's is apart from ours) over it
   * when `holds` says so, and only over the commit the remote was seen to have a moment before.
   */
  private async push(clone: string, branch: string, holds: (() => Promise<boolean>) | null): Promise<void> {
    const ref = `refs/heads/${branch}`;
    const failed = (why: string, cause?: unknown) => new MaestroError('GIT_FAILED', `The push of ${branch} to the remote failed: ${why}`, { cause });
    const pushed = await this.remoteGit(clone, ['push', '-q', '--progress', '--porcelain', 'origin', `${ref}:${ref}`], { okCodes: [1] }).catch((err: unknown) => {
      throw failed((err as Error).message, err);
    });
    if (pushed.code === 0) return;
    const apart = /^!\t.*\t\[rejected\]/m.test(pushed.stdout);
    if (!apart) throw failed(pushed.stderr.trim() || pushed.stdout.trim());
    if (!holds || !(await holds())) {
      throw failed(`the remote's ${branch} holds commits this clone does not (another daemon has run the task since), and this daemon no longer holds the task: its copy does not replace them`);
    }
    const seen = (await this.remoteGit(clone, ['ls-remote', '--heads', 'origin', ref])).stdout.split('\t')[0]!.trim();
    try {
      await this.remoteGit(clone, ['push', '-q', '--progress', `--force-with-lease=${ref}:${seen}`, 'origin', `${ref}:${ref}`]);
    } catch (err) {
      throw failed((err as Error).message, err);
    }
  }

  /** Deletes merged task branches from the remote, in one push. Call inside `exclusive`. */
  async deleteRemoteBranches(project: Project, clone: string, branches: string[]): Promise<void> {
    if (!remoteOf(project) || !branches.length) return;
    await this.remoteGit(clone, ['push', '-q', '--progress', 'origin', ...branches.map((b) => `:refs/heads/${b}`)]);
  }

  /**
   * Pushes the clone's main to the remote (never forced: a concurrent push fails, and the merge is retried), and
   * deletes `branches` there in the same atomic push: they go with main or not at all, so a merged branch is never
   * gone before its merge is on the remote. Returns the branches that went. When that push fails (a remote that
   * cannot take an atomic push, or a push of main that would fail anyway), main is pushed alone. Call inside
   * `exclusive`.
   */
  async pushMain(project: Project, clone: string, branches: readonly string[] = []): Promise<readonly string[]> {
    if (!remoteOf(project)) return [];
    const base = baseBranchOf(project);
    const main = `refs/heads/${base}`;
    const push = async (refs: readonly string[]) => {
      try {
        await this.remoteGit(clone, ['push', '-q', '--progress', ...(refs.length ? ['--atomic'] : []), 'origin', `${main}:${main}`, ...refs.map((b) => `:refs/heads/${b}`)]);
      } catch (err) {
        throw new MaestroError('GIT_FAILED', `The push of ${base} to the remote failed: ${(err as Error).message}`, { cause: err });
      }
    };
    if (branches.length) {
      const went = await push(branches).then(() => true, () => false);
      if (went) return branches;
    }
    await push([]);
    return [];
  }

}

/** The task branch in this clone, and where the clone last saw it on the remote (its `origin/<branch>`): from git's files, else one git process. */
async function branchTips(clone: string, branch: string): Promise<{ local?: string; published?: string }> {
  const tips = await tipsOf(clone, [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`]);
  return { local: tips.get(`refs/heads/${branch}`), published: tips.get(`refs/remotes/origin/${branch}`) };
}

/**
 * Moves `branch` from `from` to `to`: forward, or (`discard`) off commits that are not `to`'s. In the worktree
 * that has it checked out (its files and index follow), else the ref alone. Forward, a worktree whose
 * uncommitted files are in the way keeps the branch where it is; the run goes on there, and the merge refuses a
 * branch moved after its review. Off a discarded run's commits, its uncommitted files are set aside first
 * (setAsideLeftovers: nothing is deleted), so the branch always moves: left there, the next run would work
 * without the work that counted, and its push would take that work off the remote.
 */
async function moveBranch(clone: string, branch: string, from: string, to: string, o: { discard?: boolean } = {}): Promise<void> {
  const worktree = (await listWorktrees(clone)).find((w) => w.branch === branch);
  // A repository an agent made in the worktree would have its settings run by the git below (git/embedded.ts).
  if (worktree) await setAsideEmbeddedRepositories(worktree.path);
  if (!worktree) await git(clone, ['update-ref', `refs/heads/${branch}`, to, from]);
  else if (!o.discard) await git(worktree.path, ['merge', '--ff-only', '-q', to], { okCodes: [1, 128] });
  else {
    await setAsideLeftovers(worktree.path, `left by a run whose result was discarded, before ${branch} gave way to the remote's`);
    await git(worktree.path, ['reset', '-q', '--hard', to]);
  }
}
