/**
 * The observer's configuration, resolved once from the environment and a cwd
 * (STYLE §2) and passed to every part: where the wiki is, which workspace and
 * project this is, and the curation switches.
 */
import { curateIntentsFromEnv, legacyPerTurnFromEnv } from './curation/intent.js';
import { resolveProjectSlug, resolveWikiRoot, resolveWorkspaceRoot, type Env } from './paths.js';

export interface ObserverConfig {
  env: Env;
  cwd: string;
  wikiRoot: string;
  workspaceRoot: string;
  projectSlug: string;
  legacyPerTurn: boolean;
  eligibleIntents: ReadonlySet<string>;
}

export function resolveObserverConfig(env: Env = process.env, cwd = process.cwd()): ObserverConfig {
  return {
    env,
    cwd,
    wikiRoot: resolveWikiRoot(env, cwd),
    workspaceRoot: resolveWorkspaceRoot(env, cwd),
    projectSlug: resolveProjectSlug(env, cwd),
    legacyPerTurn: legacyPerTurnFromEnv(env),
    eligibleIntents: curateIntentsFromEnv(env),
  };
}
