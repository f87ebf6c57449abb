/**
 * Where things are: the wiki root (FORMATS §8.1), the workspace root and the
 * project slug (§8.2, §8.4), and the Claude Code transcript of a session
 * (§8.8). Resolved once from an env object and a cwd, then passed down.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { claudeConfigDir, wikiDirFromEnv, wikiDirVariable } from '../config/env.js';
import { MaestroError } from '../core/errors.js';
import { openRegular } from '../lib/regularFile.js';

export type Env = Record<string, string | undefined>;

export function resolveWikiRoot(env: Env, cwd = process.cwd()): string {
  return wikiDirFromEnv(env, cwd) ?? resolve(cwd, 'wiki');
}

/** git top-level of realpath(FLOW_PROJECT_DIR || FLOW_ROOT_DIR || cwd); the realpath itself outside a repository. */
export function resolveWorkspaceRoot(env: Env, cwd = process.cwd()): string {
  const base = resolve(cwd, env.FLOW_PROJECT_DIR || env.FLOW_ROOT_DIR || '.');
  let real = base;
  try {
    real = realpathSync(base);
  } catch {
    return base;
  }
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: real, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || real;
  } catch {
    return real;
  }
}

// The slug is read by knowledge too (scope filters), so it lives with the wiki format.
export { resolveProjectSlug } from '../knowledge/format/wiki/paths.js';

/**
 * Claude Code's folder name for a project under `projects/`: the path with
 * every character that is not an ASCII letter or digit replaced by `-`
 * (`/home/a/my_repo.v2` → `-home-a-my-repo-v2`; spaces, `_`, `.`, and each
 * non-ASCII character become one `-` each). This is what Claude Code writes
 * (its folders for paths with spaces, underscores and CJK/Cyrillic names show
 * it; tools that only replaced `/` and `.` missed those sessions). GUI-Anything
 * replaces only `/`, `.` and `_`.
 */
export function encodeProjectPath(path: string): string {
  return path.replace(/[^a-zA-Z0-9]/g, '-');
}

/** Claude Code shortens very long folder names; past this length a folder that starts the same is accepted. */
const LONG_NAME = 200;

/**
 * The project folders Claude Code may have used for this workspace: it names
 * the folder after the directory `claude` was started in, which is usually the
 * repository's top level (the workspace root) but may be the cwd or its
 * realpath (when inside the workspace). Only folders that exist are returned,
 * workspace root first.
 */
export function claudeProjectDirs(env: Env, workspaceRoot: string, cwd = process.cwd()): string[] {
  const base = claudeProjectsDir(env);
  const paths = [workspaceRoot];
  // Only a cwd inside this workspace names one of its folders (FLOW_PROJECT_DIR may point elsewhere).
  const inside = (p: string) => p === workspaceRoot || p.startsWith(`${workspaceRoot}/`);
  let real = cwd;
  try {
    real = realpathSync(cwd);
  } catch {
    // cwd gone: the others are enough
  }
  for (const p of [cwd, real]) if (inside(p)) paths.push(p);
  const out: string[] = [];
  for (const name of new Set(paths.map(encodeProjectPath))) {
    const dir = join(base, name);
    if (isDirectory(dir)) out.push(dir);
    else if (name.length > LONG_NAME) {
      try {
        for (const d of readdirSync(base)) if (d.startsWith(name.slice(0, LONG_NAME)) && isDirectory(join(base, d))) out.push(join(base, d));
      } catch {
        // no projects folder yet
      }
    }
  }
  return [...new Set(out)];
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The wiki root must be a folder (or not exist yet: it is created). A file, or
 * a path under a file, is refused here with the variable that put it there,
 * instead of an `ENOTDIR` from deep inside a write.
 */
export function checkWikiRoot(wikiRoot: string, env: Env): void {
  const source = wikiDirVariable(env) ?? null;
  let at = wikiRoot;
  for (;;) {
    let st;
    try {
      st = statSync(at);
    } catch {
      const up = dirname(at);
      if (up === at) return;
      at = up;
      continue;
    }
    if (st.isDirectory()) return;
    const where = at === wikiRoot ? `${wikiRoot} is a file` : `${at} is a file, so ${wikiRoot} cannot be a folder`;
    const fix = source ? `point ${source} at a folder (created if missing)${source === 'FLOW_WIKI_DIR' ? ', or unset it to use ./wiki' : ''}` : `move that file away or set FLOW_WIKI_DIR to a folder`;
    throw new MaestroError('BAD_INPUT', `The observer wiki must be a folder: ${where}. Fix: ${fix}.`);
  }
}

export function claudeProjectsDir(env: Env): string {
  return join(claudeConfigDir(env), 'projects');
}

const HEAD_BYTES = 8 * 1024;
const TAIL_BYTES = 4 * 1024;

/** Whether a transcript holds a user line in its first 8 KiB or last 4 KiB (cheap: two reads). */
export function hasUserLine(path: string): boolean {
  const fd = openRegular(path);
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(HEAD_BYTES, size));
    readSync(fd, head, 0, head.length, 0);
    if (head.includes('"type":"user"')) return true;
    if (size <= HEAD_BYTES) return false;
    const tail = Buffer.alloc(Math.min(TAIL_BYTES, size));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    return tail.includes('"type":"user"');
  } finally {
    closeSync(fd);
  }
}

/**
 * A session id as the wiki keeps it, in `sessions/<id>/`: Claude Code's are UUIDs, Maestro's run ids letters,
 * digits and `-` (the API reads `/api/observer/sessions/:id` with the same rule). The id of a transcript is its
 * file's name: one named `...jsonl` was session `..`, and its bundle, a person's prompts and answers, was written
 * as `wiki/bundle.json`, outside the sessions folder.
 */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function sessionIdProblem(id: string, given: string): MaestroError {
  return new MaestroError('BAD_INPUT', `--session ${given}: "${id}" cannot be a session id (up to 128 letters, digits, ".", "_" and "-", starting with a letter or digit); the wiki keeps a session in sessions/<id>/. Rename the transcript, or pass another.`);
}

export interface SessionFile {
  sessionId: string;
  path: string;
  mtimeMs: number;
}

export function listSessionFiles(projectDir: string): SessionFile[] {
  if (!existsSync(projectDir)) return [];
  const out: SessionFile[] = [];
  for (const name of readdirSync(projectDir)) {
    // Subagent transcripts (`agent-*.jsonl`) belong to the session that started them, never a session of their own.
    if (!name.endsWith('.jsonl') || name.startsWith('agent_') || name.startsWith('agent-')) continue;
    // A name Claude Code does not write (`...jsonl`) is no session: its id would lead the bundle out of sessions/.
    const sessionId = name.slice(0, -'.jsonl'.length);
    if (!SESSION_ID.test(sessionId)) continue;
    const path = join(projectDir, name);
    try {
      out.push({ sessionId, path, mtimeMs: statSync(path).mtimeMs });
    } catch {
      // vanished between readdir and stat
    }
  }
  return out.sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/** Maestro's own runs keep their transcripts at `.workflow/sessions/<sid>/runs/<rid>/transcript.jsonl`. */
export function findRunTranscript(workspaceRoot: string, runId: string): string | null {
  const sessions = join(workspaceRoot, '.workflow', 'sessions');
  if (!existsSync(sessions)) return null;
  for (const sid of readdirSync(sessions)) {
    const candidate = join(sessions, sid, 'runs', runId, 'transcript.jsonl');
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

export interface SessionLocator {
  env: Env;
  workspaceRoot: string;
  /** Where `maestro observe` runs (a project folder may be named after it); default process.cwd(). */
  cwd?: string;
  /** An id, a path to a .jsonl, or a Maestro run id; else FLOW_SESSION_ID; else the newest. */
  session?: string;
}

/**
 * The newest transcript with a user line across the project's folders: one
 * readdir and one stat per file, then the head/tail check on the newest ones
 * only until one qualifies (bench: 1,000 transcripts, see bench/observer.ts).
 */
export function newestSession(projectDirs: readonly string[]): SessionFile | null {
  const files = projectDirs.flatMap((d) => listSessionFiles(d)).sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const file of files) {
    try {
      if (hasUserLine(file.path)) return file;
    } catch {
      // vanished or unreadable: the next newest
    }
  }
  return null;
}

/** Picks the transcript to observe; a clear error says where it looked when there is none. */
export function locateSession(opts: SessionLocator): SessionFile {
  const env = opts.env;
  const dirs = claudeProjectDirs(env, opts.workspaceRoot, opts.cwd);
  const projectDir = dirs[0] ?? join(claudeProjectsDir(env), encodeProjectPath(opts.workspaceRoot));
  const wanted = opts.session ?? env.FLOW_SESSION_ID;
  if (wanted) {
    const asPath = resolve(opts.cwd ?? process.cwd(), wanted);
    if (wanted.endsWith('.jsonl') || wanted.includes('/') || isDirectory(asPath)) {
      if (!existsSync(asPath)) throw new MaestroError('BAD_INPUT', `No transcript at ${asPath}.`);
      if (isDirectory(asPath)) {
        throw new MaestroError('BAD_INPUT', `--session ${wanted}: ${asPath} is a folder, not a transcript. Pass a session id, or the path of a .jsonl file (this project's are in ${projectDir}).`);
      }
      const id = basename(asPath) === 'transcript.jsonl' ? basename(resolve(asPath, '..')) : basename(asPath, '.jsonl');
      if (!SESSION_ID.test(id)) throw sessionIdProblem(id, wanted);
      return { sessionId: id, path: asPath, mtimeMs: statSync(asPath).mtimeMs };
    }
    if (!SESSION_ID.test(wanted)) throw sessionIdProblem(wanted, wanted);
    for (const dir of dirs) {
      const inProject = join(dir, `${wanted}.jsonl`);
      if (existsSync(inProject)) return { sessionId: wanted, path: inProject, mtimeMs: statSync(inProject).mtimeMs };
    }
    const run = findRunTranscript(opts.workspaceRoot, wanted);
    if (run) return { sessionId: wanted, path: run, mtimeMs: statSync(run).mtimeMs };
    throw new MaestroError('BAD_INPUT', `Session "${wanted}" not found: looked for ${join(projectDir, `${wanted}.jsonl`)} and for a Maestro run transcript under ${join(opts.workspaceRoot, '.workflow', 'sessions')}.`);
  }
  const newest = newestSession(dirs);
  if (newest) return newest;
  // Transcripts there but none taken: say so, or a person looking at the folder sees files and an error saying there are none.
  const there = dirs.flatMap((d) => listSessionFiles(d)).length;
  const none = there ? ` (${there} transcript${there === 1 ? '' : 's'} there, none with a {"type":"user"} line in its first 8 KiB or last 4 KiB)` : '';
  throw new MaestroError('BAD_INPUT', `No Claude Code session with a user line in ${projectDir}${none}; start \`claude\` in ${opts.workspaceRoot}, or pass --session <id|path> or set FLOW_SESSION_ID.`);
}
