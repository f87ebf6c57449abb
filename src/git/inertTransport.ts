/**
 * The settings that name a program git runs to reach a remote, or that let a URL name one: `core.sshCommand`,
 * `core.askPass`, the credential helpers, a remote's `uploadpack` and `receivepack` (run through the shell for a
 * remote on this machine), and the protocols allowed (`protocol.allow = always` lets an `ext::<command>` URL run its
 * command). Git runs them at a fetch, a push or an ls-remote: in the daemon's clone of a shared remote.
 *
 * The person's own are what pushing to a real remote needs (an ssh wrapper, a credential store) and are kept. One
 * set in a file of the working tree is not: that clone checks out main, agents' merged work, and a person who keeps
 * the team's settings in a committed `.gitconfig` includes it (`git config include.path ../.gitconfig`), so an
 * agent's `uploadpack = sh tools/up.sh` ran at the daemon's next fetch, outside the sandbox. Such a setting is put
 * back to the person's own value (the one git takes from a file outside the tree), or to git's default when they
 * set none: with a `-c` pair, which git reads last; for uploadpack and receivepack, of which git keeps the first
 * value it reads ("more than one uploadpack given, using the first"), on the command line (`fetch
 * --upload-pack=…`, withPackPrograms). Hooks and the file-system monitor are off whatever their origin
 * (INERT_ALWAYS); `uploadpack.packObjectsHook` git reads only from the person's and the system's files.
 */
import { shellWord } from '../core/diffGateWays.js';

/** One setting as `git config --show-origin` read it (inertConfig.ts configEntries): its file (null: not a file), key and value. */
interface ConfigEntry {
  origin: string | null;
  key: string;
  value: string;
}

/**
 * Who is between git and the remote, and whom it trusts: a proxy (which an HTTP remote's credentials pass through,
 * and, with TLS checks off or another CA, an HTTPS one's), the address a host name resolves to, the program a
 * git:// URL goes through (core.gitProxy), the cookie file curl writes. Refused from the working tree, as a
 * destination is (destinationsFromTree): an agent's `http.proxy` received the person's password at the daemon's fetch.
 */
const PROXY_KEYS = '^http\\.(.+\\.)?(proxy|sslverify|sslcainfo|sslcapath|proxysslcainfo|curloptresolve|cookiefile)$|^remote\\..+\\.proxy$|^core\\.gitproxy$';

/** The keys, as `git config --get-regexp` lists them (section and name lower-cased). */
export const TRANSPORT_KEYS = `^core\\.(sshcommand|askpass)$|^credential\\.(.+\\.)?helper$|^remote\\..+\\.(uploadpack|receivepack|url|pushurl|fetch|push|mirror)$|^protocol\\.(.+\\.)?allow$|^url\\..+\\.(insteadof|pushinsteadof)$|${PROXY_KEYS}`;
const TRANSPORT_KEY = new RegExp(TRANSPORT_KEYS);

/** Git's own policy for the protocols it names (transport.c); any other is allowed when the person asks for it. */
const PROTOCOL_DEFAULTS: Record<string, string> = { http: 'always', https: 'always', git: 'always', ssh: 'always', ext: 'never' };

/** What git does with none set. `ssh` is GIT_SSH when the environment names one (git's order: GIT_SSH_COMMAND, the setting, GIT_SSH). */
function gitDefault(key: string, env: NodeJS.ProcessEnv): string {
  if (key === 'core.sshcommand') return env.GIT_SSH ? shellWord(env.GIT_SSH) : 'ssh';
  if (key === 'core.askpass') return '';
  const protocol = /^protocol\.(.+)\.allow$/.exec(key)?.[1];
  return protocol ? (PROTOCOL_DEFAULTS[protocol] ?? 'user') : 'user';
}

const PACK_KEY = /^remote\.(.+)\.(uploadpack|receivepack)$/;
/**
 * Where a fetch or push goes: a remote's URLs, and the rewrites of URLs; and which refs it writes, a remote's refspecs
 * (git maps a fetched ref through them too: `fetch = +refs/heads/main:refs/heads/task/…` moved a task branch of the clone).
 */
const WHERE_KEY = new RegExp(`^remote\\..+\\.(url|pushurl|fetch|push|mirror)$|^url\\..+\\.(insteadof|pushinsteadof)$|${PROXY_KEYS}`);

/**
 * The `-c` pairs that put back every transport setting (TRANSPORT_KEYS but the pack programs) whose value in effect
 * comes from the working tree (`fromTree`, inWorkingTree): the person's own last value, else git's default. The
 * credential helpers are a list git runs in order: an empty helper empties it, and the person's are named again.
 */
export function inertTransportArgs(entries: readonly ConfigEntry[], fromTree: (origin: string | null) => boolean, env: NodeJS.ProcessEnv): string[] {
  const mine = entries.filter((e) => TRANSPORT_KEY.test(e.key) && !PACK_KEY.test(e.key) && !WHERE_KEY.test(e.key) && !e.key.includes('='));
  const args: string[] = [];
  const helpers = mine.filter((e) => /^credential\.(.+\.)?helper$/.test(e.key));
  if (helpers.some((e) => fromTree(e.origin))) {
    args.push('-c', 'credential.helper=');
    for (const e of helpers) if (!fromTree(e.origin)) args.push('-c', `${e.key}=${e.value}`);
  }
  const last = new Map<string, ConfigEntry>();
  for (const e of mine) if (!helpers.includes(e)) last.set(e.key, e);
  for (const [key, { origin }] of last) {
    if (!fromTree(origin)) continue;
    const persons = mine.filter((e) => e.key === key && !fromTree(e.origin)).at(-1);
    args.push('-c', `${key}=${persons ? persons.value : gitDefault(key, env)}`);
    // `protocol.allow` is every protocol's policy unless one has its own: git's own for those it names, then.
    if (key === 'protocol.allow' && !persons) {
      for (const [protocol, policy] of Object.entries(PROTOCOL_DEFAULTS)) if (!last.has(`protocol.${protocol}.allow`)) args.push('-c', `protocol.${protocol}.allow=${policy}`);
    }
  }
  return args;
}

/** By remote name, the pack programs to name on a command line in place of the working tree's (packPrograms). */
export type PackPrograms = Map<string, { uploadpack?: string; receivepack?: string }>;

/** For each remote whose first uploadpack or receivepack (the one git takes) comes from the working tree: the person's first, else git's own. */
export function packPrograms(entries: readonly ConfigEntry[], fromTree: (origin: string | null) => boolean): PackPrograms {
  const programs: PackPrograms = new Map();
  const seen = new Set<string>();
  for (const { key, origin } of entries) {
    const [, remote, which] = PACK_KEY.exec(key) ?? [];
    if (!remote || !which || seen.has(key) || (seen.add(key), !fromTree(origin))) continue;
    const persons = entries.find((e) => e.key === key && !fromTree(e.origin));
    const kind = which as 'uploadpack' | 'receivepack';
    programs.set(remote, { ...programs.get(remote), [kind]: persons ? persons.value : kind === 'uploadpack' ? 'git-upload-pack' : 'git-receive-pack' });
  }
  return programs;
}

/**
 * `args`, a git command line, with the remote's pack program named (`--upload-pack=…` after fetch, ls-remote or pull,
 * `--receive-pack=…` after push) when `programs` has one for a remote the command names. Maestro names the remote
 * it talks to (`origin`) in every such command.
 */
export function withPackPrograms(args: readonly string[], programs: PackPrograms): string[] {
  if (!programs.size) return [...args];
  let at = 0;
  while (at < args.length && args[at]!.startsWith('-')) at += args[at] === '-c' || args[at] === '-C' ? 2 : 1;
  const command = args[at];
  const kind = command === 'push' ? 'receivepack' : command === 'fetch' || command === 'ls-remote' || command === 'pull' ? 'uploadpack' : null;
  if (!kind) return [...args];
  const rest = args.slice(at + 1);
  const program = [...programs].find(([remote, p]) => p[kind] !== undefined && rest.includes(remote))?.[1][kind];
  if (program === undefined) return [...args];
  return [...args.slice(0, at + 1), `--${kind === 'uploadpack' ? 'upload-pack' : 'receive-pack'}=${program}`, ...rest];
}

/**
 * The settings from the working tree that say where a fetch or push goes (`remote.origin.pushurl`, a
 * `url.<base>.pushInsteadOf`), each as "key set in file". No `-c` takes one back (git adds every URL to a list, and
 * the longest rewrite wins), so a command that talks to a remote is refused while one is there (refusedTransport):
 * a pushurl an agent committed sent the daemon's pushes, with the person's credentials, where the agent chose.
 */
export function destinationsFromTree(entries: readonly ConfigEntry[], fromTree: (origin: string | null) => boolean): string[] {
  return entries.filter((e) => WHERE_KEY.test(e.key) && fromTree(e.origin)).map((e) => `${e.key} set in ${e.origin}`);
}

const TALKS_TO_A_REMOTE = new Set(['fetch', 'push', 'pull', 'ls-remote']);

/** Why `args` (a git command line) may not run with those settings (destinationsFromTree); null when it may. */
export function refusedTransport(args: readonly string[], destinations: readonly string[]): string | null {
  if (!destinations.length) return null;
  let at = 0;
  while (at < args.length && args[at]!.startsWith('-')) at += args[at] === '-c' || args[at] === '-C' ? 2 : 1;
  const command = args[at] ?? '';
  if (!TALKS_TO_A_REMOTE.has(command)) return null;
  return `${destinations.join(', ')}, a file of the working tree (agents' merges change it), would choose where git ${command} goes: Maestro does not fetch or push until it is gone. Remove the setting from that file, or the include that reads it (git config --unset include.path)`;
}
