/**
 * Setting a project's agent from the CLI: `project add --provider …` and
 * `project config get|set|unset` with dotted keys and JSON values. Settings
 * are replaced through PATCH /api/projects/:id, which validates them; the
 * provider is also checked here with the runner's own schema, so a typo is
 * named (field and problem) before anything is sent.
 */
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { autoApprovalSentence } from '../../core/autoApproval.js';
import { MaestroError } from '../../core/errors.js';
import { unknownKeysIssueNote } from '../../lib/unknownKeys.js';
import type { Project } from '../../core/types.js';
import { providerConfigSchema } from '../../executor/protocol/job.js';
import type { ApiClient } from '../../api/client.js';
import { action, printJson } from '../output.js';
import { clientFor, pickProject, print, withApi, type ClientFlags } from './common.js';
import type { ProjectConfigResponse } from '../../api/wire/responses.js';
import type { CliContext } from '../context.js';

export const PROVIDER_KINDS = ['claude', 'codex', 'gemini', 'cursor', 'opencode', 'command', 'scripted'] as const;

/** `node agent.mjs {prompt}` or a JSON array; quotes group words, as a shell would (no expansion). */
export function splitArgv(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (err) {
      throw new InvalidArgumentError(`--command looks like JSON but is not: ${(err as Error).message}`);
    }
    if (!Array.isArray(parsed) || !parsed.length || !parsed.every((a) => typeof a === 'string' && a)) throw new InvalidArgumentError('--command as JSON must be a non-empty array of strings.');
    return parsed as string[];
  }
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const m of trimmed.matchAll(re)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
  if (!out.length) throw new InvalidArgumentError('--command is empty.');
  return out;
}

/** The provider `project add --provider` sets. */
export function providerFromFlags(flags: { provider?: string; command?: string; script?: string }, repoPath?: string): Record<string, unknown> | null {
  if (!flags.provider) {
    if (flags.command || flags.script) throw new MaestroError('BAD_INPUT', '--command and --script need --provider command or --provider scripted.');
    return null;
  }
  let provider: Record<string, unknown>;
  if (flags.provider === 'command') {
    if (!flags.command) throw new MaestroError('BAD_INPUT', "--provider command needs --command '<program> <args…>' (use {prompt} where the prompt goes, else it comes on stdin).");
    const argv = splitArgv(flags.command);
    provider = { kind: 'command', command: argv, promptVia: argv.some((a) => a.includes('{prompt}')) ? 'arg' : 'stdin' };
  } else if (flags.provider === 'scripted') {
    if (!flags.script) throw new MaestroError('BAD_INPUT', '--provider scripted needs --script <file> (docs/scripted-agent.md).');
    provider = { kind: 'scripted', script: scriptFile(flags.script, repoPath) };
  } else {
    if (flags.command || flags.script) throw new MaestroError('BAD_INPUT', `--command and --script do not apply to --provider ${flags.provider}.`);
    provider = { kind: flags.provider };
  }
  checkProvider(provider);
  return provider;
}

/**
 * `--script`, resolved here (where the person typed it): a file that is not there would fail only at the project's
 * first task. A relative path is this folder's, as any path typed; the help calls the script a file in the
 * repository, so one given from the repository's top (`.maestro/script.yaml`, typed elsewhere) is named in the refusal.
 */
function scriptFile(path: string, repoPath?: string): string {
  const file = resolve(path);
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat?.isFile()) return file;
  const inRepo = repoPath && !isAbsolute(path) ? resolve(repoPath, path) : null;
  const meant = inRepo && inRepo !== file && statSync(inRepo, { throwIfNoEntry: false })?.isFile() ? ` (a relative path is taken from this folder, ${process.cwd()}; the repository's is --script ${inRepo})` : '';
  throw new MaestroError('BAD_INPUT', `--script ${file} ${stat ? 'is not a file' : 'does not exist'}${meant}; nothing was registered.`);
}

/** The runner's schema, with each problem named by its dotted key; `hint` is said after them. */
export function checkProvider(provider: unknown, hint = ''): void {
  const parsed = providerConfigSchema.safeParse(provider);
  if (parsed.success) return;
  // A misspelt key with the nearest one a provider takes (`scrpt`: did you mean script?); not the list, which depends on its kind.
  const problems = parsed.error.issues.map((i) => `${['provider', ...i.path].join('.')}: ${i.message}${unknownKeysIssueNote(providerConfigSchema, i, false)}`);
  throw new MaestroError('BAD_INPUT', `Invalid provider: ${problems.join('; ')}. Nothing was saved.${hint}`, { details: { problems } });
}

/**
 * Said when `config set` leaves a provider invalid: setting provider.kind starts the provider afresh (setKey), and
 * a kind's other keys cannot be set before it, so one key at a time never gets there.
 */
const ONE_COMMAND = ` Set a provider's kind and its keys in one command, e.g. maestro project config set provider.kind command provider.command 'my-agent {prompt}'.`;

/**
 * A value as typed: JSON when it parses (numbers, booleans, arrays, objects, "quoted"), else the text itself. A number
 * too big for one (1e400) stays text: sent as JSON it would become null, and a refusal would name what no one typed.
 */
export function parseValue(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'number' && !Number.isFinite(value) ? text : value;
  } catch {
    return text;
  }
}

/**
 * A setting's value as typed (parseValue), except provider.command given as text: split into its argv as `project add
 * --command` splits it (`my-agent --fast {prompt}`), where a plain string was refused as not an array.
 */
export function settingValue(key: string, text: string): unknown {
  const value = parseValue(text);
  return key === 'provider.command' && typeof value === 'string' ? splitArgv(value) : value;
}

/** With provider.command set and provider.promptVia not, the prompt goes where `project add --command` puts it: in {prompt}'s place when the argv has one, else on stdin. */
function promptViaFromCommand(config: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const provider = config.provider as Record<string, unknown> | undefined;
  if (!keys.includes('provider.command') || keys.includes('provider.promptVia') || !Array.isArray(provider?.command)) return config;
  const promptVia = provider.command.some((a) => typeof a === 'string' && a.includes('{prompt}')) ? 'arg' : 'stdin';
  return { ...config, provider: { ...provider, promptVia } };
}

function keyPath(key: string): string[] {
  const parts = key.split('.');
  if (parts.some((p) => !p) || parts.some((p) => ['__proto__', 'constructor', 'prototype'].includes(p))) throw new MaestroError('BAD_INPUT', `"${key}" is not a dotted key such as provider.kind.`);
  return parts;
}

export function getKey(config: Record<string, unknown>, key: string): unknown {
  let node: unknown = config;
  for (const part of keyPath(key)) {
    if (!node || typeof node !== 'object' || !Object.hasOwn(node, part)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/**
 * Sets (or with `undefined` removes) a dotted key in a copy of `config`.
 * Changing `provider.kind` starts the provider afresh: the old kind's fields do not fit the new one.
 */
export function setKey(config: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(config);
  const parts = keyPath(key);
  if (key === 'provider.kind') {
    const before = copy.provider as Record<string, unknown> | undefined;
    if (value === undefined) delete copy.provider;
    else if (before?.kind !== value) copy.provider = { kind: value };
    return copy;
  }
  let node = copy;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (next === undefined || next === null) node[part] = {};
    else if (typeof next !== 'object' || Array.isArray(next)) throw new MaestroError('BAD_INPUT', `${key}: ${part} is ${JSON.stringify(next)}, not an object.`);
    node = node[part] as Record<string, unknown>;
  }
  const last = parts[parts.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

/** Saves `config`, made from `project`'s settings as read: changed since (another client), the daemon refuses it (SETTINGS_CHANGED) and keeps theirs. */
export async function saveConfig(client: ApiClient, project: Project, config: Record<string, unknown>): Promise<ProjectConfigResponse> {
  if (config.provider !== undefined) checkProvider(config.provider, ONE_COMMAND);
  return client.request<ProjectConfigResponse>('PATCH', `/api/projects/${encodeURIComponent(project.id)}`, { body: { config, basedOn: project.config } });
}

/** The answer to a saved change: what a change of auto-approval means for the tasks at a gate (core/autoApproval.ts), and why its tasks could not run with it. */
function savedLine(said: string, { autoApproval, cannotRun }: ProjectConfigResponse): string {
  return `${autoApproval ? `${said}: ${autoApprovalSentence(autoApproval)}.` : `${said}.`}${cannotRun ? `\n${cannotRun}` : ''}`;
}

export function registerConfig(project: Command, ctx: CliContext): void {
  const config = project.command('config').description("Read and change a project's settings (dotted keys, JSON values), e.g. its agent provider.");
  const projectOpt = (cmd: Command) => withApi(cmd.option('--project <idOrName>', 'the project (default: the one holding this folder, or the only one)'));

  projectOpt(config.command('get [key]').description('Print a setting, or all of them.')).action(
    action(async (key: string | undefined, opts: ClientFlags & { project?: string }) => {
      const p = await pickProject(clientFor(opts, ctx.env), opts.project);
      const value = key ? getKey(p.config, key) : p.config;
      if (key && value === undefined) throw new MaestroError('NOT_FOUND', `Project ${p.name} has no setting ${key}.`);
      if (opts.json) return printJson(key ? { project: p.id, key, value } : { project: p.id, config: value });
      print(typeof value === 'string' ? value : JSON.stringify(value, null, 2));
    }),
  );

  projectOpt(
    config
      .command('set <key> <value> [more...]')
      .description('Set one or more settings: key value [key value …]. Values are JSON when they parse, else text.')
      // The daemon's list (daemon/projectSettings.ts SETTINGS_KEYS), which a refusal of an unknown key names too.
      .addHelpText('after', "\nSettings: provider (provider.kind, provider.command, provider.promptVia, provider.env, provider.script; docs/agents.md), baseBranch, remote, keepBranches, passEnv, autoApproveAfterMs, autoReplyAfterMs, autoReply.\nChecks, limits and model tiers are the repository's own: its .maestro/config.json (maestro init writes one)."),
  ).action(
    action(async (key: string, value: string, more: string[], opts: ClientFlags & { project?: string }) => {
      if (more.length % 2) throw new MaestroError('BAD_INPUT', `"${more[more.length - 1]}" has no value: give key value pairs.`);
      const client = clientFor(opts, ctx.env);
      const p = await pickProject(client, opts.project);
      let next = p.config;
      const pairs = [key, value, ...more];
      for (let i = 0; i < pairs.length; i += 2) next = setKey(next, pairs[i]!, settingValue(pairs[i]!, pairs[i + 1]!));
      next = promptViaFromCommand(next, pairs.filter((_, i) => i % 2 === 0));
      const answer = await saveConfig(client, p, next);
      if (opts.json) return printJson(answer);
      print(savedLine(`Saved ${pairs.filter((_, i) => i % 2 === 0).join(', ')} for project ${answer.project.name}`, answer));
    }),
  );

  projectOpt(config.command('unset <key>').description('Remove a setting.')).action(
    action(async (key: string, opts: ClientFlags & { project?: string }) => {
      const client = clientFor(opts, ctx.env);
      const p = await pickProject(client, opts.project);
      if (getKey(p.config, key) === undefined) throw new MaestroError('NOT_FOUND', `Project ${p.name} has no setting ${key}.`);
      const answer = await saveConfig(client, p, setKey(p.config, key, undefined));
      if (opts.json) return printJson(answer);
      print(savedLine(`Removed ${key} from project ${answer.project.name}`, answer));
    }),
  );
}
