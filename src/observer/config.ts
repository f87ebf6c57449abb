/**
 * The observer's configuration, resolved once from the environment and a cwd
 * (STYLE §2) and passed to every part: where the wiki is, which workspace and
 * project this is, the curation switches, and the agent (agent/config.ts).
 */
import { resolveObserverAgent, type ObserverAgentConfig, type ObserverAgentOverrides } from './agent/config.js';
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
  /** The summary and curator agent (MAESTRO_OBSERVER_AGENT, `--agent`); null: deterministic paths. */
  agent: ObserverAgentConfig | null;
}

export function resolveObserverConfig(env: Env, cwd = process.cwd(), overrides: ObserverAgentOverrides = {}): ObserverConfig {
  return {
    env,
    cwd,
    wikiRoot: resolveWikiRoot(env, cwd),
    workspaceRoot: resolveWorkspaceRoot(env, cwd),
    projectSlug: resolveProjectSlug(env, cwd),
    legacyPerTurn: legacyPerTurnFromEnv(env),
    eligibleIntents: curateIntentsFromEnv(env),
    agent: resolveObserverAgent(env, cwd, overrides),
  };
}
