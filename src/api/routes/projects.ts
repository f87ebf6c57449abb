/** /api/projects: register a repository, list and show projects. */
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import { projectInputSchema } from '../../core/schemas.js';
import type { ApiDeps } from '../server.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { idParam } from './schemas.js';

/** A project's repository must be an existing git work tree, given as an absolute path. */
export function checkRepoPath(repoPath: string): string {
  if (!isAbsolute(repoPath)) throw new MaestroError('BAD_INPUT', `repoPath must be absolute, got "${repoPath}".`);
  const path = resolve(repoPath);
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new MaestroError('BAD_INPUT', `repoPath ${path} is not a directory.`);
  if (!existsSync(join(path, '.git'))) throw new MaestroError('BAD_INPUT', `repoPath ${path} is not a git repository (no .git). Run git init there first.`);
  return path;
}

export function registerProjectRoutes(app: FastifyInstance, doc: OpenApiDoc, { store }: ApiDeps): void {
  defineRoute(app, doc, { method: 'GET', url: '/api/projects', summary: 'List projects', tags: ['projects'] }, async () => ({ projects: await store.projects.list() }));

  defineRoute(app, doc, { method: 'POST', url: '/api/projects', summary: 'Register a git repository as a project', tags: ['projects'], body: projectInputSchema, status: 201 }, async ({ body }) => {
    const repoPath = checkRepoPath(body.repoPath);
    return { project: await store.projects.create({ ...body, repoPath }) };
  });

  defineRoute(app, doc, { method: 'GET', url: '/api/projects/:id', summary: 'Show a project with its task counts', tags: ['projects'], params: idParam }, async ({ params }) => {
    const project = await store.projects.get(params.id);
    return { project, tasksByStatus: await store.metrics.tasksByStatus(project.id) };
  });

  defineRoute(
    app,
    doc,
    { method: 'PATCH', url: '/api/projects/:id', summary: "Replace a project's configuration", tags: ['projects'], params: idParam, body: z.object({ config: z.record(z.string(), z.unknown()) }).strict() },
    async ({ params, body }) => ({ project: await store.projects.updateConfig(params.id, body.config) }),
  );
}
