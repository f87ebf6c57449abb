/** Reading a reviewer's answer: a ```json block with {verdict: approve|reject, findings[]}. */
import { z } from 'zod';
import { REPO_PATH_MAX } from '../../core/textRules.js';
import { fencedBlocks } from './fencedBlocks.js';
import { problemList } from './answerProblems.js';

export interface Finding {
  severity: 'low' | 'medium' | 'high' | 'critical';
  file?: string;
  line?: number;
  message: string;
}

export interface Verdict {
  verdict: 'approve' | 'reject';
  findings: Finding[];
  /** The reviewer's own words: the JSON's `summary`, else the text before the block (for the person at the gate). */
  summary?: string;
}

/**
 * The most findings one review keeps. They are stored on the task (its result and the executor's feedback, each
 * read with every task) and quoted whole in the next executing prompt: a reviewer's answer of any size was kept
 * twice. A review with more than this many things that must be fixed is to be said in fewer findings.
 */
export const MAX_FINDINGS = 200;

const verdictSchema = z.object({
  verdict: z.enum(['approve', 'reject']),
  summary: z.string().max(4000).optional(),
  findings: z.array(z.object({
    severity: z.enum(['low', 'medium', 'high', 'critical']).default('medium'),
    file: z.string().max(REPO_PATH_MAX).optional(),
    line: z.number().int().optional(),
    message: z.string().min(1).max(10_000),
  })).max(MAX_FINDINGS, `at most ${MAX_FINDINGS} findings: group the rest, or name the most important`).default([]),
});

export class VerdictParseError extends Error {}

export function parseVerdict(text: string): Verdict {
  const matches = fencedBlocks(text);
  const blocks = matches.map((m) => m[1]!);
  const candidate = blocks.length ? blocks[blocks.length - 1]! : text.trim();
  let raw: unknown;
  try {
    raw = JSON.parse(candidate);
  } catch (err) {
    throw new VerdictParseError(`no valid JSON verdict: ${(err as Error).message}; answer with a \`\`\`json block {"verdict": "approve"|"reject", "findings": [...]}`);
  }
  const parsed = verdictSchema.safeParse(raw);
  if (!parsed.success) throw new VerdictParseError(problemList(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)));
  const v = parsed.data;
  const prose = matches.length ? text.slice(0, matches[matches.length - 1]!.index).trim() : '';
  const summary = (v.summary ?? prose).trim().slice(-1000);
  return { verdict: v.verdict, ...(summary ? { summary } : {}), findings: v.findings.map((f) => ({ severity: f.severity, message: f.message, ...(f.file ? { file: f.file } : {}), ...(f.line ? { line: f.line } : {}) })) };
}

export function formatFindings(findings: Array<Finding & { reviewer?: string }>): string {
  return findings.map((f) => `- [${f.severity}${f.reviewer ? `, ${f.reviewer}` : ''}] ${f.file ? `${f.file}${f.line ? `:${f.line}` : ''}: ` : ''}${f.message}`).join('\n');
}
