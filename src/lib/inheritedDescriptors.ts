/**
 * Descriptors a process was started with beyond stdin, stdout and stderr, left open without close-on-exec by whoever
 * started it (a shell's `exec 40<file`, a launcher's pipe): every exec keeps them, so each program Maestro started
 * had them, the agents in the sandbox too (bwrap passes on what it has). Node's start marks descriptors 0 to 15
 * close-on-exec (libuv's uv_disable_stdio_inheritance) but stops at the first one past 15 that is not open: one at
 * 40, or the 251 a CI runner left, went through to every agent. Node opens its own with close-on-exec, so the ones
 * without it are what the process was given: `maestro serve`, the worker and the spawner helper close them at their
 * start, before they start anything. Linux only (/proc/self/fdinfo); elsewhere nothing is closed.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** O_CLOEXEC in the `flags:` line of /proc/<pid>/fdinfo/<fd> (octal). */
const O_CLOEXEC = 0o2000000;

/** Closes every descriptor above 2 that is open without close-on-exec; returns their numbers. */
export function closeInheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > 2)) continue;
    let flags: number;
    try {
      const m = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (!m) continue;
      flags = parseInt(m[1]!, 8);
    } catch {
      continue; // closed since the listing (the listing's own descriptor)
    }
    if (flags & O_CLOEXEC) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // gone meanwhile
    }
  }
  return closed;
}
