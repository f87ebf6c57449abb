/**
 * Where `maestro knowledge promote` promotes, and what becomes of the files it writes. A promotion into a project's
 * own checkout (where Maestro merges its tasks) is committed there, as the board's is (daemon/checkoutKnowledge.ts):
 * left uncommitted, a changed spec file made the checkout dirty and the merge of the task being reviewed was refused.
 *
 * - A daemon answers and the folder is one of its projects' own checkout: the daemon promotes (its review route),
 *   under the project's merge lease, so no merge of its train lands in the checkout meanwhile.
 * - No daemon answers: nothing merges into the checkout now, so the promotion is committed here directly, with the
 *   same rules, on the project's base branch as the daemon's database records it (baseBranchOffline); a folder that
 *   is no project there, or a database that cannot be read, is taken to be on `main` (the default).
 * - A daemon answers but refuses the question (a token it does not take): its merges may land in the checkout, so
 *   the files are written, not committed, and the output says why.
 * - A project on a shared remote (the daemon works in its own clone, and the board pushes promotions to the remote's
 *   main), or a folder that is no project of the daemon that answers: the files are written and left to the person.
 */
import { realpathSync } from 'node:fs';
import { isMaestroError, MaestroError } from '../../core/errors.js';
import { baseBranchOf, DEFAULT_BASE_BRANCH } from '../../core/baseBranch.js';
import type { Project } from '../../core/types.js';
import type { ProjectList } from '../../api/wire/responses.js';
import type { PromotionResult } from '../../knowledge/lifecycle/promote/promote.js';
import type { WorkflowRoot } from '../../knowledge/format/root.js';
import type { CheckoutCommit } from '../../daemon/checkoutKnowledge.js';
import type { Env } from '../../config/env.js';
import { git } from '../../git/git.js';
import { clientFor } from './common.js';

export type Promotion = PromotionResult & { commit?: CheckoutCommit };

export interface PromoteHere {
  root: WorkflowRoot;
  sid: string;
  candidates: string[];
  all: boolean;
  env: Env;
  /** The promotion in this process, in the folder given. */
  promote: (repo: string) => Promise<PromotionResult>;
}

/** Promotes as the file's comment says; `commit` says what was committed, absent when nothing was tried. */
export async function promoteHere(p: PromoteHere): Promise<Promotion> {
  if (!p.all && !p.candidates.length) throw new MaestroError('BAD_INPUT', 'promote needs --candidate <id> (repeatable, commas accepted) or --all.');
  const client = clientFor({}, p.env);
  let projects: Project[] | null;
  try {
    projects = (await client.get<ProjectList>('/api/projects')).projects;
  } catch (err) {
    if (!isMaestroError(err, 'DAEMON_UNREACHABLE')) {
      // A daemon is there but did not say (a token it refused): its merges may land in the checkout, so no commit here.
      const r = await p.promote(p.root.projectDir);
      return { ...r, warnings: [...r.warnings, `nothing committed: the daemon did not say which projects it has (${(err as Error).message})`] };
    }
    projects = null;
  }
  const dir = real(p.root.projectDir);
  if (projects === null) {
    if (!(await isCheckout(p.root.projectDir))) return p.promote(p.root.projectDir);
    const [{ promoteAndCommit }, { promotionSubject }] = await Promise.all([import('../../daemon/checkoutKnowledge.js'), import('../../daemon/sharedKnowledge.js')]);
    return promoteAndCommit(p.root.projectDir, await baseBranchOffline(p.env, dir), async (r: PromotionResult) => promotionSubject(`session ${p.sid}`, r), p.promote);
  }
  const project = projects.find((x) => real(x.repoPath) === dir);
  if (!project || (typeof project.config.remote === 'string' && project.config.remote)) return p.promote(p.root.projectDir);
  const body = p.all ? { all: true } : { candidates: p.candidates.flatMap((c) => c.split(',')).map((c) => c.trim()).filter(Boolean) };
  return client.post<Promotion>(`/api/knowledge/review/${encodeURIComponent(p.sid)}/promote?projectId=${encodeURIComponent(project.id)}`, body);
}

/** What the person reads of `commit`: what was committed where, or what was not and why. */
export function commitLines(r: Promotion, root: WorkflowRoot): string[] {
  if (!r.promoted.length) return [];
  const yours = (what: string) => `commit ${what} (git -C ${root.projectDir} status lists them) for the team and later agents to share them; Maestro merges a task only into a clean checkout, so commit them before you approve one.`;
  if (!r.commit) return [`Written to ${root.workflowDir}, not committed: ${yours('the new files there')}`];
  const { sha, files, uncommitted, why } = r.commit;
  return [...(sha ? [`Committed in ${root.projectDir} (${sha.slice(0, 12)}): ${files.join(', ')}`] : []), ...(uncommitted.length ? [`Not committed: ${uncommitted.join(', ')}: ${why}; ${yours('them yourself')}`] : [])];
}

/**
 * The base branch of the project whose checkout `dir` (a real path) is, read from the daemon's database while no
 * daemon runs, as the daemon reads it (core/baseBranch.ts: its config's `baseBranch`, else `main`). Registered with
 * no `main`, a repository's project takes the branch it is on (`trunk`, say); taken as `main`, its promotions were
 * left uncommitted ("the checkout is on trunk, not main"). Read only: the SQLite file is never made nor migrated.
 */
async function baseBranchOffline(env: Env, dir: string): Promise<string> {
  const [{ resolveConfig }, { sqlitePath }, { openSqlite }, { openPostgres }, { listProjects }] = await Promise.all([
    import('../../config/config.js'), import('../../daemon/homeCheck.js'), import('../../store/sqlite.js'), import('../../store/postgres.js'), import('../../store/ops/projects.js'),
  ]);
  try {
    const { database } = resolveConfig({}, env);
    const path = sqlitePath(database);
    const db = path ? openSqlite(path, { readonly: true }) : database.startsWith('postgres') ? openPostgres(database) : null;
    if (!db) return DEFAULT_BASE_BRANCH;
    try {
      const project = (await listProjects(db)).find((x) => real(x.repoPath) === dir);
      return project ? baseBranchOf(project) : DEFAULT_BASE_BRANCH;
    } finally {
      await db.close();
    }
  } catch {
    return DEFAULT_BASE_BRANCH; // no database yet, or none that answers: nothing says otherwise
  }
}

/** A git work tree's top (a folder that is no checkout gets its files written, nothing committed). */
async function isCheckout(dir: string): Promise<boolean> {
  try {
    return real((await git(dir, ['rev-parse', '--show-toplevel'])).stdout.trim()) === real(dir);
  } catch {
    return false;
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
