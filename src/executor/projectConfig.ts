/**
 * The project's own settings in `<repo>/.maestro/config.json` (or
 * `config.yaml`): the checks the executor runs, limits, model tiers, the merge
 * strategy. A bad file is refused with its path and the field.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { MaestroError } from '../core/errors.js';
import { checkSchema, limitsSchema, type CheckConfig, type Limits } from './protocol/job.js';

const projectConfigSchema = z.object({
  /** Either a list of checks or a map name → command line. */
  checks: z.union([z.array(checkSchema), z.record(z.string(), z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]))]).optional(),
  limits: limitsSchema.partial().optional(),
  models: z.object({ hard: z.string().min(1), medium: z.string().min(1), easy: z.string().min(1) }).partial().strict().optional(),
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
  let raw: unknown;
  try {
    const text = readFileSync(source, 'utf8');
    raw = source.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new MaestroError('CONFIG_INVALID', `${source} cannot be parsed: ${(err as Error).message}`, { cause: err, details: { file: source } });
  }
  const parsed = projectConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new MaestroError('CONFIG_INVALID', `${source}: ${problems.join('; ')}`, { details: { file: source, problems } });
  }
  const c = parsed.data;
  const checks = Array.isArray(c.checks) ? c.checks : Object.entries(c.checks ?? {}).map(([name, command]) => checkSchema.parse({ name, command }));
  return { checks, limits: c.limits ?? {}, models: c.models ?? {}, mergeStrategy: c.mergeStrategy ?? 'merge', source };
}
