/**
 * Entry points used by the CLI and the daemon: open an ObserverSession for the
 * located transcript, and `observeOnce` — one pass without the UI (read the
 * transcript, update bundle and index, run retrieval and any due curation).
 */
import type { CurateFn } from './curation/curator.js';
import type { ObserverConfig } from './config.js';
import type { ObserverEvents } from './events.js';
import { observerAgentSeams } from './agent/config.js';
import { excludeSessionBundles } from './bundle/gitExclude.js';
import { loadBundle } from './bundle/store.js';
import { checkWikiRoot, locateSession, SESSION_ID, type SessionFile } from './paths.js';
import { wikiLayout } from '../knowledge/format/wiki/layout.js';
import { ObserverSession, type StepResult } from './session.js';
import type { SummarizeFn } from './summary/orchestrator.js';
import type { SessionView } from './view.js';

export interface OpenSessionOptions {
  session?: string;
  restore?: boolean;
  /** The person confirmed taking over a wiki (or bundle) written for another workspace root. */
  adoptWiki?: boolean;
  summarize?: SummarizeFn;
  curate?: CurateFn;
  events?: ObserverEvents;
  now?: () => number;
}

/** Restore mode only needs the bundle: a session whose transcript is gone still opens by id. */
function locateForRestore(config: ObserverConfig, session: string | undefined): SessionFile | null {
  if (!session || !SESSION_ID.test(session)) return null;
  const bundle = loadBundle(wikiLayout(config.wikiRoot), session, { workspaceRoot: config.workspaceRoot }).bundle;
  return bundle ? { sessionId: session, path: bundle.meta.jsonlPath, mtimeMs: bundle.meta.jsonlMtime } : null;
}

/** Injected seams win (tests, the daemon); else the configured agent's; else none (deterministic). */
function seamsFor(config: ObserverConfig, opts: OpenSessionOptions): { summarize?: SummarizeFn; curate?: CurateFn } {
  const fromAgent = config.agent && !opts.restore ? observerAgentSeams(config.agent, config.workspaceRoot) : null;
  const summarize = opts.summarize ?? fromAgent?.summarize;
  const curate = opts.curate ?? fromAgent?.curate;
  return { ...(summarize ? { summarize } : {}), ...(curate ? { curate } : {}) };
}

export function openObserverSession(config: ObserverConfig, opts: OpenSessionOptions = {}): ObserverSession {
  checkWikiRoot(config.wikiRoot, config.env);
  // Before the first bundle is written: it holds the person's prompts (bundle/gitExclude.ts).
  excludeSessionBundles(config.wikiRoot);
  const file =
    (opts.restore ? locateForRestore(config, opts.session ?? config.env.FLOW_SESSION_ID) : null) ??
    locateSession({ env: config.env, workspaceRoot: config.workspaceRoot, cwd: config.cwd, ...(opts.session ? { session: opts.session } : {}) });
  return new ObserverSession({
    sessionId: file.sessionId,
    jsonlPath: file.path,
    wikiRoot: config.wikiRoot,
    workspaceRoot: config.workspaceRoot,
    projectSlug: config.projectSlug,
    mode: opts.restore ? 'restore' : 'live',
    legacyPerTurn: config.legacyPerTurn,
    ...(opts.adoptWiki ? { adoptWiki: true } : {}),
    eligibleIntents: config.eligibleIntents,
    ...seamsFor(config, opts),
    ...(opts.events ? { events: opts.events } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
}

export async function observeOnce(config: ObserverConfig, opts: OpenSessionOptions = {}): Promise<{ view: SessionView; step: StepResult }> {
  const session = openObserverSession(config, opts);
  session.readOnce();
  const step = await session.step();
  return { view: session.view(), step };
}
