/**
 * Bodies generated with fast-check against every writing route: the API never
 * answers 5xx, and a 4xx changes nothing in the store.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';

async function snapshot(d: TestDaemon) {
  const out: Record<string, unknown[]> = {};
  for (const t of ['projects', 'tasks', 'runs', 'approvals', 'events']) out[t] = await d.store.db.all(`SELECT * FROM ${t} ORDER BY 1`);
  return out;
}

const anyJson = fc.jsonValue({ maxDepth: 3 });
const taskish = fc.record(
  {
    projectId: fc.oneof(fc.string(), fc.constant('PID')),
    title: fc.oneof(fc.string({ maxLength: 600 }), fc.constant('')),
    complexity: fc.oneof(fc.constantFrom('easy', 'medium', 'hard'), fc.string()),
    priority: fc.oneof(fc.constantFrom(0, 1, 2), fc.integer(), fc.string()),
    deps: fc.oneof(fc.array(fc.string(), { maxLength: 3 }), anyJson),
    ownedFiles: fc.oneof(fc.array(fc.oneof(fc.string(), fc.constant('../x'), fc.constant('/etc/passwd')), { maxLength: 3 }), anyJson),
    extra: anyJson,
  },
  { requiredKeys: [] },
);

describe('API under generated input', () => {
  let d: TestDaemon;
  let projectId: string;
  let taskId: string;
  beforeAll(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const p = await d.store.projects.create({ name: 'fuzz', repoPath: makeRepo() });
    projectId = p.id;
    taskId = (await d.store.tasks.create({ projectId, title: 'target' })).id;
  });
  afterAll(async () => {
    await d.stop();
    removeTempDirs();
  });

  const routes = () => [
    { method: 'POST' as const, url: '/api/tasks' },
    { method: 'PATCH' as const, url: `/api/tasks/${taskId}` },
    { method: 'POST' as const, url: `/api/tasks/${taskId}/approve` },
    { method: 'POST' as const, url: `/api/tasks/${taskId}/reject` },
    { method: 'POST' as const, url: `/api/tasks/${taskId}/reply` },
    { method: 'POST' as const, url: `/api/tasks/${taskId}/inject` },
    { method: 'POST' as const, url: '/api/projects' },
    { method: 'PATCH' as const, url: `/api/projects/${projectId}` },
    { method: 'GET' as const, url: '/api/tasks' },
    { method: 'GET' as const, url: '/api/events' },
  ];

  it('never answers 5xx, and a 4xx leaves the store unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 9 }), fc.oneof(taskish, anyJson), fc.dictionary(fc.constantFrom('status', 'limit', 'after', 'q', 'projectId', 'offset', 'x'), fc.string({ maxLength: 20 }), { maxKeys: 3 }), async (i, rawBody, query) => {
        const route = routes()[i]!;
        const body = rawBody && typeof rawBody === 'object' && !Array.isArray(rawBody) && 'projectId' in rawBody && rawBody.projectId === 'PID' ? { ...rawBody, projectId } : rawBody;
        const before = await snapshot(d);
        const qs = new URLSearchParams(query as Record<string, string>).toString();
        const res = await d.app.inject({
          method: route.method,
          url: `${route.url}${route.method === 'GET' && qs ? `?${qs}` : ''}`,
          ...(route.method === 'GET' ? {} : { payload: JSON.stringify(body ?? null), headers: { 'content-type': 'application/json' } }),
        });
        expect(res.statusCode, `${route.method} ${route.url} ${res.body}`).toBeLessThan(500);
        if (res.statusCode >= 400) {
          expect(JSON.parse(res.body).error.code).toMatch(/^[A-Z_]+$/);
          expect(await snapshot(d)).toEqual(before);
        }
      }),
      { numRuns: 300 },
    );
  });
});
