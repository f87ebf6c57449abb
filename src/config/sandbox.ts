/**
 * `agentSandbox` in config.json, or MAESTRO_AGENT_SANDBOX=auto|bwrap|off (which wins on the kind):
 *
 *   "agentSandbox": "auto"     the default: the bwrap sandbox where it works here, else agents run as
 *                              the user and the daemon says so (terminal, log, board, doctor)
 *   "agentSandbox": "bwrap"    the sandbox or no daemon: it refuses to start where bwrap cannot work
 *   "agentSandbox": "off"      agents run as the user, by choice
 *   "agentSandbox": { "kind": "bwrap", "hide": ["~/.config/gcloud"], "writable": ["~/.cache/pip"] }
 *   "agentSandbox": { "kind": "auto", "network": "proxied", "allow": ["registry.internal:8443"] }
 *
 * `network` (src/lib/sandboxNet/relay.ts): "shared" (the default: the host's network), "proxied" (a network of its
 * own that reaches out only through Maestro's proxy: public addresses on 443 and 80, and the "host:port" entries of
 * `allow` whatever they resolve to; never the host's loopback, private networks or the cloud metadata endpoint), or
 * "none" (its own loopback only). With "proxied", the proxy the daemon's own environment names (HTTPS_PROXY,
 * HTTP_PROXY, NO_PROXY) is read here too, once: Maestro's proxy goes out through it (upstreamProxy below).
 *
 * What the sandbox does is src/lib/sandbox.ts. Here: which of the user's folders it hides besides the
 * Maestro home (credentials an agent has no use for), and which the config leaves writable to every
 * sandboxed process. None by default: an agent tool's own state folder is writable in that tool's runs
 * only (withStateDirs), never in a check's or a hook's, which run the repository's code, nor in another
 * tool's. Paths are absolute or start with `~/`; the lists the config gives are added to the defaults.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { holds } from '../lib/paths.js';
import type { SocketScope } from '../lib/sandbox.js';
import type { SandboxNetwork } from '../lib/sandboxNet/relay.js';
import type { UpstreamProxy } from '../lib/sandboxNet/upstream.js';
import { z } from 'zod';
import { MaestroError } from '../core/errors.js';

/**
 * Hidden by default: what in the user's home holds keys, tokens or what a person typed, and that no agent run
 * needs. Keys and cloud or registry credentials; shell and client histories (a token pasted on a command line, a
 * database password); browser profiles (cookies are logged-in sessions) and password stores. A list of what is
 * known, not of everything: `hide` in config.json adds to it.
 */
export const SANDBOX_HIDDEN = [
  ...['~/.ssh', '~/.gnupg', '~/.aws', '~/.azure', '~/.config/gcloud', '~/.config/gh', '~/.config/hub', '~/.config/doctl', '~/.oci', '~/.fly', '~/.terraform.d', '~/.vault-token'],
  ...['~/.docker', '~/.kube', '~/.netrc', '~/.npmrc', '~/.pypirc', '~/.gem/credentials', '~/.cargo/credentials', '~/.cargo/credentials.toml', '~/.pgpass', '~/.git-credentials'],
  ...['~/.bash_history', '~/.zsh_history', '~/.local/share/fish/fish_history', '~/.python_history', '~/.node_repl_history', '~/.psql_history', '~/.mysql_history', '~/.sqlite_history'],
  ...['~/.mozilla', '~/.thunderbird', '~/.config/google-chrome', '~/.config/chromium', '~/.config/BraveSoftware', '~/.config/microsoft-edge'],
  ...['~/.config/vivaldi', '~/.config/opera', '~/.librewolf', '~/.waterfox', '~/.floorp', '~/.zen'],
  // The same browsers as the system packs them (Ubuntu's Firefox is a snap), and their caches: the board's cookie
  // (the daemon's token) and its link in the history are in each profile, Firefox's in plain SQLite.
  ...['firefox', 'chromium', 'brave', 'vivaldi', 'opera', 'thunderbird'].map((snap) => `~/snap/${snap}`),
  ...['org.mozilla.firefox', 'org.chromium.Chromium', 'com.google.Chrome', 'com.brave.Browser', 'com.microsoft.Edge', 'com.vivaldi.Vivaldi', 'com.opera.Opera', 'io.gitlab.librewolf-community', 'org.mozilla.Thunderbird'].map((app) => `~/.var/app/${app}`),
  ...['~/.cache/mozilla', '~/.cache/google-chrome', '~/.cache/chromium', '~/.cache/BraveSoftware', '~/.cache/vivaldi', '~/.cache/opera', '~/.cache/librewolf'],
  ...['~/.password-store', '~/.local/share/keyrings', '~/.config/op'],
  // The default Maestro home, for a daemon that runs on another (MAESTRO_HOME for a trial, or for agents trusted
  // less): the daemon a person runs day to day keeps its token there, which a shared network lets an agent use.
  '~/.maestro',
];
/**
 * Hidden by default, outside the home: the user's runtime folder (ssh-agent, gpg-agent and keyring
 * sockets an agent could sign with, the session bus) and the container engine's socket (root by another name).
 */
export const SANDBOX_HIDDEN_SYSTEM = ['/run/user', '/run/docker.sock', '/var/run/docker.sock', '/run/podman'];

const kind = z.enum(['auto', 'bwrap', 'off']);
export const agentSandboxSchema = z.union([
  kind,
  z.object({
    kind,
    hide: z.array(z.string().min(1)).optional(),
    writable: z.array(z.string().min(1)).optional(),
    network: z.enum(['shared', 'proxied', 'none']).optional(),
    allow: z.array(z.string().min(1)).optional(),
  }).strict(),
], {
  // An object's own problems, each with its key (`network: Invalid option…`), not the union's "Invalid input".
  error: (issue) => {
    if (issue.code !== 'invalid_union' || typeof issue.input !== 'object' || issue.input === null) return undefined;
    return issue.errors[1]?.map((i) => `${i.path.join('.') || '(object)'}: ${i.message}`).join('; ');
  },
});

export interface AgentSandboxConfig {
  kind: 'bwrap';
  /** Asked for by name ("bwrap"): the daemon refuses to start without it. Otherwise ("auto") it runs agents unsandboxed where bwrap cannot work, and says so. */
  required: boolean;
  /** Absolute paths, the defaults included. */
  hide: string[];
  writable: string[];
  /** What its processes reach of the network: the internet through Maestro's proxy ("proxied"), nothing ("none"); absent: the host's network ("shared"). */
  network?: SandboxNetwork;
  /** Whether its abstract sockets are scoped here, once the daemon has asked at start (app/agentSandbox.ts); every spec made from this carries it. */
  sockets?: SocketScope;
}

function expand(p: string, home: string | undefined, where: string): string {
  if (p.startsWith('~/')) {
    if (!home) throw new MaestroError('CONFIG_INVALID', `${where}: "${p}" starts with ~/ but HOME is not set.`);
    return join(home, p.slice(2));
  }
  if (!isAbsolute(p)) throw new MaestroError('CONFIG_INVALID', `${where}: "${p}" must be an absolute path or start with ~/.`);
  return p;
}

/** The sandbox to run agents in, or null for none ("off"). `where` names config.json's field in errors. */
export function resolveAgentSandbox(file: z.infer<typeof agentSandboxSchema> | undefined, env: NodeJS.ProcessEnv, where: string): AgentSandboxConfig | null {
  const fromEnv = env.MAESTRO_AGENT_SANDBOX?.trim();
  if (fromEnv && !kind.safeParse(fromEnv).success) {
    throw new MaestroError('CONFIG_INVALID', `MAESTRO_AGENT_SANDBOX must be auto, bwrap or off, got ${JSON.stringify(env.MAESTRO_AGENT_SANDBOX)}.`);
  }
  const lists: { hide?: string[]; writable?: string[]; network?: SandboxNetwork['mode']; allow?: string[] } = typeof file === 'object' ? file : {};
  const chosen = fromEnv || (typeof file === 'object' ? file.kind : file) || 'auto';
  if (chosen === 'off') return null;
  // The defaults are all under HOME: without one there is nothing of them to hide or leave writable.
  const paths = (defaults: string[], extra: string[] | undefined, field: string) => [...(env.HOME ? defaults : []), ...(extra ?? [])].map((p) => expand(p, env.HOME, `${where}.${field}`));
  const mode = lists.network ?? 'shared';
  const allow = allowList(lists.allow ?? [], mode, `${where}.allow`);
  const upstream = mode === 'proxied' ? upstreamProxy(env) : undefined;
  const network = mode === 'shared' ? {} : { network: { mode, allow, ...(upstream ? { upstream } : {}) } };
  return { kind: 'bwrap', required: chosen === 'bwrap', hide: [...SANDBOX_HIDDEN_SYSTEM, ...paths(SANDBOX_HIDDEN, lists.hide, 'hide')], writable: paths([], lists.writable, 'writable'), ...network };
}

/** `allow`'s entries, each "host:port" (a name, an IPv4 address or a bracketed IPv6 one; a port 1 to 65535). */
function allowList(allow: string[], mode: SandboxNetwork['mode'], where: string): string[] {
  if (allow.length && mode !== 'proxied') throw new MaestroError('CONFIG_INVALID', `${where}: the proxy lets these through, and only "network": "proxied" has one (network is "${mode}").`);
  for (const entry of allow) {
    const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(entry);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) throw new MaestroError('CONFIG_INVALID', `${where}: "${entry}" must be host:port (a host name or IP address, a port from 1 to 65535), like "registry.internal:8443".`);
  }
  return allow;
}

/**
 * The daemon's own database wherever it lies, hidden from agents as the home is: a SQLite file outside the home
 * (with the -wal, -shm and -journal files beside it), and the folder of the Unix socket a PostgreSQL URL (or
 * PGHOST) connects through, since a server that takes the socket's user for the role (peer authentication) lets in
 * whoever runs as the user, an agent too. A database inside the home is hidden with it already.
 */
export function databaseHidden(database: string, home: string, env: NodeJS.ProcessEnv): string[] {
  if (database.startsWith('sqlite:')) {
    const file = resolve(database.slice('sqlite:'.length));
    if (holds(home, file)) return []; // hidden with the home
    return [file, ...['-wal', '-shm', '-journal'].map((suffix) => file + suffix)];
  }
  let url: URL;
  try {
    url = new URL(database);
  } catch {
    return []; // not a URL the store could open either: it refuses it at start
  }
  const host = url.searchParams.get('host') ?? (decodeURIComponent(url.hostname) || env.PGHOST || '');
  return host.startsWith('/') ? [host] : [];
}

/**
 * The proxy the daemon's own environment goes out through, which a "proxied" sandbox's proxy then goes through too
 * (lib/sandboxNet/upstream.ts): HTTPS_PROXY and HTTP_PROXY (the lower-case form first, as curl reads it; one without
 * a scheme is http://), NO_PROXY's entries. Undefined when neither proxy is set. Only an http:// proxy can be chained
 * to: another scheme is refused by name, and with what to do (the message never shows the URL's credentials).
 */
function upstreamProxy(env: NodeJS.ProcessEnv): UpstreamProxy | undefined {
  const read = (name: string) => {
    const variable = env[name.toLowerCase()]?.trim() ? name.toLowerCase() : name;
    const raw = env[variable]?.trim();
    if (!raw) return undefined;
    const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
    const url = URL.canParse(text) ? new URL(text) : null;
    if (!url || url.protocol !== 'http:' || !url.hostname) {
      const shown = url ? `${url.protocol}//${url.host}` : 'not a URL';
      throw new MaestroError('CONFIG_INVALID', `${variable} (${shown}) names a proxy agentSandbox.network "proxied" cannot go through: only an http:// proxy (http://host:port) is chained to. Set ${variable} to one, or agentSandbox.network to "shared".`);
    }
    return url.href;
  };
  const https = read('HTTPS_PROXY');
  const http = read('HTTP_PROXY');
  if (!https && !http) return undefined;
  const noProxy = (env.no_proxy ?? env.NO_PROXY ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean);
  return { ...(https ? { https } : {}), ...(http ? { http } : {}), noProxy };
}
