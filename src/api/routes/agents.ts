/**
 * GET /api/agents: which agent tools the daemon's workers can run (on PATH)
 * and whether each is logged in, for the board's settings and `project add`.
 * Read-only; it names executables and credential files, never their contents.
 */
import type { FastifyInstance } from 'fastify';
import { CREDENTIAL_ENV } from '../../agents/credentials.js';
import { detectAgents } from '../../agents/detect.js';
import { processAgentEnv } from '../../lib/agentEnv.js';
import type { ApiDeps } from '../deps.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { agentListResponse } from '../wire/responses.js';

export function registerAgentRoutes(app: FastifyInstance, doc: OpenApiDoc, deps: ApiDeps): void {
  defineRoute(
    app,
    doc,
    { method: 'GET', url: '/api/agents', summary: 'Agent tools (claude, codex, gemini, cursor, opencode): installed, logged in', tags: ['agents'], response: agentListResponse },
    // What the workers would see: the daemon passes its workers' allowlist; a bare API (tests) builds the same.
    async () => ({ agents: await detectAgents(deps.agentEnv ?? processAgentEnv({ credentials: Object.values(CREDENTIAL_ENV).flat() })) }),
  );
}
