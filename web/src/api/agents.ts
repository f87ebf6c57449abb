/**
 * GET /api/agents (src/api/routes/agents.ts): the agent tools the daemon's
 * workers can run and whether each is logged in. The shape is the server's
 * own (a type-only import: nothing of the server is bundled).
 */
import { request } from './client.js';
import type { AgentToolStatus } from '../../../src/agents/detect.js';

export type { AgentToolStatus };

export const agents = {
  list: async (): Promise<AgentToolStatus[]> => (await request<{ agents: AgentToolStatus[] }>('GET', '/api/agents')).agents,
};
