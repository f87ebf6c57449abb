/**
 * A project's settings as the daemon stores them (`project.config`, set by
 * `POST /api/projects` and `PATCH /api/projects/:id`): which agent runs its
 * tasks, where its branches come from, the demo's self-approval. Validated with
 * the schema the runner uses (providerConfigSchema) when they are saved, so a
 * bad provider is a 400 at once instead of a task that needs attention later.
 *
 * A provider is code execution (a `command` provider runs any argv), and
 * auto-approval merges work no person looked at: every settings change is an
 * event naming who made it and from where, and these in full (`settingsChange`).
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { UNATTENDED_KEYS } from '../core/autoApproval.js';
import { MaestroError } from '../core/errors.js';
import { CONTROL } from '../core/schemas.js';
import { ENV_NAME_PATTERN, isDaemonSecret } from '../lib/agentEnv.js';
import { providerConfigSchema } from '../executor/protocol/job.js';

/** A wait: a whole number of milliseconds, 0 or more. A refusal names the value given, cut to 40 characters. */
const notMilliseconds = (issue: { input?: unknown }) => `${shown(issue.input)} is not a whole number of milliseconds, 0 or more`;
const milliseconds = z.number({ error: notMilliseconds }).int({ error: notMilliseconds }).nonnegative({ error: notMilliseconds });

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

export const projectSettingsSchema = z
  .object({
    provider: providerConfigSchema.optional(),
    /** The branch tasks start from and merge into. */
    baseBranch: z.string().min(1).max(250).regex(/^(?!-)[A-Za-z0-9._/-]+$/, 'a branch name: letters, digits, . _ / -').optional(),
    /** A shared remote several daemons work through (README "Running on several machines"). */
    remote: z
      .string()
      .min(1)
      .max(4096)
      // git takes a leading - for an option; ext:: runs a command (git refuses it by default: so does this).
      .refine((r) => !r.startsWith('-') && !/^ext::/i.test(r) && !CONTROL.test(r), 'a git URL or path (not starting with -, no ext::, no control characters)')
      .optional(),
    /** Approve a gate by itself after this long (the demo), for tasks that reach it from then on (core/autoApproval.ts). */
    autoApproveAfterMs: milliseconds.optional(),
    /** Answer a clarifying question by itself after this long, with `autoReply`. */
    autoReplyAfterMs: milliseconds.optional(),
    autoReply: z.string().max(10_000).optional(),
    /** Keep a merged task's `maestro/*` branch. */
    keepBranches: z.boolean().optional(),
    /** Environment variables the project's agents, checks and hooks may see (names, or `PREFIX_*`). */
    passEnv: z
      .array(
        z
          .string()
          .regex(ENV_NAME_PATTERN, 'an environment variable name, or a prefix ending in *')
          .refine((name) => !isDaemonSecret(name), { error: (issue) => `${String(issue.input)} is the daemon's own secret and never passes to agents, checks or hooks; give the project's tools their own` }),
      )
      .max(200)
      .optional(),
    demo: z.boolean().optional(),
  })
  .strict();

export type ProjectSettings = z.infer<typeof projectSettingsSchema>;

/** Validates settings about to be stored; a bad one is a 400 naming every field that is wrong. */
/** Settings a repository keeps in its own .maestro/ (executor/projectConfig.ts), which the daemon does not store. */
const REPOSITORY_KEYS = ['checks', 'limits', 'models', 'mergeStrategy', 'hooks'];

/** The keys a person sets (`demo` is the demo's own mark): what a refusal of an unknown key names, as `project config set --help` does. */
export const SETTINGS_KEYS = Object.keys(projectSettingsSchema.shape).filter((k) => k !== 'demo');

export function parseProjectSettings(raw: unknown, where = 'config'): Record<string, unknown> {
  const parsed = projectSettingsSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${[where, ...i.path].join('.')}: ${i.message}`);
    // A key that belongs in the repository: say where it goes, not only that it is unknown here.
    const unknown = parsed.error.issues.flatMap((i) => (i.code === 'unrecognized_keys' && i.path.length === 0 ? i.keys : []));
    const theirs = unknown.filter((k) => REPOSITORY_KEYS.includes(k));
    const named = theirs.length > 1 ? `${theirs.slice(0, -1).join(', ')} and ${theirs.at(-1)}` : theirs[0];
    const hint = theirs.length
      ? ` ${named} ${theirs.length > 1 ? 'are' : 'is'} the repository's own: set ${theirs.length > 1 ? 'them' : 'it'} in its .maestro/config.json and commit it (maestro init writes one).`
      : unknown.length ? ` A project's settings are ${SETTINGS_KEYS.join(', ')}; its checks, limits and models are in its repository's .maestro/config.json.` : '';
    throw new MaestroError('BAD_INPUT', `Invalid project settings: ${problems.join('; ')}. Nothing was saved.${hint}`, { details: { problems } });
  }
  return raw as Record<string, unknown>;
}

/** The project's `passEnv`, read leniently (settings stored before validation existed may lack it). */
export function passEnvOf(config: Record<string, unknown>): string[] {
  const list = config.passEnv;
  return Array.isArray(list) ? list.filter((n): n is string => typeof n === 'string' && ENV_NAME_PATTERN.test(n)) : [];
}

/**
 * Keys whose change runs other code (the provider, the env it sees, the remote it fetches from) or lets work through
 * without a person (core/autoApproval.ts UNATTENDED_KEYS: a gate approved, a question answered, decisions promoted).
 */
const CODE_KEYS = ['provider', 'passEnv', 'remote', ...UNATTENDED_KEYS] as const;

/** What a settings change altered, for its event: every changed key, and the sensitive ones (`code`) in full. */
export function settingsChange(before: Record<string, unknown>, after: Record<string, unknown>): { changed: string[]; code: Record<string, { before: unknown; after: unknown }> } {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const changed = [...keys].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k])).sort();
  const code: Record<string, { before: unknown; after: unknown }> = {};
  for (const k of CODE_KEYS) if (changed.includes(k)) code[k] = { before: before[k] ?? null, after: after[k] ?? null };
  return { changed, code };
}

/** What an `env` value looks like in API answers and events: names shown, values never. */
export const MASKED = '***';

/** A provider's `env` values may be keys: answers and events show their names only (every `env` object, at any depth). */
export function maskSecrets<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === 'env' && v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).map((k) => [k, MASKED])) : v))) as T;
}

/**
 * Settings read from the API come back masked (`"API_KEY": "***"`) when a client edits and saves them: a masked
 * value keeps what is stored under the same name (a name the stored settings do not have is a 400, never a
 * stored "***").
 */
export function restoreMasked(config: Record<string, unknown>, before: Record<string, unknown>, where = 'config'): Record<string, unknown> {
  const walk = (node: unknown, old: unknown, path: string[]): unknown => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
    const prior = old && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : {};
    return Object.fromEntries(
      Object.entries(node as Record<string, unknown>).map(([k, v]) => {
        if (path.at(-1) !== 'env' || v !== MASKED) return [k, walk(v, prior[k], [...path, k])];
        if (typeof prior[k] !== 'string') throw new MaestroError('BAD_INPUT', `${[where, ...path, k].join('.')} is "${MASKED}", a masked value, but no value is stored under that name: give the value itself. Nothing was saved.`);
        return [k, prior[k]];
      }),
    );
  };
  return walk(config, before, []) as Record<string, unknown>;
}

/**
 * A change replaces the whole settings object, made from settings a client read (the board's box, the CLI's
 * `config set`): settings changed since, by another client or daemon, would be undone without a word. So
 * `basedOn` (what the client read, as GET answers it: `env` values masked) must still be what is stored, and
 * what the route checked the change against (`checked`, read before its git and file checks) still what the
 * transaction sees; else SETTINGS_CHANGED, naming the keys, and nothing is saved. No `basedOn`: the second check only.
 */
export function refuseChangedSettings(project: { name: string; config: Record<string, unknown> }, checked: Record<string, unknown>, basedOn: Record<string, unknown> | undefined): void {
  const stored = project.config;
  const [from, now] = basedOn !== undefined ? [basedOn, maskSecrets(stored)] : [checked, stored];
  if (isDeepStrictEqual(from, now) && isDeepStrictEqual(checked, stored)) return;
  const keys = [...new Set([...Object.keys(from), ...Object.keys(now)])].filter((k) => !isDeepStrictEqual(from[k], now[k])).sort();
  throw new MaestroError(
    'SETTINGS_CHANGED',
    `The settings of project ${project.name} changed since this change was made from them${keys.length ? ` (${keys.join(', ')})` : ''}: nothing was saved, so that change is kept. Read them again (maestro project config get --project ${project.name}, or reload the board) and make yours on what is stored now.`,
    { details: { keys } },
  );
}
