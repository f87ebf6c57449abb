/**
 * Where things are: the wiki root (FORMATS §8.1), the workspace root and the
 * project slug (§8.2, §8.4), and the Claude Code transcript of a session
 * (§8.8). Resolved once from an env object and a cwd, then passed down.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { MaestroError } from '../core/errors.js';

export type Env = Record<string, string | undefined>;

export function resolveWikiRoot(env: Env = process.env, cwd = process.cwd()): string {
  if (env.FLOW_WIKI_DIR) return resolve(cwd, env.FLOW_WIKI_DIR);
  if (env.FLOW_ROOT_DIR) return resolve(cwd, env.FLOW_ROOT_DIR, 'wiki');
  if (env.FLOW_PROJECT_DIR) return resolve(cwd, env.FLOW_PROJECT_DIR, 'wiki');
  return resolve(cwd, 'wiki');
}

/** git top-level of realpath(FLOW_PROJECT_DIR || FLOW_ROOT_DIR || cwd); the realpath itself outside a repository. */
export function resolveWorkspaceRoot(env: Env = process.env, cwd = process.cwd()): string {
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

/** `proj:<slug>`'s slug: basename(FLOW_ROOT_DIR || FLOW_PROJECT_DIR || cwd), lowercased, `[^\w]+` → `-`, trimmed. */
export function resolveProjectSlug(env: Env = process.env, cwd = process.cwd()): string {
  const base = basename(resolve(cwd, env.FLOW_ROOT_DIR || env.FLOW_PROJECT_DIR || '.'));
  return (
    base
      .toLowerCase()
      .replace(/[^\w]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'unknown'
  );
}

/** Claude Code's folder name for a project: every `/`, `.`, `_` becomes `-`. */
export function encodeProjectPath(workspaceRoot: string): string {
  return workspaceRoot.replace(/[/._]/g, '-');
}

export function claudeProjectsDir(env: Env = process.env): string {
  return env.CLAUDE_CONFIG_DIR ? join(env.CLAUDE_CONFIG_DIR, 'projects') : join(homedir(), '.claude', 'projects');
}

const HEAD_BYTES = 8 * 1024;
const TAIL_BYTES = 4 * 1024;

/** Whether a transcript holds a user line in its first 8 KiB or last 4 KiB (cheap: two reads). */
export function hasUserLine(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const size = statSync(path).size;
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

export interface SessionFile {
  sessionId: string;
  path: string;
  mtimeMs: number;
}

export function listSessionFiles(projectDir: string): SessionFile[] {
  if (!existsSync(projectDir)) return [];
  const out: SessionFile[] = [];
  for (const name of readdirSync(projectDir)) {
    if (!name.endsWith('.jsonl') || name.startsWith('agent_') || name.startsWith('agent-')) continue;
    const path = join(projectDir, name);
    try {
      out.push({ sessionId: name.slice(0, -'.jsonl'.length), path, mtimeMs: statSync(path).mtimeMs });
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
  env?: Env;
  workspaceRoot: string;
  /** An id, a path to a .jsonl, or a Maestro run id; else FLOW_SESSION_ID; else the newest. */
  session?: string;
}

/** Picks the transcript to observe; a clear error says where it looked when there is none. */
export function locateSession(opts: SessionLocator): SessionFile {
  const env = opts.env ?? process.env;
  const projectDir = join(claudeProjectsDir(env), encodeProjectPath(opts.workspaceRoot));
  const wanted = opts.session ?? env.FLOW_SESSION_ID;
  if (wanted) {
    const asPath = resolve(wanted);
    if (wanted.endsWith('.jsonl') || wanted.includes('/')) {
      if (!existsSync(asPath)) throw new MaestroError('BAD_INPUT', `No transcript at ${asPath}.`);
      const id = basename(asPath) === 'transcript.jsonl' ? basename(resolve(asPath, '..')) : basename(asPath, '.jsonl');
      return { sessionId: id, path: asPath, mtimeMs: statSync(asPath).mtimeMs };
    }
    const inProject = join(projectDir, `${wanted}.jsonl`);
    if (existsSync(inProject)) return { sessionId: wanted, path: inProject, mtimeMs: statSync(inProject).mtimeMs };
    const run = findRunTranscript(opts.workspaceRoot, wanted);
    if (run) return { sessionId: wanted, path: run, mtimeMs: statSync(run).mtimeMs };
    throw new MaestroError('BAD_INPUT', `Session "${wanted}" not found: looked for ${inProject} and for a Maestro run transcript under ${join(opts.workspaceRoot, '.workflow', 'sessions')}.`);
  }
  for (const file of listSessionFiles(projectDir)) if (hasUserLine(file.path)) return file;
  throw new MaestroError('BAD_INPUT', `No Claude Code session with a user line in ${projectDir}; pass --session <id|path> or set FLOW_SESSION_ID.`);
}
