/**
 * Which sandbox the daemon's agents get, settled once at start (src/config/sandbox.ts has the setting):
 *   - "bwrap" by name: the sandbox, or the daemon does not start (CONFIG_INVALID, saying why and what to do);
 *   - "auto", the default: the sandbox where bwrap works here; where it does not, agents run as the user
 *     and the daemon says so, and why, wherever it reports itself (terminal, log, GET /api/health, the
 *     board's banner, `maestro doctor`);
 *   - "off": agents run as the user, by choice.
 */
import { existsSync } from 'node:fs';
import type { MaestroConfig } from '../config/config.js';
import { MaestroError } from '../core/errors.js';
import { sandboxSpecFor } from '../daemon/jobs.js';
import { socketsWarning } from '../core/daemonText.js';
import { PERL, sandboxProblem, socketScopeOf } from '../lib/sandbox.js';
import { shownProxy } from '../lib/sandboxNet/upstream.js';
import type { ObserverConfig } from '../observer/config.js';

/** How agents run in this daemon, as GET /api/health reports it. */
export interface AgentSandboxState {
  kind: 'bwrap' | 'off';
  /** Why agents run unsandboxed (null in the sandbox). */
  reason: string | null;
  /** Off though it was not chosen: the default found no working bwrap. */
  unintended: boolean;
  /** In the sandbox, why abstract sockets made outside it (an X11 display's) stay reachable; null: they do not. */
  sockets?: string | null;
  /** In the sandbox, its network (agentSandbox.network): the host's, through Maestro's proxy, or none. */
  network?: 'shared' | 'proxied' | 'none';
  /** "proxied" only: the host's own proxy that Maestro's goes through (its URL without credentials), from the daemon's HTTPS_PROXY or HTTP_PROXY. */
  upstream?: string;
}

export const SANDBOX_OFF_BY_CHOICE = 'agentSandbox is "off" (config.json or MAESTRO_AGENT_SANDBOX)';

/** The config with the sandbox this machine can give (none where "auto" finds bwrap unusable), and how agents run. */
export function settleAgentSandbox(config: MaestroConfig, env: NodeJS.ProcessEnv, perl = PERL): { config: MaestroConfig; state: AgentSandboxState } {
  if (!config.agentSandbox) return { config, state: { kind: 'off', reason: SANDBOX_OFF_BY_CHOICE, unintended: false } };
  const problem = sandboxProblem(env);
  const network = config.agentSandbox.network?.mode ?? 'shared';
  // A network of its own was asked for: agents never run on the host's network instead, which "auto" would do.
  if (problem && network !== 'shared') throw new MaestroError('CONFIG_INVALID', `agentSandbox.network is "${network}", which only the sandbox gives, but ${problem}; or set agentSandbox.network to "shared".`);
  // Every sandboxed process would fail at its start, each saying why: said once, here.
  if (network === 'proxied' && !existsSync(perl)) throw new MaestroError('CONFIG_INVALID', `agentSandbox.network is "proxied", but ${perl} is not there to run the proxy's relay inside the sandbox: install perl, or set agentSandbox.network to "none" or "shared".`);
  if (!problem) {
    // Asked once here; the answer travels in every sandbox spec (daemon/jobs.ts sandboxSpecFor), so no worker asks again.
    const sockets = socketScopeOf({ kind: 'bwrap', hide: [], readOnly: [], writable: [] }, env);
    const upstream = config.agentSandbox.network?.upstream;
    const through = upstream?.https ?? upstream?.http;
    return {
      config: { ...config, agentSandbox: { ...config.agentSandbox, sockets } },
      state: { kind: 'bwrap', reason: null, unintended: false, sockets: sockets.scoped ? null : sockets.reason, network, ...(through ? { upstream: shownProxy(through) } : {}) },
    };
  }
  // Asked for by name: agents never run without it.
  if (config.agentSandbox.required) throw new MaestroError('CONFIG_INVALID', `agentSandbox is "bwrap", but ${problem}; or set agentSandbox to "off".`);
  const reason = `${problem}; or set agentSandbox to "off" if agents are meant to run as you`;
  return { config: { ...config, agentSandbox: null }, state: { kind: 'off', reason, unintended: true } };
}

/** The daemon's start line's word on its agents, and a warning line when they run unsandboxed without having been told to. */
export function announceAgentSandbox(state: AgentSandboxState): { words: string; warning: string | null } {
  const through = state.upstream ? `, through ${state.upstream}` : '';
  if (state.kind === 'bwrap') return { words: `agents in the bwrap sandbox (network: ${state.network ?? 'shared'}${through})`, warning: state.sockets ? socketsWarning(state.sockets) : null };
  const warning = state.unintended ? `agents run as you, unsandboxed, so an agent can read what you can (the daemon's token too): ${state.reason}` : null;
  return { words: 'agents run as you, unsandboxed', warning };
}

/**
 * The observer's configuration with its agent in the sandbox, when there is one: its summaries and curation
 * read a person's sessions, which may carry instructions (in the daemon, and in `maestro observe`).
 */
export function observerIn(config: Pick<MaestroConfig, 'home' | 'agentSandbox'>, observer: ObserverConfig): ObserverConfig {
  if (!observer.agent || !config.agentSandbox) return observer;
  return { ...observer, agent: { ...observer.agent, sandbox: sandboxSpecFor(config, observer.workspaceRoot) } };
}
