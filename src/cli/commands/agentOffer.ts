/**
 * What `maestro project add` offers: the agent tools the daemon's workers can
 * run (GET /api/agents), the ones ready to use first, each with how it was
 * told, and the tools that are not installed on one line.
 */
import type { AgentToolStatus } from '../../agents/detect.js';
import { shellWord } from '../../core/diffGateWays.js';
import type { Project } from '../../core/types.js';
import type { ApiClient } from '../../api/client.js';
import { table } from './common.js';
import type { AgentList } from '../../api/wire/responses.js';

/** The provider kinds worth offering, best first: installed and logged in, then installed. */
export function usableAgents(agents: AgentToolStatus[]): AgentToolStatus[] {
  const rank = (a: AgentToolStatus) => (a.loggedIn ? 0 : 1);
  return agents.filter((a) => a.installed).sort((a, b) => rank(a) - rank(b));
}

export function describeAgentChoices(agents: AgentToolStatus[], hint: string): string {
  const usable = usableAgents(agents);
  const missing = agents.filter((a) => !a.installed).map((a) => a.kind);
  const rows = usable.map((a) => [`  ${a.kind}`, a.name, a.loggedIn ? `ready (${a.detail})` : `installed, not logged in: ${a.detail}`]);
  return [
    usable.length ? 'Agent tools the daemon can run:' : 'No agent tool is installed where the daemon runs.',
    ...(rows.length ? [table(rows).trimEnd()] : []),
    ...(missing.length ? [`  not installed: ${missing.join(', ')}`] : []),
    hint,
  ].join('\n');
}

/**
 * After `project add`: without --provider, the tools to choose from; with one, a
 * warning when the daemon cannot run it yet. Null when there is nothing to say,
 * or the daemon does not answer GET /api/agents (an older daemon).
 */
export async function agentOffer(client: ApiClient, project: Project, chosen: string | null): Promise<string | null> {
  let agents: AgentToolStatus[];
  try {
    agents = (await client.get<AgentList>('/api/agents')).agents;
  } catch {
    return null;
  }
  if (!chosen) return describeAgentChoices(agents, `Give it one: maestro project config set provider.kind <kind> --project ${shellWord(project.name)} (docs/agents.md).`);
  const tool = agents.find((a) => a.kind === chosen);
  if (!tool || (tool.installed && tool.loggedIn !== false)) return null;
  return `Note: ${tool.name} ${tool.installed ? 'is not logged in' : 'is not installed'} where the daemon runs: ${tool.detail}`;
}
