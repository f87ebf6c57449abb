/**
 * Network namespaces for the multihost suite: each daemon in its own network
 * stack, as on its own machine, reaching PostgreSQL over a veth pair
 * (host side 10.<b>.<i>.1, namespace side 10.<b>.<i>.2). Needs root and
 * iproute2 (`ip netns`); `netnsUnavailable()` says why not when it cannot, and
 * the suite then runs the daemons on the host's network and says so loudly.
 * Namespaces are deleted by `remove()`, and on process exit if a test failed
 * before it could.
 *
 * Two copies of the suite may run at once (two clones, or two runs of one):
 * names carry the pid, and each run takes its own 10.<b>.0.0/16 — one that no
 * interface on the host uses, claimed with a lock file in the temp folder every run sees (sharedTmp)
 * (`maestro-netns-10.<b>.lock`, holding the pid, stale once that pid is gone).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { acquireLockFile } from '../../src/lib/lockFile.js';
import { trackResource } from '../../src/lib/resources.js';
import { sharedTmp } from './suiteTmp.js';

export interface NetNs {
  name: string;
  /** The host side's address: what PostgreSQL listens on for this namespace. */
  hostAddr: string;
  /** The namespace side's address. */
  nsAddr: string;
}

export interface NetNsSet {
  spaces: NetNs[];
  /** `ip netns exec <ns>` prefix for a command run inside namespace i. */
  exec(i: number, cmd: string, args: string[]): [string, string[]];
  /** Cuts namespace i off (link down) or reconnects it. */
  setLink(i: number, up: boolean): void;
  remove(): void;
}

/** The second octets a run may take for its 10.<b>.0.0/16 (10.231 was the one fixed subnet before). */
const SUBNET_OCTETS = Array.from({ length: 24 }, (_, k) => 231 + k);

class SubnetTaken extends Error {}

/**
 * Claims a 10.<b>.0.0/16 for this run: one no host interface has an address in, whose lock file no
 * live process holds. Returns the prefix ("10.<b>") and the release, or null when all are taken.
 */
function claimSubnet(): { prefix: string; release: () => void } | null {
  const addrs = spawnSync('ip', ['-4', 'addr'], { encoding: 'utf8' }).stdout ?? '';
  for (const b of SUBNET_OCTETS) {
    const prefix = `10.${b}`;
    if (addrs.includes(` ${prefix}.`)) continue;
    try {
      // A past deadline: a subnet a live run holds is skipped at once, a dead run's is reclaimed.
      const release = acquireLockFile(join(sharedTmp(), `maestro-netns-${prefix}.lock`), {}, { deadline: 0, unparseableStaleMs: 0, busy: () => new SubnetTaken(), what: 'the test subnet lock' });
      return { prefix, release };
    } catch (err) {
      if (!(err instanceof SubnetTaken)) throw err;
    }
  }
  return null;
}

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Null when namespaces can be made here, else why not. */
export function netnsUnavailable(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not running as root';
  if (spawnSync('ip', ['-V']).status !== 0) return 'iproute2 (`ip`) is not installed';
  const probe = `maestro-probe-${process.pid}`;
  const add = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (add.status !== 0) return `\`ip netns add\` failed: ${(add.stderr || '').trim()}`;
  try {
    const veth = spawnSync('ip', ['link', 'add', `mp${process.pid % 100000}h`, 'type', 'veth', 'peer', 'name', `mp${process.pid % 100000}n`, 'netns', probe], { encoding: 'utf8' });
    if (veth.status !== 0) return `veth pairs are not available: ${(veth.stderr || '').trim()}`;
  } finally {
    spawnSync('ip', ['netns', 'del', probe]);
  }
  return null;
}

export function createNetNs(count: number): NetNsSet {
  const tag = `mh${process.pid % 100000}`;
  const subnet = claimSubnet();
  if (!subnet) throw new Error(`No free 10.<b>.0.0/16 for the test namespaces among 10.${SUBNET_OCTETS[0]}–10.${SUBNET_OCTETS.at(-1)} (each is in use on this host or claimed by a live run; see ${sharedTmp()}/maestro-netns-*.lock)`);
  const spaces: NetNs[] = [];
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    // Deleting the namespace destroys the veth end inside it, and with it the pair.
    for (const s of spaces) spawnSync('ip', ['netns', 'del', s.name]);
    subnet.release();
    untrack();
    process.off('exit', remove);
  };
  const untrack = trackResource('other', `network namespaces ${tag}-*`, remove);
  process.on('exit', remove);
  try {
    for (let i = 0; i < count; i++) {
      const s: NetNs = { name: `${tag}-${i}`, hostAddr: `${subnet.prefix}.${i}.1`, nsAddr: `${subnet.prefix}.${i}.2` };
      ip(['netns', 'add', s.name]);
      spaces.push(s);
      const host = `${tag}h${i}`;
      const inner = `${tag}n${i}`;
      ip(['link', 'add', host, 'type', 'veth', 'peer', 'name', inner, 'netns', s.name]);
      ip(['addr', 'add', `${s.hostAddr}/24`, 'dev', host]);
      ip(['link', 'set', host, 'up']);
      ip(['netns', 'exec', s.name, 'ip', 'addr', 'add', `${s.nsAddr}/24`, 'dev', inner]);
      ip(['netns', 'exec', s.name, 'ip', 'link', 'set', inner, 'up']);
      ip(['netns', 'exec', s.name, 'ip', 'link', 'set', 'lo', 'up']);
    }
  } catch (err) {
    remove();
    throw err;
  }
  return {
    spaces,
    exec: (i, cmd, args) => ['ip', ['netns', 'exec', spaces[i]!.name, cmd, ...args]],
    setLink: (i, up) => ip(['netns', 'exec', spaces[i]!.name, 'ip', 'link', 'set', `${tag}n${i}`, up ? 'up' : 'down']),
    remove,
  };
}

/** The loud message the suite prints when it runs without namespaces. */
export function netnsSkipped(why: string): string {
  return `\n*** Network namespaces unavailable (${why}): the multihost daemons run on the host's network, NOT each in its own namespace. ***\n` +
    '*** Run as root with iproute2 installed (CI does) to run them namespaced.                                              ***\n';
}
