/**
 * Audits (FORMATS §8.5): a person says a KNOWLEDGE card was wrong (`k` in the
 * UI, or `maestro wiki audit <id>`); the file waits under knowledge/audit/
 * until wiki-maintain resolves it into audit/resolved/.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import { assertFrontmatterClosed, hasFrontmatter, parseFrontmatter } from '../../knowledge/format/frontmatter.js';
import { setFrontmatterLine } from '../../knowledge/format/frontmatterEdit.js';
import { wikiLayout, writeFileAtomic } from '../../knowledge/format/wiki/layout.js';

export const SEVERITIES = ['low', 'medium', 'high'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface AuditRequest {
  targetId: string;
  severity?: string;
  anchor?: string;
  contextRequest?: string;
  notes?: string;
  sessionId?: string;
  explorationId?: string;
}

export interface AuditRecord {
  file: string;
  path: string;
  targetId: string;
  severity: Severity;
  filedAt: string;
  status: 'open' | 'resolved';
  sessionId?: string;
  explorationId?: string;
  resolvedAt?: string;
  anchor: string;
}

export function parseSeverity(raw: string | undefined): Severity {
  if (raw === undefined) return 'medium';
  if ((SEVERITIES as readonly string[]).includes(raw)) return raw as Severity;
  throw new MaestroError('BAD_INPUT', `--severity must be low, medium or high, got "${raw}".`);
}

function auditName(targetId: string, now: Date): string {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const target = targetId.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `${stamp}-${target}.md`;
}

/** Files an open audit against an existing entry; refuses unknown ids and empty anchors. */
export function fileAudit(wikiRoot: string, req: AuditRequest, now: Date): AuditRecord {
  const severity = parseSeverity(req.severity);
  const targetId = req.targetId.trim();
  if (!targetId) throw new MaestroError('BAD_INPUT', 'An audit needs a target id (the KNOWLEDGE card\'s entry, e.g. C001).');
  const target = listWikiEntries(wikiRoot).entries.find((e) => e.id === targetId);
  if (!target) throw new MaestroError('BAD_INPUT', `No wiki entry "${targetId}" under ${wikiLayout(wikiRoot).knowledge}; nothing to audit.`);
  const anchor = (req.anchor ?? `KNOWLEDGE card ${targetId} ("${target.request}") was shown and judged wrong or not relevant.`).trim();
  if (!anchor) throw new MaestroError('BAD_INPUT', 'An audit needs anchor text (what was wrong).');
  // One line: the body is read back by its `## ` headings, and GUI-Anything's resolve edits the file by its lines.
  if (/[\r\n]/.test(anchor)) throw new MaestroError('BAD_INPUT', 'The audit\'s anchor (--anchor) must be one line; put more in --note. Nothing was filed.');
  const filedAt = now.toISOString();
  // Written line by line as GUI-Anything writes it: ids and times quoted, `severity` and `status`
  // bare. Its resolve rewrites `status: open` in place; a quoted value would leave two status lines.
  const lines = [
    '---',
    `target_id: ${JSON.stringify(targetId)}`,
    `severity: ${severity}`,
    `filed_at: "${filedAt}"`,
    ...(req.sessionId ? [`session_id: ${JSON.stringify(req.sessionId)}`] : []),
    ...(req.explorationId ? [`exploration_id: ${JSON.stringify(req.explorationId)}`] : []),
    'status: open',
    '---',
    '',
    '## Anchor',
    anchor,
    '',
  ];
  if (req.contextRequest?.trim()) lines.push('## Context request', req.contextRequest.trim(), '');
  if (req.notes?.trim()) lines.push('## Notes', req.notes.trim(), '');
  const dir = wikiLayout(wikiRoot).audit;
  mkdirSync(dir, { recursive: true });
  const file = auditName(targetId, now);
  const path = join(dir, file);
  if (existsSync(path)) throw new MaestroError('BAD_INPUT', `${path} already exists (two audits in the same millisecond).`);
  writeFileAtomic(path, lines.join('\n'), { root: wikiRoot });
  return { file, path, targetId, severity, filedAt, status: 'open', anchor, ...(req.sessionId ? { sessionId: req.sessionId } : {}), ...(req.explorationId ? { explorationId: req.explorationId } : {}) };
}

/** An audit file, or why it is not one (unreadable, or no target): listAudits names those instead of passing over them. */
function readAudit(path: string, file: string): AuditRecord | UnreadableAudit {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { file, path, reason: `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  return auditOf(text, path, file) ?? { file, path, reason: noTarget(text) };
}

/** An `.md` file in an audit folder that is no audit Maestro can act on, and why. */
export interface UnreadableAudit {
  file: string;
  path: string;
  reason: string;
}

/** The audit a file's text holds; null when its frontmatter names no target (`target_id`, a string). */
function auditOf(text: string, path: string, file: string): AuditRecord | null {
  const doc = parseFrontmatter(text, { dialect: 'wiki' });
  const d = doc.data;
  if (typeof d.target_id !== 'string') return null;
  const anchor = /##\s+Anchor\s*\n+([\s\S]*?)(\n##\s|\n#\s|$)/.exec(doc.body)?.[1]?.trim() ?? '';
  return {
    file,
    path,
    targetId: d.target_id,
    severity: (SEVERITIES as readonly string[]).includes(String(d.severity)) ? (d.severity as Severity) : 'medium',
    filedAt: typeof d.filed_at === 'string' ? d.filed_at : '',
    status: d.status === 'resolved' ? 'resolved' : 'open',
    anchor,
    ...(typeof d.session_id === 'string' ? { sessionId: d.session_id } : {}),
    ...(typeof d.exploration_id === 'string' ? { explorationId: d.exploration_id } : {}),
    ...(typeof d.resolved_at === 'string' ? { resolvedAt: d.resolved_at } : {}),
  };
}

const RANK: Record<Severity, number> = { high: 0, medium: 1, low: 2 };

export function listAudits(wikiRoot: string): { open: AuditRecord[]; resolved: AuditRecord[]; unreadable: UnreadableAudit[] } {
  const layout = wikiLayout(wikiRoot);
  const unreadable: UnreadableAudit[] = [];
  const read = (dir: string): AuditRecord[] => {
    if (!existsSync(dir)) return [];
    const audits: AuditRecord[] = [];
    for (const f of readdirSync(dir).filter((name) => name.endsWith('.md')).sort()) {
      const a = readAudit(join(dir, f), f);
      if ('reason' in a) unreadable.push(a);
      else audits.push(a);
    }
    return audits;
  };
  const open = read(layout.audit)
    .filter((a) => a.status === 'open')
    .sort((a, b) => RANK[a.severity] - RANK[b.severity] || a.filedAt.localeCompare(b.filedAt));
  const resolved = read(layout.auditResolved).sort((a, b) => (a.resolvedAt ?? '').localeCompare(b.resolvedAt ?? ''));
  return { open, resolved, unreadable };
}

/** Why an audit's text names no target, in words for its message. */
function noTarget(text: string): string {
  if (!hasFrontmatter(text)) return 'it has no frontmatter, so no target_id (the id of the wiki entry it audits)';
  const id = parseFrontmatter(text, { dialect: 'wiki' }).data.target_id;
  if (id === undefined) return 'its frontmatter has no target_id (the id of the wiki entry it audits)';
  return `its target_id must be a string, the id of the wiki entry it audits (found ${JSON.stringify(id).slice(0, 80)})`;
}

/** Moves an open audit to audit/resolved/ with `status: resolved`, `resolved_at`, and a `# Resolution` line. */
export function resolveAudit(wikiRoot: string, file: string, note: string | undefined, now: Date): AuditRecord {
  const layout = wikiLayout(wikiRoot);
  const path = join(layout.audit, file);
  if (!existsSync(path)) throw new MaestroError('BAD_INPUT', `No open audit ${path}.`);
  const text = readFileSync(path, 'utf8');
  // Before anything is written: a block never closed (a hand edit) would get a second one on top.
  assertFrontmatterClosed(text, path, 'audit');
  // Nor is one resolved that does not say what it audits: it would get a block of its own, and no target to log.
  if (!auditOf(text, path, file)) throw new MaestroError('CORRUPT_FILE', `Cannot resolve audit ${path}: ${noTarget(text)}. Fix or remove the file by hand; nothing was written.`, { details: { file: path } });
  const iso = now.toISOString();
  // As GUI-Anything resolves: status rewritten in place (bare), else added after the opening ---;
  // resolved_at and # Resolution added once. A quoted `status: "open"` is rewritten the same way, never duplicated.
  let out = setFrontmatterLine(text, 'status', 'resolved', 'start');
  if (parseFrontmatter(out, { dialect: 'wiki' }).data.resolved_at === undefined) out = setFrontmatterLine(out, 'resolved_at', `"${iso}"`, 'start');
  if (!/^# Resolution/m.test(out)) out = `${out.trimEnd()}\n\n# Resolution\n\n${iso.slice(0, 10)} · ${note?.trim() || 'accepted via wiki-maintain'}\n`;
  mkdirSync(layout.auditResolved, { recursive: true });
  const dest = join(layout.auditResolved, file);
  // The resolved copy is durable (fsync + rename) before the open one is removed.
  writeFileAtomic(dest, out, { root: wikiRoot });
  rmSync(path, { force: true });
  return auditOf(out, dest, file)!; // its target_id was read above; the lines set here leave it as it was
}
