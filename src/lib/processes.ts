import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Whether a process id is running: signal 0 probes without touching it (EPERM: alive, another user's). */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * SIGKILLs the members of process group `pgid` other than those in `except`: what a
 * finished run left behind in a warm worker's group (a cold worker's group is
 * killed whole when it exits). Reads /proc, so Linux only; elsewhere it does
 * nothing and such leftovers end with the worker. Returns how many it signalled.
 */
export function killGroupMembers(pgid: number, except: number | readonly number[]): number {
  if (process.platform !== 'linux') return 0;
  const spared = new Set(typeof except === 'number' ? [except] : except);
  let killed = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || spared.has(Number(entry))) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // After "pid (name) ": state, ppid, pgrp.
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    if (pgrp !== pgid) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
      killed++;
    } catch {
      // gone meanwhile
    }
  }
  return killed;
}

/**
 * A module of ours to start as a Node process: `<name>.js` beside the caller when it runs compiled
 * (dist/), else `<name>.ts` through tsx (the sources). `cwd` is the package root, `depth` folders up
 * from the caller's, where tsx resolves from. A process running from the sources starts the compiled
 * module instead when MAESTRO_JS_ROOT names a compiled copy of src/ (tsc's output, as dist/ is) that has
 * it: the test run compiles once and sets it, since loading TypeScript through tsx costs each worker
 * about 0.7 CPU s more.
 */
export function nodeEntry(callerUrl: string, name: string, depth: number): { file: string; execArgv: string[]; cwd: string } {
  const here = dirname(fileURLToPath(callerUrl));
  const cwd = resolve(here, ...Array<string>(depth).fill('..'));
  const js = join(here, `${name}.js`);
  if (existsSync(js)) return { file: js, execArgv: [], cwd };
  const compiled = process.env.MAESTRO_JS_ROOT ? join(process.env.MAESTRO_JS_ROOT, relative(join(cwd, 'src'), here), `${name}.js`) : null;
  if (compiled && existsSync(compiled)) return { file: compiled, execArgv: [], cwd };
  return { file: join(here, `${name}.ts`), execArgv: ['--import', 'tsx'], cwd };
}

/**
 * The folders Maestro's own code runs from: the package (src/ or dist/, node_modules) and the compiled
 * copy MAESTRO_JS_ROOT names. The agent sandbox keeps them readable (Claude Code starts the knowledge
 * MCP server from them), though they may lie in the /tmp it replaces.
 */
export function maestroCodeRoots(): string[] {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  return process.env.MAESTRO_JS_ROOT ? [root, process.env.MAESTRO_JS_ROOT] : [root];
}
