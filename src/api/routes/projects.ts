/** /api/projects: register a repository, list and show projects, change settings, archive and restore. */
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import type { Project } from '../../core/types.js';
import { projectInputSchema, whoSchema } from '../../core/schemas.js';
import { baseBranchOf } from '../../core/baseBranch.js';
import { baseBranchFor, DEFAULT_BASE_BRANCH, localBranches, remoteBranches, type Branches } from '../../git/baseBranch.js';
import { git } from '../../git/git.js';
import { canonical, holds } from '../../lib/paths.js';
import { maskSecrets, parseProjectSettings, refuseChangedSettings, restoreMasked, settingsChange } from '../../daemon/projectSettings.js';
import { checkScriptedPaths } from '../../daemon/scriptedPaths.js';
import { providerFix } from '../../daemon/providerCheck.js';
import type { ApiDeps } from '../deps.js';
import { requestOrigin } from '../origin.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { idParam } from './schemas.js';
import { shellWord } from '../../core/diffGateWays.js';
import { projectConfigResponse, projectCreatedResponse, projectDetailResponse, projectListResponse, projectResponse } from '../wire/responses.js';
import { loadProjectConfig } from '../../executor/projectConfig.js';
import { repositoryHooks } from '../../hooks/runner.js';

/** A bare repository (`git init --bare`): what a shared remote usually is. */
function isBareRepository(path: string): boolean {
  return ['HEAD', 'objects', 'refs'].every((f) => existsSync(join(path, f))) && !existsSync(join(path, '.git'));
}

/**
 * The top of the git work tree `path` lies in, as git finds it (the same search from a subfolder upwards every git
 * command makes), or null when it lies in none. A subfolder of a repository was told "Run git init there first",
 * which makes a second repository nested in the first.
 */
async function enclosingWorkTree(path: string): Promise<string | null> {
  const { code, stdout } = await git(path, ['rev-parse', '--show-toplevel'], { okCodes: [128] });
  return code === 0 && stdout.trim() ? stdout.trim() : null;
}

/**
 * A project's repository, given as an absolute path: an existing git work tree, or, for a project on a
 * shared remote (`config.remote`), also a bare repository (the remote itself: the daemons work in their
 * own clones of it, README "Running on several machines").
 */
export async function checkRepoPath(repoPath: string, opts: { remote?: boolean; home?: string } = {}): Promise<string> {
  if (!isAbsolute(repoPath)) throw new MaestroError('BAD_INPUT', `repoPath must be absolute, got "${repoPath}".`);
  // Links resolved: a project is its checkout, however it was reached, so a link to a registered one is that one
  // (the duplicate check), and a link re-pointed later cannot move a project onto another repository.
  const path = canonical(repoPath);
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new MaestroError('BAD_INPUT', `repoPath ${path} is not a directory.`);
  if (!existsSync(join(path, '.git'))) {
    if (!isBareRepository(path)) {
      const top = await enclosingWorkTree(path);
      if (top) {
        throw new MaestroError('BAD_INPUT', `repoPath ${path} is a folder inside the git repository ${top}, not its top. Register the repository itself (maestro project add ${top}); nothing was registered.`, { details: { repository: top } });
      }
      throw new MaestroError('BAD_INPUT', `repoPath ${path} is not a git repository (no .git). Run git init there first.`);
    }
    if (!opts.remote) throw new MaestroError('BAD_INPUT', `repoPath ${path} is a bare repository, which has no work tree to run tasks in. Register a checkout of it, or name it as the project's shared remote (config.remote) so each daemon works in a clone of it.`);
  }
  if (opts.home && holds(path, opts.home)) {
    throw new MaestroError('BAD_INPUT', `repoPath ${path} holds the Maestro home ${opts.home} (its token, database and run files): the project's agents and knowledge routes would reach them. Register a repository outside the home.`);
  }
  return path;
}

/**
 * The branches a project's base branch is checked against: its checkout's, or its shared remote's (a bare
 * repository on this machine read directly, a network one asked with `git ls-remote`); null for a network remote
 * that does not answer now (each daemon's first sync names a missing branch).
 */
async function branchesAt(repoPath: string, config: Record<string, unknown>): Promise<Branches | null> {
  const remote = config.remote;
  if (typeof remote !== 'string') return localBranches(repoPath);
  // A path on this machine either is there or is not: only a URL (git's transport, file:// too) may be away for now.
  if (isAbsolute(remote) && !existsSync(remote)) {
    throw new MaestroError('BAD_INPUT', `config.remote: ${remote} does not exist on this machine, so no daemon here could fetch from it; nothing was saved.`, { details: { field: 'config.remote' } });
  }
  return isAbsolute(remote) && isBareRepository(remote) ? localBranches(remote) : remoteBranches(remote);
}

/**
 * The settings a project is registered with: tasks start from its base branch, one it has (an empty repository has
 * none), main by default, else the one its HEAD names (work on master), which is then recorded.
 */
async function withBaseBranch(repoPath: string, config: Record<string, unknown>): Promise<Record<string, unknown>> {
  const branches = await branchesAt(repoPath, config);
  if (!branches) return config;
  const base = baseBranchFor(branches, config.baseBranch as string | undefined); // a string when set: parseProjectSettings
  return base !== DEFAULT_BASE_BRANCH && config.baseBranch === undefined ? { ...config, baseBranch: base } : config;
}

const baseOf = (config: Record<string, unknown>) => baseBranchOf({ config });

/** A base branch the repository does not have (one named, or main once the setting goes) would fail every task's first git command. */
async function checkBaseBranchChange(repoPath: string, before: Record<string, unknown>, after: Record<string, unknown>): Promise<void> {
  if (baseOf(after) === baseOf(before) && after.remote === before.remote) return;
  const branches = await branchesAt(repoPath, after);
  if (branches) baseBranchFor(branches, baseOf(after));
}

/** What a repository makes the machine run by itself: its hooks and its checks (a bad config is said, not a refusal: init may fix it). */
function repositoryRuns(repoPath: string) {
  try {
    return { hooks: repositoryHooks(repoPath), checks: loadProjectConfig(repoPath).checks.map(({ name, command }) => ({ name, command })), problem: null };
  } catch (err) {
    return { hooks: repositoryHooks(repoPath), checks: [], problem: (err as Error).message };
  }
}

/** What a local project's repository sets in its own .maestro/: the only source of its checks, limits, model tiers and hooks. */
function repositorySettings(repoPath: string) {
  const hooks = repositoryHooks(repoPath);
  try {
    const c = loadProjectConfig(repoPath);
    return { file: c.source && relative(repoPath, c.source), hooks, checks: c.checks.map(({ name, command }) => ({ name, command })), limits: c.limits, models: c.models, problem: null };
  } catch (err) {
    return { file: null, hooks, checks: [], limits: {}, models: {}, problem: (err as Error).message };
  }
}

/**
 * Two projects on one checkout would merge into the same working tree and run on the same branches. Compared as
 * real paths (`repoPath` is one): a project registered before paths were stored resolved may name a link.
 */
function refuseSecondProject(projects: readonly Project[], given: string, repoPath: string): void {
  const same = projects.find((p) => canonical(p.repoPath) === repoPath);
  if (!same) return;
  const archived = same.archivedAt === null ? '' : ` It is archived: \`maestro project restore ${shellWord(same.name)}\` brings it back.`;
  const shown = resolve(given) === repoPath ? repoPath : `${given} (that is ${repoPath}, links followed)`;
  throw new MaestroError('DUPLICATE_PROJECT', `${shown} is already registered as project ${same.name} (${same.id}); nothing was registered.${archived}`, { details: { name: same.name } });
}

/** PATCH /api/projects/:id. `basedOn`: the settings the change was made from, as GET answered them; changed since, it is a 409 SETTINGS_CHANGED and nothing is saved. */
const settingsChangeBody = z.object({ config: z.record(z.string(), z.unknown()), basedOn: z.record(z.string(), z.unknown()).optional(), who: whoSchema }).strict();

export function registerProjectRoutes(app: FastifyInstance, doc: OpenApiDoc, { store, home, providerProblem }: ApiDeps): void {
  // Answers carry the settings with every `env` value masked: an API client (the board included) never reads a key back.
  defineRoute(app, doc, { method: 'GET', url: '/api/projects', summary: 'List projects', tags: ['projects'], response: projectListResponse }, async () => ({ projects: maskSecrets(await store.projects.list()) }));

  defineRoute(
    app,
    doc,
    { method: 'POST', url: '/api/projects', summary: 'Register a git repository as a project (an event naming who and from where, and the hooks and checks the repository runs)', tags: ['projects'], body: projectInputSchema.extend({ who: whoSchema }), response: projectCreatedResponse, status: 201 },
    async ({ body, req }) => {
      const { who, ...input } = body;
      const config = parseProjectSettings(input.config);
      const repoPath = await checkRepoPath(input.repoPath, { remote: typeof config.remote === 'string', home });
      checkScriptedPaths(config, {}, repoPath);
      refuseSecondProject(await store.projects.list(), input.repoPath, repoPath);
      const local = typeof config.remote !== 'string';
      const settings = await withBaseBranch(repoPath, config);
      const from = requestOrigin(req);
      // The repository's own hooks and checks run from its first task on: said to whoever registers it, and on record.
      const runs = local ? repositoryRuns(repoPath) : null;
      // Its settings may run code (a provider, a remote) from the first claim on: who registered it is on record.
      const project = await store.projects.create({ ...input, config: settings, repoPath }, (p) => ({ name: p.name, repoPath: p.repoPath, keys: Object.keys(settings), ...maskSecrets(settingsChange({}, settings)), who, from, ...(runs ? { runs } : {}) }));
      return { project: maskSecrets(project), runs };
    },
  );

  defineRoute(app, doc, { method: 'GET', url: '/api/projects/:id', summary: 'Show a project with its task counts and what its repository’s own .maestro/ sets', tags: ['projects'], params: idParam, response: projectDetailResponse }, async ({ params }) => {
    const project = await store.projects.get(params.id);
    const local = typeof project.config.remote !== 'string';
    return { project: maskSecrets(project), tasksByStatus: await store.metrics.tasksByStatus(project.id), repository: local ? repositorySettings(project.repoPath) : null };
  });

  defineRoute(
    app,
    doc,
    {
      method: 'PATCH',
      url: '/api/projects/:id',
      summary: "Replace a project's settings (validated; the change is an event naming who made it and from where, and what a change of auto-approval means)",
      tags: ['projects'],
      params: idParam,
      body: settingsChangeBody,
      response: projectConfigResponse,
    },
    async ({ params, body, req }) => {
      const stored = await store.projects.get(params.id);
      // A masked `env` value (as GET answers it) keeps the stored one.
      const config = parseProjectSettings(restoreMasked(body.config, stored.config));
      checkScriptedPaths(config, stored.config, stored.repoPath);
      // A project registered by its bare remote keeps a remote: without one there is no work tree to run in.
      if (!config.remote && isBareRepository(stored.repoPath)) {
        throw new MaestroError('BAD_INPUT', `project ${params.id} is registered by a bare repository, so its settings must name a shared remote (config.remote); nothing was saved.`);
      }
      await checkBaseBranchChange(stored.repoPath, stored.config, config);
      const from = requestOrigin(req);
      const describe = (before: Project) => ({ name: before.name, keys: Object.keys(config), ...maskSecrets(settingsChange(before.config, config)), who: body.who, from });
      const { project, autoApproval } = await store.projects.updateConfig(params.id, config, describe, (before) => refuseChangedSettings(before, stored.config, body.basedOn));
      // Saved all the same (the script may be written next), but said now rather than at the next task create.
      const problem = project.archivedAt === null ? (providerProblem?.(project) ?? null) : null;
      return { project: maskSecrets(project), autoApproval, cannotRun: problem ? providerFix(project, problem) : null };
    },
  );

  // Archive and restore: the project and its history stay; while archived it takes no new work (store/ops/projects.ts).
  const whoBody = z.object({ who: whoSchema }).strict();
  defineRoute(
    app,
    doc,
    { method: 'POST', url: '/api/projects/:id/archive', summary: 'Archive a project: kept with its history, no new work (refused while work is in flight or at a gate)', tags: ['projects'], params: idParam, body: whoBody, response: projectResponse },
    async ({ params, body, req }) => ({ project: maskSecrets(await store.projects.archive(params.id, { who: body.who, from: requestOrigin(req) })) }),
  );
  defineRoute(
    app,
    doc,
    { method: 'POST', url: '/api/projects/:id/restore', summary: 'Restore an archived project: its ready tasks are claimable again', tags: ['projects'], params: idParam, body: whoBody, response: projectResponse },
    async ({ params, body, req }) => ({ project: maskSecrets(await store.projects.restore(params.id, { who: body.who, from: requestOrigin(req) })) }),
  );
}
