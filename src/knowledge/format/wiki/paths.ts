/**
 * The project slug of FORMATS §8.4 (`proj:<slug>` tags), shared by the
 * knowledge search's scope filter and the observer (observer/paths.ts
 * re-exports it with the rest of the observer's locations).
 */
import { basename, resolve } from 'node:path';

export type Env = Record<string, string | undefined>;

/** `proj:<slug>`'s slug: basename(FLOW_ROOT_DIR || FLOW_PROJECT_DIR || cwd), lowercased, `[^\w]+` → `-`, trimmed. */
export function resolveProjectSlug(env: Env, cwd = process.cwd()): string {
  const base = basename(resolve(cwd, env.FLOW_ROOT_DIR || env.FLOW_PROJECT_DIR || '.'));
  return (
    base
      .toLowerCase()
      .replace(/[^\w]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'unknown'
  );
}
