/**
 * `report.md` frontmatter (FORMATS §3.4): accepted decisions and locked
 * constraints become candidate drafts. Headings are informational only.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { MaestroError } from '../../../core/errors.js';
import { parseFrontmatter } from '../../format/frontmatter.js';
import { candidateId } from '../ledger/recipes.js';
import type { StageInput } from '../ledger/ledger.js';
import { MAX_REPORT_BYTES } from '../agentReport.js';

export interface ReportItem {
  id: string;
  text: string;
  status: string;
}

export interface Report {
  verdict: 'ready' | 'ready_with_concerns' | 'blocked' | 'failed';
  summary: string;
  decisions: ReportItem[];
  constraints: ReportItem[];
  concerns: string[];
}

const VERDICT_ALIASES: Record<string, Report['verdict']> = {
  ready: 'ready',
  done: 'ready',
  ready_with_concerns: 'ready_with_concerns',
  'done-with-concerns': 'ready_with_concerns',
  done_with_concerns: 'ready_with_concerns',
  blocked: 'blocked',
  failed: 'failed',
  'needs-retry': 'failed',
};

export const REPORT_TEMPLATE = `---
verdict: ready
summary: ""
decisions: []
constraints: []
concerns: []
next: []
details: {}
---

## 摘要

## 结论/Verdict

## 讨论/复盘

## 产物

## 交接/Next
`;

function items(raw: unknown, prefix: 'D' | 'C', defaultStatus: string, statuses: string[], file: string): ReportItem[] {
  if (raw == null) return [];
  if (!Array.isArray(raw)) throw new MaestroError('CORRUPT_FILE', `${file}: frontmatter ${prefix === 'D' ? 'decisions' : 'constraints'} must be a list.`);
  return raw.map((x, i) => {
    const id = `${prefix}-${String(i + 1).padStart(3, '0')}`;
    if (typeof x === 'string') return { id, text: x, status: defaultStatus };
    if (x && typeof x === 'object') {
      const o = x as Record<string, unknown>;
      if (typeof o.text === 'string') return { id: typeof o.id === 'string' ? o.id : id, text: o.text, status: typeof o.status === 'string' ? o.status : defaultStatus };
      for (const s of statuses) if (typeof o[s] === 'string') return { id, text: o[s] as string, status: s };
    }
    return { id, text: '', status: defaultStatus };
  });
}

/** The most a report.md may be (defined beside the move, which the executor imports dependency-free). */
export { MAX_REPORT_BYTES };

/** A run's report.md, read and parsed; null when there is none. One larger than MAX_REPORT_BYTES is CORRUPT_FILE, unread. */
export function readReportFile(file: string): Report | null {
  if (!existsSync(file)) return null;
  const size = statSync(file).size;
  if (size > MAX_REPORT_BYTES) throw new MaestroError('CORRUPT_FILE', `${file}: ${size} bytes, more than a report may be (${MAX_REPORT_BYTES}); it was not read.`, { details: { file } });
  return parseReport(readFileSync(file, 'utf8'), file);
}

let templateReport: Readonly<Report> | undefined;

export function parseReport(text: string, file = 'report.md'): Report {
  // The template every run starts with, parsed once (on first use: parsing it loads the yaml package, which a
  // process that reads no report does not need): most runs leave it as it is, and a review reads every run's report.
  if (text === REPORT_TEMPLATE) return structuredClone((templateReport ??= parseReportText(REPORT_TEMPLATE, 'report.md')));
  return parseReportText(text, file);
}

function parseReportText(text: string, file: string): Report {
  // Full YAML, as maestro-flow reads it; the one frontmatter reader finds the block.
  const doc = parseFrontmatter(text, { dialect: 'yaml' });
  const problem = doc.problems[0];
  if (problem) throw new MaestroError('CORRUPT_FILE', `${file}:${problem.line}: ${problem.message}.`, { details: { file, line: problem.line } });
  const fm: Record<string, unknown> = doc.data;
  const v = typeof fm.verdict === 'string' ? VERDICT_ALIASES[fm.verdict.trim().toLowerCase()] : 'ready';
  return {
    verdict: v ?? 'ready',
    summary: typeof fm.summary === 'string' ? fm.summary : '',
    decisions: items(fm.decisions, 'D', 'proposed', ['accepted', 'proposed', 'rejected'], file),
    constraints: items(fm.constraints, 'C', 'open', ['locked', 'open', 'deferred'], file),
    concerns: Array.isArray(fm.concerns) ? fm.concerns.filter((c): c is string => typeof c === 'string') : [],
  };
}

export interface Draft extends StageInput {
  candidate_id: string;
}

/** Accepted decisions + locked constraints as staged candidates (FORMATS §4.1: v3 0-based evidence index). */
export function reportDrafts(report: Report, runId: string): Draft[] {
  const out: Draft[] = [];
  const add = (kind: 'decision' | 'constraint', list: ReportItem[], want: string) =>
    list.forEach((it, i) => {
      const content = it.text.trim();
      if (it.status !== want || !content) return;
      out.push({ candidate_id: candidateId('spec', content), target: 'spec', action: 'propose', title: content.slice(0, 120), content, category: 'arch', source_kind: kind, evidence_refs: [`run:${runId}`, `report.md#${kind}:${i}`] });
    });
  add('decision', report.decisions, 'accepted');
  add('constraint', report.constraints, 'locked');
  return out;
}
