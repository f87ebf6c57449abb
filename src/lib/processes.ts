import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
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
 * A module of ours to start as a Node process, named by its path in the sources without the extension
 * (`executor/worker`). Compiled, from the tree the caller runs from (dist/): its bundle (`<module>.bundle.js`,
 * scripts/bundle.mjs) when the build made one, else tsc's `<module>.js`. From the sources, `<module>.ts`
 * through tsx, unless MAESTRO_JS_ROOT names a compiled copy of src/ that has the module: the test run
 * compiles once and sets it, since loading TypeScript through tsx costs each worker about 0.7 CPU s more.
 * The tree is found from the module, not from the caller's depth in it: the caller may be bundled into a
 * file at another depth (the worker's bundle holds the spawner). `cwd` is the package root, which holds
 * the tree, and where tsx resolves from.
 */
export function nodeEntry(callerUrl: string, module: string): { file: string; execArgv: string[]; cwd: string } {
  const tree = treeOf(dirname(fileURLToPath(callerUrl)), module);
  const roots = process.env.MAESTRO_JS_ROOT ? [tree, process.env.MAESTRO_JS_ROOT] : [tree];
  const compiled = roots.flatMap((root) => [`${module}.bundle.js`, `${module}.js`].map((file) => join(root, file))).find((file) => existsSync(file));
  if (compiled) return { file: compiled, execArgv: [], cwd: dirname(tree) };
  return { file: join(tree, `${module}.ts`), execArgv: ['--import', 'tsx'], cwd: dirname(tree) };
}

/** The folder of our modules (src/, dist/, a test build) that holds `here`: the nearest one above it that has `module`. */
function treeOf(here: string, module: string): string {
  for (let dir = here; ; dir = dirname(dir)) {
    if (['.ts', '.js', '.bundle.js'].some((ext) => existsSync(join(dir, `${module}${ext}`)))) return dir;
    if (dirname(dir) === dir) throw new Error(`no ${module} in any folder above ${here}`);
  }
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
