/**
 * Where the knowledge lives. A workflow root is a project's `.workflow/`
 * folder; every scope of FORMATS §1.1 hangs off it or off $MAESTRO_HOME.
 *
 * `--workflow-root` confines every read and write to that root's `.workflow/`
 * subtree (seed 000 §10): the global scope under $MAESTRO_HOME is then left out
 * unless asked for, and nothing is ever written outside the root. Linked
 * workspaces are declared inside the root (`.workflow/config.json`) and are
 * read-only (workspaces.ts). Reads stay inside their folder on disk too, for every reader (one index file holds
 * what any of them read): a knowledge folder or file that is a symbolic link out of its project (or out of its
 * linked workspace) is not read. The daemon reads a repository's knowledge this way,
 * and a repository must not make it read, and hand to agents, whatever folder
 * of the machine a link names; a linked workspace reaches only the `.workflow/`
 * knowledge of the folder it names, as in maestro-flow, and the file declaring it is read only when it is
 * inside the project on disk.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { canonical, holds } from '../../lib/paths.js';
import { assertInRepo } from '../../lib/repoWrites.js';
import { assertNoLinkOut } from './linkGuard.js';
import { workspaceLinks, type LinkedWorkspace } from './workspaces.js';
import type { Finding } from './specParser.js';

export { workspaceLinks, type LinkedWorkspace } from './workspaces.js';

export type Scope = 'project' | 'global' | 'team' | 'personal' | 'workspace';

export interface WorkflowRoot {
  /** The project folder holding `.workflow/`. */
  projectDir: string;
  /** The `.workflow/` folder itself. */
  workflowDir: string;
  /** True when given explicitly (`--workflow-root`): reads and writes stay inside. */
  confined: boolean;
  home: string;
  uid: string;
  includeGlobal: boolean;
  /** A confined root's check of a linked workspace's folder outside the project (real path); none: only the project's own. */
  workspaceAllowed?: (dir: string) => boolean;
  /**
   * The run folder the worker handed this process (`$MAESTRO_RUN_DIR`, absolute), when it runs inside one: an
   * agent's knowledge tools are not told the daemon's home (it holds the token), so this is how they know where the
   * daemon put their run's folder (store.ts `runFolderOutside`).
   */
  runFolder?: string;
}

export interface ResolveRootOptions {
  workflowRoot?: string | undefined;
  cwd?: string;
  /** The environment of the process's entry point ($MAESTRO_HOME, $MAESTRO_UID, $MAESTRO_RUN_DIR): passed down, never read here. */
  env: NodeJS.ProcessEnv;
  /** Read `$MAESTRO_HOME/specs` even when confined. */
  includeGlobal?: boolean;
  /**
   * The folders outside the project a confined root's linked workspaces may name (the daemon: its registered
   * projects'); without it, only folders inside the project.
   */
  workspaceAllowed?: (dir: string) => boolean;
}

/**
 * $MAESTRO_HOME, the same rule as config.ts `resolveHome`. Repeated here
 * because importing config.ts loads zod (≈130 ms), which a cold
 * `maestro search` should not pay for one environment variable.
 */
function maestroHome(env: NodeJS.ProcessEnv): string {
  return resolve(env.MAESTRO_HOME || join(homedir(), '.maestro'));
}

export function resolveWorkflowRoot(opts: ResolveRootOptions): WorkflowRoot {
  const env = opts.env;
  const home = maestroHome(env);
  const uid = env.MAESTRO_UID || safeUser();
  const run = env.MAESTRO_RUN_DIR ? { runFolder: resolve(env.MAESTRO_RUN_DIR) } : {};
  if (opts.workflowRoot) {
    const given = resolve(opts.cwd ?? process.cwd(), opts.workflowRoot);
    if (existsSync(given) && !statSync(given).isDirectory()) throw new MaestroError('BAD_INPUT', `--workflow-root ${given} is not a directory.`);
    const workflowDir = basename(given) === '.workflow' ? given : join(given, '.workflow');
    // A mistyped root would be created by the first write, and read as empty: its project folder must be there.
    if (!existsSync(dirname(workflowDir))) throw new MaestroError('BAD_INPUT', `The knowledge root ${given} does not exist (moved or deleted?); nothing was read or written.`);
    const allowed = opts.workspaceAllowed ? { workspaceAllowed: opts.workspaceAllowed } : {};
    return { projectDir: dirname(workflowDir), workflowDir, confined: true, home, uid, includeGlobal: opts.includeGlobal ?? false, ...allowed, ...run };
  }
  const start = resolve(opts.cwd ?? process.cwd());
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, '.workflow'))) break;
    const up = dirname(dir);
    if (up === dir) {
      dir = start;
      break;
    }
    dir = up;
  }
  return { projectDir: dir, workflowDir: join(dir, '.workflow'), confined: false, home, uid, includeGlobal: opts.includeGlobal ?? true, ...run };
}

function safeUser(): string {
  try {
    return userInfo().username || 'user';
  } catch {
    return 'user';
  }
}

export interface SpecDir {
  scope: Scope;
  dir: string;
  /** Canonical id prefix, FORMATS §1.1 (`spec:project:`, `ws:{name}:spec:` …). */
  idPrefix: string;
  /** Linked workspace name, else null. */
  workspace: string | null;
  uid?: string;
  writable: boolean;
}

/** The linked workspaces the root declares (workspaces.ts: maestro-flow's `.workflow/config.json`, Maestro's `workspaces.json`); a broken declaration reads none, and says so in the findings. */
export function linkedWorkspaces(root: WorkflowRoot): LinkedWorkspace[] {
  return workspaceLinks(root).workspaces;
}

/**
 * Whether the knowledge folder `dir` is read: its real path lies inside the real path of the folder it belongs to
 * (the project's, or its linked workspace's; one that does not exist holds nothing), for every reader. What one
 * reader indexes goes into the project's own index file, which agents read: `maestro search` following a
 * `.workflow/knowhow` linked to ~ would have put notes of the home there for the daemon and agents to find. A
 * confined root reads a linked workspace only where workspaceOpen allows. Writes have their own, stricter guard
 * (assertInsideRoot), which names the link it refuses.
 */
export function readableIn(root: WorkflowRoot, dir: { dir: string; workspace: string | null }): boolean {
  const base = dir.workspace === null ? root.projectDir : dirname(dirname(dir.dir));
  if (root.confined && dir.workspace !== null && !workspaceOpen(root, base)) return false;
  try {
    const real = realpathSync(dir.dir);
    const inside = realpathSync(base);
    return real === inside || real.startsWith(inside + sep);
  } catch {
    return true;
  }
}

/**
 * Whether a confined root (the daemon's, an agent's) reads the linked workspace at `folder`: one inside the project,
 * or one `workspaceAllowed` names (the daemon: a registered project's). the declaration is the repository's, and
 * naming a folder of the machine there must not widen what is read. Asked at every scan: a project registered
 * later counts from then on.
 */
function workspaceOpen(root: WorkflowRoot, folder: string): boolean {
  return holds(root.projectDir, folder) || root.workspaceAllowed?.(canonical(folder)) === true;
}

/**
 * Where the index of a root that reads a linked workspace outside its project goes, or undefined: in `.workflow/`.
 * `maestro search` in the project reads whatever folder the repository's declaration names, as maestro-flow does;
 * an index in `.workflow/` would copy that folder's knowledge (another project of the person's, one the agent
 * sandbox hides) where this repository's agents read. So that index lives under $MAESTRO_HOME, which the sandbox
 * hides, one folder per project. A confined root (the daemon's, an agent's) opens such a workspace only where its
 * owner allows (workspaceOpen: a registered project), and keeps its index in `.workflow/`.
 */
export function privateIndexDir(root: WorkflowRoot): string | undefined {
  if (root.confined || !linkedWorkspaces(root).some((ws) => !holds(root.projectDir, dirname(ws.workflowDir)))) return undefined;
  return join(root.home, 'indexes', createHash('sha256').update(canonical(root.projectDir)).digest('hex').slice(0, 16));
}

/**
 * What health says of the linked workspaces: the declaration's findings (workspaces.ts), and each workspace this
 * root does not read, or reads only in part, with why: one a confined root may not open (outside the project, no
 * registered project's folder), a knowledge folder of one that links out of it. Not read without a word before.
 */
export function workspaceFindings(root: WorkflowRoot): Finding[] {
  const { workspaces, findings } = workspaceLinks(root);
  const out = [...findings];
  const said = (ws: LinkedWorkspace, message: string) => out.push({ file: ws.workflowDir, line: 1, severity: 'warning', code: 'linked-workspaces', message });
  for (const ws of workspaces) {
    const folder = dirname(ws.workflowDir);
    if (root.confined && !workspaceOpen(root, folder)) {
      said(ws, `The linked workspace "${ws.name}" (${folder}) is not read here: it is outside the project and is no registered project's folder.`);
      continue;
    }
    const dirs = [...(ws.shares.spec ? ['specs'] : []), ...(ws.shares.knowhow ? ['knowhow'] : [])].map((d) => join(ws.workflowDir, d));
    for (const dir of dirs.filter((d) => existsSync(d) && !readableIn(root, { dir: d, workspace: ws.name }))) {
      said(ws, `The linked workspace "${ws.name}": ${dir} leads out of ${folder} and is not read.`);
    }
  }
  return out;
}

/** Spec directories in loader layer order (FORMATS §1.1): global, linked, baseline, team, personal. */
export function specDirs(root: WorkflowRoot): SpecDir[] {
  const dirs: SpecDir[] = [];
  if (root.includeGlobal) dirs.push({ scope: 'global', dir: join(root.home, 'specs'), idPrefix: 'spec:global:', workspace: null, writable: !root.confined });
  for (const ws of linkedWorkspaces(root).filter((w) => w.shares.spec)) {
    dirs.push({ scope: 'workspace', dir: join(ws.workflowDir, 'specs'), idPrefix: `ws:${ws.name}:spec:`, workspace: ws.name, writable: false });
  }
  dirs.push({ scope: 'project', dir: join(root.workflowDir, 'specs'), idPrefix: 'spec:project:', workspace: null, writable: true });
  dirs.push({ scope: 'team', dir: join(root.workflowDir, 'collab', 'specs'), idPrefix: 'spec:team:', workspace: null, writable: true });
  dirs.push({
    scope: 'personal',
    dir: join(root.workflowDir, 'collab', 'specs', root.uid),
    idPrefix: `spec:personal:${root.uid}:`,
    workspace: null,
    uid: root.uid,
    writable: true,
  });
  return dirs;
}

export interface KnowhowDir {
  dir: string;
  idPrefix: string;
  workspace: string | null;
  writable: boolean;
}

export function knowhowDirs(root: WorkflowRoot): KnowhowDir[] {
  const dirs: KnowhowDir[] = [{ dir: join(root.workflowDir, 'knowhow'), idPrefix: '', workspace: null, writable: true }];
  for (const ws of linkedWorkspaces(root).filter((w) => w.shares.knowhow)) dirs.push({ dir: join(ws.workflowDir, 'knowhow'), idPrefix: `ws:${ws.name}:`, workspace: ws.name, writable: false });
  return dirs;
}

/**
 * Top-level `*.md` files of a spec dir (no recursion, FORMATS §1.1). With `links`, a symbolic link to a file is
 * listed too, and added to `links`: the readers read it as the file it leads to, as maestro-flow does, a confined
 * one only when it leads inside its folder (corpus.ts `linkedOut`). Writers list files only.
 */
export function listSpecFiles(dir: string, links?: string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.name.endsWith('.md') && !d.name.startsWith('.') && listed(d, join(dir, d.name), links))
    .map((d) => join(dir, d.name))
    .sort();
}

/** Knowhow files, recursively, skipping dot files and dot folders (FORMATS §2.2); `links` as for listSpecFiles (a link to a folder is not followed). */
export function listKnowhowFiles(dir: string, links?: string[]): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  // Paths joined by hand, not with path.join: a cold CLI search lists every file, and join's
  // normalising was half of the listing's CPU time (17 → 8 ms on 7,000 files, issue 16 item 3).
  const walk = (d: string) => {
    const prefix = d.endsWith('/') ? d : `${d}/`;
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      if (ent.name.startsWith('.')) continue;
      const p = prefix + ent.name;
      if (ent.isDirectory()) walk(p);
      else if (ent.name.endsWith('.md') && listed(ent, p, links)) out.push(p);
    }
  };
  walk(join(dir));
  return out.sort();
}

/** A file; with `links`, also a symbolic link to a file (pushed there). */
function listed(ent: Dirent, path: string, links: string[] | undefined): boolean {
  if (ent.isFile()) return true;
  if (!links || !ent.isSymbolicLink()) return false;
  let toFile = false;
  try {
    toFile = statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    // a loop of links, or no permission: not listed
  }
  if (toFile) links.push(path);
  return toFile;
}

/**
 * Refuses `target` (a path under the project's `.workflow/`, to be written, or read by a reader that holds to the
 * same rule) when `.workflow/` itself is a symbolic link out of the repository (lib/repoWrites.ts, the rule of every
 * writer in a checkout). The guards below `.workflow/` (linkGuard.ts) keep a path inside the real `.workflow/`;
 * that is inside the repository only once this holds. A `.workflow` linked to a folder inside the repository is
 * followed, as readers do.
 */
export function assertWorkflowInRepo(root: WorkflowRoot, target: string, use: 'read' | 'write' = 'write'): void {
  assertInRepo(root.projectDir, root.workflowDir, { target, use });
}

/**
 * Refuses a write target outside the (confined) workflow root: by its path, and
 * on disk, where a symbolic link (`.workflow` itself, or one below it) could lead it out (linkGuard.ts).
 * Call it before taking the corpus lock: the lock already creates files beside the target.
 */
export function assertInsideRoot(root: WorkflowRoot, target: string): void {
  const abs = resolve(target);
  const globalSpecs = join(root.home, 'specs');
  const inside = abs === root.workflowDir || abs.startsWith(root.workflowDir + '/');
  const global = !root.confined && abs.startsWith(globalSpecs + '/');
  if (!inside && !global) throw new MaestroError('BAD_INPUT', `Refusing to write ${abs}: outside the workflow root ${root.workflowDir}.`);
  if (inside) {
    assertWorkflowInRepo(root, abs);
    assertNoLinkOut(root.workflowDir, abs, `the project's ${root.workflowDir}`);
  } else assertNoLinkOut(globalSpecs, abs, `the global spec folder ${globalSpecs}`);
}
