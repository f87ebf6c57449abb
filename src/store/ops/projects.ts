/** Project operations: create, get (by id or name), list. */
import { MaestroError } from '../../core/errors.js';
import { parseInput, projectInputSchema, type ProjectInput } from '../../core/schemas.js';
import type { Project } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { newId, toProject, type Row } from '../rows.js';

export async function createProject(db: Queryable, input: ProjectInput, now: number): Promise<Project> {
  const valid = parseInput(projectInputSchema, input, 'project');
  const existing = await db.one(`SELECT id FROM projects WHERE name = $1`, [valid.name]);
  if (existing) throw new MaestroError('DUPLICATE_PROJECT', `A project named "${valid.name}" already exists.`, { details: { name: valid.name } });
  const project: Project = { id: newId('p'), name: valid.name, repoPath: valid.repoPath, config: valid.config, createdAt: now, updatedAt: now };
  try {
    await db.run(`INSERT INTO projects (id, name, repo_path, config, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
      project.id, project.name, project.repoPath, JSON.stringify(project.config), now, now,
    ]);
  } catch (err) {
    // Two creators racing past the check above: the UNIQUE constraint decides.
    if (/unique|duplicate/i.test((err as Error).message)) throw new MaestroError('DUPLICATE_PROJECT', `A project named "${valid.name}" already exists.`, { cause: err });
    throw err;
  }
  return project;
}

/** By id or by name. */
export async function getProject(db: Queryable, idOrName: string): Promise<Project> {
  const row = await db.one<Row>(`SELECT * FROM projects WHERE id = $1 OR name = $1`, [idOrName]);
  if (!row) throw new MaestroError('UNKNOWN_PROJECT', `No project "${idOrName}".`, { details: { project: idOrName } });
  return toProject(row);
}

export async function listProjects(db: Queryable): Promise<Project[]> {
  return (await db.all<Row>(`SELECT * FROM projects ORDER BY created_at, id`)).map((r) => toProject(r));
}

export async function updateProjectConfig(db: Queryable, idOrName: string, config: Record<string, unknown>, now: number): Promise<Project> {
  const project = await getProject(db, idOrName);
  await db.run(`UPDATE projects SET config = $1, updated_at = $2 WHERE id = $3`, [JSON.stringify(config), now, project.id]);
  return getProject(db, project.id);
}
