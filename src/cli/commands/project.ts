/** `maestro project add|list|show|config|archive|restore`: register repositories with the daemon, set their agent, put them away. */
import { basename, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import { action, printJson } from '../output.js';
import { clientFor, findProject, print, table, withApi, type ClientFlags } from './common.js';
import { agentOffer } from './agentOffer.js';
import { shellWord } from '../../core/diffGateWays.js';
import { PROVIDER_KINDS, providerFromFlags, registerConfig } from './projectConfig.js';
import type { ProjectCreatedResponse, ProjectList, ProjectResponse } from '../../api/wire/responses.js';
import type { CliContext } from '../context.js';

/**
 * The daemon's refusal of a name the person never typed (taken from the folder: one holding an escape character,
 * say) is said as that, with the way out: "Invalid --name" sent them looking for a flag they had not given.
 */
function folderNameRefused(err: unknown, name: string): unknown {
  const issues = err instanceof MaestroError && err.code === 'BAD_INPUT' ? (err.details?.issues as Array<{ path?: unknown; message?: unknown }> | undefined) : undefined;
  const issue = Array.isArray(issues) ? issues.find((i) => Array.isArray(i.path) && i.path[0] === 'name') : undefined;
  if (!issue) return err;
  return new MaestroError('BAD_INPUT', `The project name taken from the folder, "${name}", is not allowed (it ${String(issue.message)}): give the project a name with --name <name>.`, { cause: err });
}

function counts(byStatus: Record<string, number>): string {
  const parts = Object.entries(byStatus).filter(([, n]) => n > 0).map(([s, n]) => `${s} ${n}`);
  return parts.length ? parts.join(', ') : 'no tasks';
}

export function register(program: Command, ctx: CliContext): void {
  const project = program.command('project').description('Register git repositories as projects and look at them (needs the daemon).');

  withApi(
    project
      .command('add <path>')
      .description('Register the git repository at <path> as a project, optionally with its agent.')
      .option('--name <name>', 'project name (default: the folder name)')
      .option('--remote <remote>', 'a shared remote several daemons work through, each in its own clone (docs/several-machines.md); <path> may then be that bare repository')
      .addOption(new Option('--provider <kind>', 'the agent that runs its tasks (docs/agents.md)').choices(PROVIDER_KINDS))
      .option('--command <argv>', "with --provider command: the agent's argv, {prompt} where the prompt goes (else stdin), {model} for the model")
      .option('--script <file>', 'with --provider scripted: the script, a file in the repository (docs/scripted-agent.md)'),
  ).action(
    action(async (path: string, opts: ClientFlags & { name?: string; remote?: string; provider?: string; command?: string; script?: string }) => {
      const repoPath = resolve(path);
      const provider = providerFromFlags(opts, repoPath);
      const config = { ...(provider ? { provider } : {}), ...(opts.remote ? { remote: opts.remote } : {}) };
      const body = { name: opts.name ?? basename(repoPath.replace(/\.git$/, '')), repoPath, ...(Object.keys(config).length ? { config } : {}) };
      const client = clientFor(opts, ctx.env);
      const { project: p, runs } = await client.post<ProjectCreatedResponse>('/api/projects', body).catch((err: unknown) => {
        throw opts.name === undefined ? folderNameRefused(err, body.name) : err;
      });
      if (opts.json) return printJson({ project: p, runs });
      print(`Added project ${p.name} (${p.id}) at ${p.repoPath}${provider ? ` with the ${String(provider.kind)} agent` : ''}`);
      if (typeof p.config.baseBranch === 'string') {
        // Registration took it from the remote's HEAD for a project on a shared remote, else from the checkout.
        const whence = typeof p.config.remote === 'string' ? "the shared remote's default branch" : 'the branch checked out there';
        print(`Tasks start from ${p.config.baseBranch} and merge into it (${whence}; \`maestro project config set baseBranch <branch> --project ${shellWord(p.name)}\` changes it).`);
      }
      const said = runsLines(runs, typeof p.config.baseBranch === 'string' ? p.config.baseBranch : 'main');
      if (said) print(said);
      const offer = await agentOffer(client, p, provider ? String(provider.kind) : null);
      if (offer) print(offer);
    }),
  );

  registerConfig(project, ctx);

  withApi(project.command('list').description('List projects (archived ones with --all).').option('--all', 'archived projects too')).action(
    action(async (opts: ClientFlags & { all?: boolean }) => {
      const { projects: every } = await clientFor(opts, ctx.env).get<ProjectList>('/api/projects');
      const projects = opts.all ? every : every.filter((p) => p.archivedAt === null);
      if (opts.json) return printJson({ projects });
      const hidden = every.length - projects.length;
      const more = hidden ? `\n(${hidden} archived: \`maestro project list --all\`)` : '';
      if (!projects.length) return print(`No projects yet. Add one with \`maestro project add <path>\`.${more}`);
      const rows = projects.map((p) => [p.id, p.name, p.repoPath, ...(opts.all ? [p.archivedAt === null ? 'active' : `archived ${new Date(p.archivedAt).toISOString()}`] : [])]);
      print(table([['ID', 'NAME', 'REPOSITORY', ...(opts.all ? ['STATE'] : [])], ...rows]) + more);
    }),
  );

  for (const [verb, description, done] of [
    ['archive', 'Archive a project: it keeps its tasks and history and takes no new work (refused while work is in flight or at a gate).', 'Archived'],
    ['restore', 'Restore an archived project: its ready tasks are claimable again.', 'Restored'],
  ] as const) {
    withApi(project.command(`${verb} <idOrName>`).description(description)).action(
      action(async (idOrName: string, opts: ClientFlags) => {
        const client = clientFor(opts, ctx.env);
        const { project: found } = await findProject(client, idOrName);
        const { project: p } = await client.post<ProjectResponse>(`/api/projects/${encodeURIComponent(found.id)}/${verb}`, {});
        if (opts.json) return printJson({ project: p });
        print(`${done} project ${p.name} (${p.id}).`);
      }),
    );
  }

  withApi(project.command('show <idOrName>').description('Show a project (by id or name) with its task counts.')).action(
    action(async (idOrName: string, opts: ClientFlags) => {
      const { project: p, tasksByStatus } = await findProject(clientFor(opts, ctx.env), idOrName);
      if (opts.json) return printJson({ project: p, tasksByStatus });
      const remote = typeof p.config.remote === 'string' ? `\n  shared remote: ${p.config.remote} (each daemon works in its own clone)` : '';
      const provider = p.config.provider as { kind?: unknown } | undefined;
      const agent = provider && typeof provider.kind === 'string' ? `\n  agent: ${provider.kind}` : '';
      const archived = p.archivedAt === null ? '' : `\n  archived ${new Date(p.archivedAt).toISOString()}: no new work (\`maestro project restore ${shellWord(p.name)}\`)`;
      print(`${p.name} (${p.id})\n  repository: ${p.repoPath}${remote}${agent}${archived}\n  tasks: ${counts(tasksByStatus)}`);
    }),
  );
}

export { counts as formatCounts };

/** What the repository makes this machine run by itself, said once it is registered (nothing when it runs nothing), and settings of it that do not load. */
function runsLines(runs: ProjectCreatedResponse['runs'], base: string): string | null {
  if (!runs) return `Its hooks and checks (.maestro/) are read from the remote's ${base} in each daemon's clone: they run commands on those machines.`;
  const lines = [
    ...runs.hooks.map((h) => `  hook   ${h}`),
    ...runs.checks.map((c) => `  check  ${c.name}: ${Array.isArray(c.command) ? c.command.join(' ') : c.command}`),
  ];
  const said = lines.length ? ['The repository runs these on this machine from its first task on (look at them if you did not write them):', ...lines] : [];
  // Its settings did not load: no task is created in it until they do (POST /api/tasks says the same).
  if (runs.problem) said.push(`No task of it can run until this is fixed on ${base} and committed: ${runs.problem.replace(/\.+$/, '')}.`);
  return said.length ? said.join('\n') : null;
}
