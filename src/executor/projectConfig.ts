/**
 * The project's own settings in `<repo>/.maestro/config.json` (or
 * `config.yaml`): the checks the executor runs, limits, model tiers, the merge
 * strategy. A bad file is refused with its path and the field. So is a check
 * command or a model in a file that is not UTF-8 where the bad bytes fall
 * (they decode to U+FFFD: run as read, the command failed for no visible
 * reason); bytes that are not UTF-8 anywhere else (a comment) are let be.
 */
import { isUtf8 } from 'node:buffer';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { canonical, holds } from '../lib/paths.js';
import { readRegularBytes, textOf } from '../lib/regularFile.js';
import { yaml, yamlErrorWhere } from '../lib/yaml.js';
import { z } from 'zod';
import { MaestroError } from '../core/errors.js';
import { notJsonMessage } from '../lib/jsonError.js';
import { unknownKeysIssueNote } from '../lib/unknownKeys.js';
import { checkSchema, limitsSchema, modelTiersSchema, type CheckConfig, type Limits } from './protocol/job.js';

/**
 * The largest settings file read. Settings are a few KB; the file is the repository's, and the daemon reads it on
 * its request path (task create, a project's detail, the checks of a review, a merge): a 6 MB config.yaml held the
 * event loop 16 s and took 1 GB each time it was read, a larger one the daemon's memory.
 */
export const MAX_PROJECT_CONFIG_BYTES = 64 * 1024;

/** What the decoder put in for bytes that are not UTF-8. */
const REPLACEMENT = '\ufffd';

/** The problem with `value` read from a file that is not UTF-8, when the bad bytes fall in it (`at`: its place). */
function notUtf8(at: string, value: string): string[] {
  if (!value.includes(REPLACEMENT)) return [];
  const shown = value.length > 120 ? `${value.slice(0, 120)}…` : value;
  return [`${at}: holds bytes that are not UTF-8 (read as U+FFFD: ${JSON.stringify(shown)}), so it is not run or used as written; save the file as UTF-8`];
}

/** Each check's command, in a file that is not UTF-8, looked at for the bytes (`isMap`: named by the check's name). */
function commandsNotUtf8(checks: CheckConfig[], isMap: boolean): string[] {
  return checks.flatMap((c, i) => {
    const at = isMap ? `checks.${c.name}.command` : `checks.${i}.command (check ${c.name})`;
    return typeof c.command === 'string' ? notUtf8(at, c.command) : c.command.flatMap((arg, j) => notUtf8(`${at}.${j}`, arg));
  });
}

/**
 * Checks are a list, or a map name → command line: each entry is checked as a check, and a problem named by its place.
 * `utf8`: whether the file's bytes were UTF-8; when not, a command the bad bytes fall in is a problem too.
 */
function parseChecks(raw: unknown, utf8: boolean): { checks: CheckConfig[]; problems: string[] } {
  if (raw === undefined) return { checks: [], problems: [] };
  const isMap = typeof raw === 'object' && raw !== null && !Array.isArray(raw);
  const entries = isMap ? Object.entries(raw).map(([name, command]) => ({ name, command })) : raw;
  const parsed = z.array(checkSchema).safeParse(entries);
  if (parsed.success) return { checks: parsed.data, problems: utf8 ? [] : commandsNotUtf8(parsed.data, isMap) };
  const problems = parsed.error.issues.map((i) => {
    const [index, field, ...rest] = i.path;
    // In the map form a check's place is its name; its command is the value.
    const at = isMap && typeof index === 'number' ? [(entries as Array<{ name: string }>)[index]!.name, ...(field === 'command' ? rest : [])] : i.path;
    return `checks${at.length ? `.${at.join('.')}` : ''}: ${i.message}`;
  });
  return { checks: [], problems };
}

const projectConfigSchema = z.object({
  checks: z.unknown().optional(),
  limits: limitsSchema.partial().optional(),
  models: modelTiersSchema.optional(),
  mergeStrategy: z.enum(['ff-only', 'merge', 'no-ff']).optional(),
}).strict();

export interface ProjectConfig {
  checks: CheckConfig[];
  limits: Partial<Limits>;
  models: Partial<Record<'hard' | 'medium' | 'easy', string>>;
  mergeStrategy: 'ff-only' | 'merge' | 'no-ff';
  /** The file it came from, or null when the project has none. */
  source: string | null;
}

export function loadProjectConfig(repoPath: string): ProjectConfig {
  const candidates = ['config.json', 'config.yaml', 'config.yml'].map((f) => join(repoPath, '.maestro', f));
  const source = candidates.find((p) => existsSync(p)) ?? null;
  if (!source) return { checks: [], limits: {}, models: {}, mergeStrategy: 'merge', source: null };
  // A link a merged change made, to a file outside the project (a key, /proc/self/environ), is not read: the
  // parser's error would quote the start of that file in a run's error, on the board.
  if (!holds(repoPath, source)) {
    throw new MaestroError('CONFIG_INVALID', `${source} leads out of the repository (to ${canonical(source)}); a project's settings are its own files, so it was not read`, { details: { file: source } });
  }
  let raw: unknown;
  let text = '';
  let utf8 = true;
  const size = statSync(source, { throwIfNoEntry: false })?.size ?? 0;
  if (size > MAX_PROJECT_CONFIG_BYTES) {
    throw new MaestroError('CONFIG_INVALID', `${source} is ${size.toLocaleString('en-US')} bytes, more than a project's settings file may be (${MAX_PROJECT_CONFIG_BYTES.toLocaleString('en-US')}); it was not read. Keep only the settings in it.`, { details: { file: source } });
  }
  try {
    const bytes = readRegularBytes(source);
    utf8 = isUtf8(bytes);
    text = textOf(bytes);
  } catch (err) {
    throw new MaestroError('CONFIG_INVALID', `${source} cannot be read: ${(err as Error).message}`, { cause: err, details: { file: source } });
  }
  if (source.endsWith('.json')) {
    try {
      raw = JSON.parse(text);
    } catch {
      // The place only, and no cause: JSON.parse's message quotes the start of the file.
      throw new MaestroError('CONFIG_INVALID', notJsonMessage(source, text), { details: { file: source } });
    }
  } else {
    try {
      // Warnings (an unknown tag) are not printed: the package prints the line under a caret, to the worker's stderr.
      raw = yaml().parse(text, { logLevel: 'error' });
    } catch (err) {
      // The place only, and no cause, as for JSON: the package's message quotes the line under a caret. The file is
      // the project's own (a link out of it was refused above); this keeps the two formats' errors alike.
      throw new MaestroError('CONFIG_INVALID', `${source} is not valid YAML (${yamlErrorWhere(err)}).`, { details: { file: source } });
    }
  }
  const parsed = projectConfigSchema.safeParse(raw ?? {});
  // The checks are looked at when another field is wrong too: every problem at once, not one per attempt.
  const rawChecks = typeof raw === 'object' && raw !== null ? (raw as { checks?: unknown }).checks : undefined;
  const checks = parseChecks(parsed.success ? parsed.data.checks : rawChecks, utf8);
  const models = utf8 ? [] : Object.entries(parsed.data?.models ?? {}).flatMap(([tier, model]) => notUtf8(`models.${tier}`, model));
  if (!parsed.success || checks.problems.length || models.length) {
    // A misspelt key is said with the nearest one and the ones there are (`limts`: did you mean limits?), nested ones too.
    const problems = [...(parsed.error?.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}${unknownKeysIssueNote(projectConfigSchema, i)}`) ?? []), ...checks.problems, ...models];
    throw new MaestroError('CONFIG_INVALID', `${source}: ${problems.join('; ')}`, { details: { file: source, problems } });
  }
  const c = parsed.data;
  return { checks: checks.checks, limits: c.limits ?? {}, models: c.models ?? {}, mergeStrategy: c.mergeStrategy ?? 'merge', source };
}
