/**
 * `maestro spec health`: parse problems (file and line) plus the lifecycle
 * findings of FORMATS §1.7 — a sid carried by more than one entry, dangling
 * supersedes / superseded-by, cycles, and contested entries whose conflict is
 * older than 30 days.
 */
import { readFileSync } from 'node:fs';
import type { KnowledgeEntry } from './entry.js';
import { parseSpecText, type Finding } from './specParser.js';

const DAY = 86_400_000;

/**
 * Spec entries of one corpus (the root's own, or one linked workspace) that carry the same sid: the sid
 * anchors the evolution chain, and `load --id <sid>` or a write addressed by it could only pick one.
 * One finding per entry, each naming the others.
 */
export function duplicateSids(entries: KnowledgeEntry[]): Finding[] {
  const groups = new Map<string, KnowledgeEntry[]>();
  for (const e of entries) {
    if (e.kind !== 'spec' || !e.sid) continue;
    const key = `${e.workspace ?? ''}\u0000${e.sid}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const out: Finding[] = [];
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    group.sort((a, b) => a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0));
    const place = (e: KnowledgeEntry) => `${e.file}:${e.line ?? 1}`;
    for (const e of group) {
      const others = group.filter((o) => o !== e).map(place).join(', ');
      out.push({ file: e.file, line: e.line ?? 1, severity: 'error', code: 'duplicate-sid', message: `${e.id} carries sid "${e.sid}", as does ${others}: load and the writers cannot tell them apart; give all but one a new sid` });
    }
  }
  return out;
}

export function lifecycleFindings(entries: KnowledgeEntry[], now: number = Date.now()): Finding[] {
  const out: Finding[] = duplicateSids(entries);
  const byRef = new Map<string, KnowledgeEntry>();
  for (const e of entries) {
    byRef.set(e.id, e);
    for (const a of e.aliases) if (!byRef.has(a)) byRef.set(a, e);
  }
  for (const e of entries) {
    for (const ref of e.supersedes) {
      if (!byRef.has(ref)) out.push({ file: e.file, line: e.line ?? 1, severity: 'error', code: 'dangling-supersedes', message: `${e.id} supersedes "${ref}", which does not exist` });
    }
    if (e.supersededBy && !byRef.has(e.supersededBy)) out.push({ file: e.file, line: e.line ?? 1, severity: 'error', code: 'dangling-superseded-by', message: `${e.id} is superseded by "${e.supersededBy}", which does not exist` });
  }
  // Cycles along supersedes.
  const state = new Map<string, 1 | 2>();
  const visit = (e: KnowledgeEntry, path: string[]): void => {
    state.set(e.id, 1);
    for (const ref of e.supersedes) {
      const next = byRef.get(ref);
      if (!next) continue;
      if (state.get(next.id) === 1) out.push({ file: e.file, line: e.line ?? 1, severity: 'error', code: 'supersession-cycle', message: `supersession cycle: ${[...path, e.id, next.id].join(' → ')}` });
      else if (!state.has(next.id)) visit(next, [...path, e.id]);
    }
    state.set(e.id, 2);
  };
  for (const e of entries) if (!state.has(e.id)) visit(e, []);
  return out;
}

/** Contested spec entries with a conflict-date older than 30 days (read from the tag attributes). */
export function staleConflicts(files: string[], now: number = Date.now()): Finding[] {
  const out: Finding[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const e of parseSpecText(text, file).entries) {
      const date = e.attrs['conflict-date'];
      if (e.confidence !== 'contested' || !date) continue;
      const t = Date.parse(date);
      if (Number.isFinite(t) && now - t > 30 * DAY) out.push({ file, line: e.lineStart, severity: 'warning', code: 'stale-conflict', message: `entry ${e.ordinal} (${e.title}) has been contested since ${date}` });
    }
  }
  return out;
}
