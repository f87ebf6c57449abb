/**
 * Project operations: create, get (by id or name), list, archive and restore.
 *
 * Archiving keeps a project and all its history but gives it no new work: no task is created, retried or
 * claimed in it, and no run starts. It is refused while any task is in flight or waits at a gate (someone
 * must finish or cancel those first); ready and parked tasks stay as they are, for a restore. The race with
 * a claim that commits meanwhile is closed at the run's start: startRun takes the project's row lock and
 * refuses an archived project (assertActive), and archiveProject takes that row first, then looks at the
 * tasks, so either it sees the claimed task and refuses, or the run's start sees the archive.
 */
import { MaestroError } from '../../core/errors.js';
import { parseInput, projectInputSchema, type ProjectInput } from '../../core/schemas.js';
import type { Project } from '../../core/types.js';
import { shellWord } from '../../core/diffGateWays.js';
import { GATE_STATUSES, IN_FLIGHT_STATUSES } from '../../core/status.js';
import type { Queryable } from '../db.js';
import { inList } from './claim.js';
import { newId, toProject, type Row } from '../rows.js';

export async function createProject(db: Queryable, input: ProjectInput, now: number): Promise<Project> {
  const valid = parseInput(projectInputSchema, input, 'project');
  const existing = await db.one<Row>(`SELECT * FROM projects WHERE name = $1`, [valid.name]);
  if (existing) throw duplicate(valid.name, existing.archived_at);
  const project: Project = { id: newId('p'), name: valid.name, repoPath: valid.repoPath, config: valid.config, createdAt: now, updatedAt: now, archivedAt: null };
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

function duplicate(name: string, archivedAt: unknown): MaestroError {
  const hint = archivedAt === null || archivedAt === undefined ? '' : ` It is archived: \`maestro project restore ${shellWord(name)}\` brings it back.`;
  return new MaestroError('DUPLICATE_PROJECT', `A project named "${name}" already exists.${hint}`, { details: { name } });
}

/** Statuses that keep a project from being archived: a run is on it, or a person's decision is pending. */
const BUSY_STATUSES = [...IN_FLIGHT_STATUSES, ...GATE_STATUSES];

/** Archives an active project (its row locked first; see the file's comment). Returns it as it was before. */
export async function archiveProject(db: Queryable, idOrName: string, now: number): Promise<Project> {
  const before = await getProject(db, idOrName);
  const changed = await db.run(`UPDATE projects SET archived_at = $1, updated_at = $1 WHERE id = $2 AND archived_at IS NULL`, [now, before.id]);
  if (changed !== 1) throw new MaestroError('PROJECT_ARCHIVED', `Project ${before.name} is already archived.`, { details: { project: before.id } });
  const busy = await db.all<Row>(`SELECT id, status FROM tasks WHERE project_id = $1 AND status IN (${inList(BUSY_STATUSES)}) ORDER BY created_at, id LIMIT 11`, [before.id]);
  if (busy.length) {
    const named = busy.slice(0, 10).map((t) => `${String(t.id)} (${String(t.status)})`).join(', ');
    throw new MaestroError('PROJECT_BUSY',
      `Project ${before.name} has work in flight or waiting at a gate: ${named}${busy.length > 10 ? ', …' : ''}. Let it finish, or \`maestro task cancel\` it, then archive.`,
      { details: { project: before.id, tasks: busy.map((t) => ({ id: String(t.id), status: String(t.status) })) } });
  }
  return before;
}

/** Brings an archived project back: its ready tasks are claimable again. Returns it as it was before. */
export async function restoreProject(db: Queryable, idOrName: string, now: number): Promise<Project> {
  const before = await getProject(db, idOrName);
  const changed = await db.run(`UPDATE projects SET archived_at = NULL, updated_at = $1 WHERE id = $2 AND archived_at IS NOT NULL`, [now, before.id]);
  if (changed !== 1) throw new MaestroError('BAD_INPUT', `Project ${before.name} is not archived.`, { details: { project: before.id } });
  return before;
}

/**
 * Refuses new work in an archived project. `lock`: hold the project's row for the rest of the transaction
 * (a run's start), so an archive committing meanwhile waits for it, or is seen by it. On PostgreSQL a share
 * lock: run starts do not wait for one another, only an archive (an UPDATE) waits for them. A row written by
 * each start made every run start of a project, on every daemon, queue for that row (bench:multihost, three
 * daemons: 91 ms per execute's start, against 4 ms with one). SQLite's write transaction (BEGIN IMMEDIATE)
 * already keeps an archive out until it commits.
 */
export async function assertActive(db: Queryable, projectId: string, what: string, lock = false): Promise<void> {
  const share = lock && db.dialect === 'postgres' ? ' FOR SHARE' : '';
  const row = await db.one<Row>(`SELECT name, archived_at FROM projects WHERE id = $1${share}`, [projectId]);
  if (row && row.archived_at !== null && row.archived_at !== undefined) throw archivedError({ id: projectId, name: String(row.name) }, what);
}

/** PROJECT_ARCHIVED for `what` was refused, with how to bring the project back. */
export function archivedError(project: Pick<Project, 'id' | 'name'>, what: string): MaestroError {
  return new MaestroError('PROJECT_ARCHIVED', `Project ${project.name} is archived: ${what}. \`maestro project restore ${shellWord(project.name)}\` brings it back.`, { details: { project: project.id } });
}
