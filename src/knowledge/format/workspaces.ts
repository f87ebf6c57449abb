/**
 * Linked workspaces: other projects whose `.workflow/` knowledge a project reads, read-only (FORMATS §1.1).
 * maestro-flow declares them in `.workflow/config.json` (src/config/index.ts `loadWorkspaceConfig`):
 * `{"workspaces":{"linked":[{"name":"api","path":"../api","share":["spec","knowhow"]}]}}`, a path relative to
 * the project, `share` naming what is read. Maestro's earlier `.workflow/workspaces.json`
 * (`{"workspaces":[{"name":"api","path":"../api"}]}`, sharing specs and knowhow) is read too.
 *
 * Either file is the repository's, so a broken one must not take the project's own knowledge with it: a file that
 * is not JSON, has the wrong shape, or (for a confined root: the daemon, an agent's tools, `--workflow-root`) is a
 * link out of the project is a finding (spec health, the board's knowledge health) and its workspaces are not read;
 * an entry that is wrong is a finding and the others are read. maestro-flow drops a broken file without a word.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { notJsonMessage } from '../../lib/jsonError.js';
import { assertReadInside } from './linkGuard.js';
import type { Finding } from './specParser.js';

export interface LinkedWorkspace {
  name: string;
  workflowDir: string;
  /** What it shares (maestro-flow's `share`): its specs, its knowhow. */
  shares: { spec: boolean; knowhow: boolean };
}

export interface WorkspaceLinks {
  workspaces: LinkedWorkspace[];
  /** What was wrong with the files that declare them, and what was therefore not read. */
  findings: Finding[];
}

/** What of a workflow root (root.ts) the declaration is read from. */
interface DeclaringRoot {
  projectDir: string;
  workflowDir: string;
  /** A confined root reads a declaration only inside the project on disk. */
  confined: boolean;
}

/** A declaration is read up to this size (maestro-flow's config.json is a few KB), and this many workspaces of it. */
const MAX_BYTES = 1024 * 1024;
export const MAX_WORKSPACES = 100;

/** A name the ids can carry (`ws:{name}:spec:…`): no colon, slash or space. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const SHARED = ['spec', 'knowhow'] as const;

interface Declaration {
  file: string;
  /** The example the messages give. */
  shape: string;
  /** The list of entries in the parsed file, [] when the file declares none, or what is wrong with it. */
  list(raw: Record<string, unknown>): unknown[] | string;
  /** Whether an entry must say what it shares. */
  namesShare: boolean;
}

const DECLARATIONS: Declaration[] = [
  {
    file: 'config.json',
    shape: '{"workspaces":{"linked":[{"name":"api","path":"../api","share":["spec","knowhow"]}]}}',
    list: (raw) => {
      if (raw.workspaces === undefined) return [];
      const linked = (raw.workspaces as { linked?: unknown } | null)?.linked;
      return Array.isArray(linked) ? linked : '"workspaces.linked" must be a list of {name, path, share}';
    },
    namesShare: true,
  },
  {
    file: 'workspaces.json',
    shape: '{"workspaces":[{"name":"api","path":"../api"}]}',
    list: (raw) => (Array.isArray(raw.workspaces) ? raw.workspaces : '"workspaces" must be a list of {name, path}'),
    namesShare: false,
  },
];

export function workspaceLinks(root: DeclaringRoot): WorkspaceLinks {
  const out: WorkspaceLinks = { workspaces: [], findings: [] };
  const names = new Set<string>();
  for (const d of DECLARATIONS) {
    const file = join(root.workflowDir, d.file);
    if (!existsSync(file)) continue;
    const problem = (message: string, severity: Finding['severity'] = 'error') => out.findings.push({ file, line: 1, severity, code: 'linked-workspaces', message });
    const raw = readDeclaration(root, file, d);
    if (typeof raw === 'string') {
      problem(`${raw} Its linked workspaces are not read; the project's own knowledge is.`);
      continue;
    }
    const list = d.list(raw);
    if (typeof list === 'string') {
      problem(`${file}: ${list}, like ${d.shape}. Its linked workspaces are not read; the project's own knowledge is.`);
      continue;
    }
    // Each scan reads every workspace's folders: a committed list of 80,000 held the daemon for seconds a scan.
    if (list.length > MAX_WORKSPACES) problem(`${file} declares ${list.length} linked workspaces, more than ${MAX_WORKSPACES}: the first ${MAX_WORKSPACES} are read.`);
    for (const [i, entry] of list.slice(0, MAX_WORKSPACES).entries()) {
      const at = `${file}: ${d.file === 'config.json' ? 'workspaces.linked' : 'workspaces'}[${i}]`;
      const link = toLink(root, entry, d);
      if (typeof link === 'string') problem(`${at} ${link}; it is not read.`);
      else if (names.has(link.name)) problem(`${at}: the name "${link.name}" is taken by an earlier workspace; it is not read.`);
      else {
        names.add(link.name);
        if (!link.shares.spec && !link.shares.knowhow) problem(`${at} ("${link.name}") shares neither specs nor knowhow: add "share": ["spec", "knowhow"] to read them.`, 'warning');
        out.workspaces.push(link);
      }
    }
  }
  return out;
}

/** The file's top-level object, or what is wrong with it (never quoting it: it may be a link to a secret). */
function readDeclaration(root: DeclaringRoot, file: string, d: Declaration): Record<string, unknown> | string {
  let text: string;
  try {
    // A repository can make the file a link to any file of the machine, whose names and folders would be taken
    // for the project's; `maestro search` in the project's own folder reads it wherever it leads, as maestro-flow.
    if (root.confined) assertReadInside(root.projectDir, file, `the project ${root.projectDir}`);
    const size = statSync(file).size;
    if (size > MAX_BYTES) return `${file} is ${size.toLocaleString('en')} bytes, more than ${MAX_BYTES.toLocaleString('en')}.`;
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return notJsonMessage(file, text);
  }
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) return raw as Record<string, unknown>;
  return `${file} must be a JSON object like ${d.shape}, got ${raw === null ? 'null' : Array.isArray(raw) ? 'a list' : typeof raw}.`;
}

function toLink(root: DeclaringRoot, entry: unknown, d: Declaration): LinkedWorkspace | string {
  const { name, path, share } = (typeof entry === 'object' && entry !== null ? entry : {}) as { name?: unknown; path?: unknown; share?: unknown };
  if (typeof name !== 'string' || !NAME.test(name)) return 'needs a "name" of letters, digits, ".", "_" and "-"';
  if (typeof path !== 'string' || path === '') return `("${name}") needs a "path"`;
  let shares = { spec: true, knowhow: true };
  if (d.namesShare) {
    // maestro-flow reads nothing of a workspace without `share` (its indexer's empty set).
    if (share !== undefined && !(Array.isArray(share) && share.every((s) => typeof s === 'string'))) return `("${name}"): "share" must be a list like ["spec", "knowhow"]`;
    const named = new Set((share as string[] | undefined) ?? []);
    shares = { spec: named.has(SHARED[0]), knowhow: named.has(SHARED[1]) };
  }
  const target = isAbsolute(path) ? path : resolve(root.projectDir, path);
  return { name, workflowDir: basename(target) === '.workflow' ? target : join(target, '.workflow'), shares };
}
