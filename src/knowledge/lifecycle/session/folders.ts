/**
 * Where sessions and runs are (FORMATS §3: `.workflow/sessions/<sid>/`, `runs/<run-id>/`), and the rule for
 * reading and writing there: session folders stay inside the workflow root; a run folder may be a link, into
 * the orchestrator's run folder only. store.ts re-exports what its callers use.
 */
import { join } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { assertReadInside, linkedOutside } from '../../format/linkGuard.js';
import { canonical } from '../../../lib/paths.js';
import { assertInsideRoot, assertWorkflowInRepo, type WorkflowRoot } from '../../format/root.js';

export const ID_RE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/** Session and run ids are path segments: refuse anything that could escape the workflow root. */
export function assertSegment(kind: string, id: string): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > 128 || !ID_RE.test(id) || RESERVED.test(id))
    throw new MaestroError('BAD_INPUT', `${kind} id ${JSON.stringify(id)} must match ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ (≤128 chars); it is used as a folder name under .workflow/sessions/.`);
}

export function sessionsDir(root: WorkflowRoot): string {
  return join(root.workflowDir, 'sessions');
}
export function sessionDir(root: WorkflowRoot, sid: string): string {
  assertSegment('session', sid);
  return join(sessionsDir(root), sid);
}
export function runDir(root: WorkflowRoot, sid: string, rid: string): string {
  assertSegment('run', rid);
  return join(sessionDir(root, sid), 'runs', rid);
}
export const sessionLedgerPath = (root: WorkflowRoot, sid: string) => join(sessionDir(root, sid), 'knowledge-delta.json');
export const runLedgerPath = (root: WorkflowRoot, sid: string, rid: string) => join(runDir(root, sid, rid), 'knowledge-delta.json');

/**
 * Refuses a session whose folder a symbolic link sends out of the workflow root (`sessions -> /elsewhere`, or
 * `sessions/<sid>`), or out of the repository (`.workflow -> /elsewhere`): its ledger and session.json were written
 * there. A run folder below it may be a link, by design (runs link theirs to the daemon's run directory: `linkTo`).
 */
export function assertSessionInside(root: WorkflowRoot, sid: string): void {
  assertInsideRoot(root, sessionDir(root, sid));
}

/**
 * Before a write to a source's files (its ledger, receipt, promotion receipt): the session folder stays inside
 * (`assertSessionInside`), and so does a run's `runs/` folder; the run folder below it may be a link (`linkTo`),
 * into the orchestrator's run folder only (`assertRunFolderInside`). `use` says which the refusal names: a
 * caller that reads the source before it writes (reconcile, promote) says read.
 */
export function assertSourceInside(root: WorkflowRoot, sid: string, rid: string, use: RunFolderUse = 'read'): void {
  if (rid === 'session') return assertSessionInside(root, sid);
  assertRunsInside(root, sid);
  assertRunFolderInside(root, sid, rid, use);
}

/** The session's folder and its `runs/` stay inside (`assertSessionInside`); the run folders below may link out (`linkTo`). */
export function assertRunsInside(root: WorkflowRoot, sid: string): void {
  assertSessionInside(root, sid);
  assertInsideRoot(root, join(sessionDir(root, sid), 'runs'));
}

/** The orchestrator's run folder, `$MAESTRO_HOME/runs/`: the one place outside `.workflow/` a run folder may link to (bridge.ts). */
export function orchestratorRunsDir(root: WorkflowRoot): string {
  return join(root.home, 'runs');
}

export type RunFolderUse = 'read' | 'write';

/**
 * Why run `rid`'s folder may not be read or written, or null: it is a symbolic link whose real path is inside
 * neither the project's `.workflow/` nor the orchestrator's run folder, and is not this process's own run folder.
 * A repository's content can plant `runs/<rid> -> /anywhere`; Maestro's own links lead to
 * `$MAESTRO_HOME/runs/<task>/<run>/`. The home is the root's (the daemon's, or $MAESTRO_HOME's default for the CLI,
 * the same rule as the daemon's). An agent is not given the daemon's home (it holds the token), so under a daemon
 * with another home its knowledge tools would refuse their own run: the worker hands them that run's folder
 * (`$MAESTRO_RUN_DIR`, `root.runFolder`), and a link leading exactly there is the daemon's, made for this run.
 * Only that folder, not the runs folder around it: no other run is the agent's to write.
 */
export function runFolderOutside(root: WorkflowRoot, sid: string, rid: string, use: RunFolderUse = 'read'): MaestroError | null {
  const dir = runDir(root, sid, rid);
  const workflowOut = refusal(() => assertWorkflowInRepo(root, dir, use));
  if (workflowOut) return workflowOut;
  const runs = orchestratorRunsDir(root);
  const out = linkedOutside(root.workflowDir, dir, [root.workflowDir, runs]);
  if (!out) return null;
  if (root.runFolder !== undefined && out.real === canonical(root.runFolder)) return null;
  const own = root.runFolder !== undefined ? ` (nor this run's own folder ${root.runFolder}, $MAESTRO_RUN_DIR)` : '';
  return new MaestroError(
    'PATH_OUTSIDE_PROJECTS',
    `Refusing to ${use} ${dir}: ${out.link} is a symbolic link leading to ${out.real}, outside the project's ${root.workflowDir} and the orchestrator's run folder ${runs}${own}. A run folder is read and written only there. Nothing was ${use === 'write' ? 'written' : 'read or written'}. Remove the link; if it leads to the run folder of a daemon with another home, set MAESTRO_HOME to that home.`,
    { details: { file: dir, link: out.link } },
  );
}

export function assertRunFolderInside(root: WorkflowRoot, sid: string, rid: string, use: RunFolderUse = 'read'): void {
  const refused = runFolderOutside(root, sid, rid, use);
  if (refused) throw refused;
}

/**
 * Refuses to read `path` (sessions/, a session's folder or file, its runs/ folder) when a symbolic link sends it
 * out of the workflow root: what is read there would be listed, quoted in an error, or written back beside it.
 * Run folders are the exception, as for writes: below runs/ they may link to the orchestrator's run directory.
 */
export function assertReadableInside(root: WorkflowRoot, path: string): void {
  assertWorkflowInRepo(root, path, 'read');
  assertReadInside(root.workflowDir, path, `the project's ${root.workflowDir}`);
}

/** The MaestroError `check` throws, or null. */
function refusal(check: () => void): MaestroError | null {
  try {
    check();
    return null;
  } catch (err) {
    if (err instanceof MaestroError) return err;
    throw err;
  }
}
