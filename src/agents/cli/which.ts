/** Finding an agent CLI on PATH, under its usual name or one of its others (cursor-agent / agent). */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { CliToolSpec } from './tools.js';

export function findOnPath(name: string, env: NodeJS.ProcessEnv): string | null {
  if (name.includes('/')) return isExecutable(name) ? name : null;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first of the tool's names found on PATH, with where it is; its usual name (not found) otherwise. */
export function locateTool(spec: CliToolSpec, env: NodeJS.ProcessEnv): { name: string; path: string | null } {
  for (const name of [spec.executable, ...(spec.alternativeExecutables ?? [])]) {
    const path = findOnPath(name, env);
    if (path) return { name, path };
  }
  return { name: spec.executable, path: null };
}
